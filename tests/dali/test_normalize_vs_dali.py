"""crop_mirror_normalize's arithmetic and the fused ImageNet validation chain against DALI 2.4.

Skipped unless nvidia.dali is importable; run with
``/work/bench-venv/bin/python -m pytest tests/dali/test_normalize_vs_dali.py``.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")
Image = pytest.importorskip("PIL.Image")

import stoker  # noqa: E402

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def _run(lib, body, batch):
    @lib.pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=3)
    def pipe():
        return body(lib.fn, lib.types)

    p = pipe()
    p.build()
    return [np.array(s) for s in p.run()[0]]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_normalized_values_equal_dalis_bit_for_bit(dtype):
    # Every uint8 level in every channel (and the same as float32 images), CHW and mirrored.
    levels = np.tile(np.arange(256, dtype=dtype)[:, None, None], (1, 4, 3))
    images = [levels, levels[::-1].copy()]

    def body(fn, types):
        x = fn.external_source(source=lambda: images, layout="HWC")
        return fn.crop_mirror_normalize(x, mean=MEAN, std=STD, dtype=types.FLOAT, mirror=1)

    for ours, theirs in zip(_run(stoker, body, 2), _run(dali, body, 2), strict=True):
        np.testing.assert_array_equal(ours, theirs)


def _jpegs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = []
    for h, w in [(300, 420), (375, 500), (500, 333), (260, 260)]:
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.stack([(xx * 2 + yy) % 256, (yy * 3) % 256, (xx + 2 * yy) % 256], -1)
        img = np.clip(img + rng.integers(-20, 20, img.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, "JPEG", quality=90)
        out.append(np.frombuffer(buf.getvalue(), np.uint8))
    return out


def test_fused_validation_chain_matches_dali():
    # decoders.image -> resize(resize_shorter=256) -> crop_mirror_normalize(crop=224): one
    # fused operator in stoker (region decode, resampling straight into CHW floats).
    data = _jpegs()

    def body(fn, types):
        images = fn.decoders.image(fn.external_source(source=lambda: data), device="cpu")
        images = fn.resize(images, resize_shorter=256)
        return fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                        output_layout="CHW", mean=MEAN, std=STD)

    std = np.array(STD)[:, None, None]
    for ours, theirs in zip(_run(stoker, body, 4), _run(dali, body, 4), strict=True):
        assert ours.shape == theirs.shape == (3, 224, 224) and ours.dtype == theirs.dtype
        levels = np.abs(ours.astype(np.float64) - theirs) * std  # in 0..255 levels
        assert levels.mean() <= 0.05 and levels.max() <= 1.0 + 1e-3
