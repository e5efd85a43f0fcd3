"""stoker's decoders against DALI 2.4's CPU decoders on the same bytes (skipped without DALI).

Run with a Python that has nvidia-dali and stoker, e.g. /work/bench-venv/bin/python -m pytest
tests/dali/test_decoders_vs_dali.py. Measured: JPEG RGB/BGR identical; GRAY and YCbCr
within 1 level; PNG/BMP/TIFF/WebP identical.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")
Image = pytest.importorskip("PIL.Image")

from nvidia.dali import fn as dfn  # noqa: E402
from nvidia.dali import pipeline_def as dali_pipeline_def  # noqa: E402
from nvidia.dali import types as dtypes  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402


def _photo(h: int, w: int, seed: int) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(xx * 3) % 256, (yy * 4) % 256, ((xx + yy) * 2) % 256], -1)
    return np.clip(img + np.random.default_rng(seed).integers(-25, 25, img.shape), 0, 255
                   ).astype(np.uint8)


def _enc(img: np.ndarray, fmt: str, **opts) -> np.ndarray:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, fmt, **opts)
    return np.frombuffer(buf.getvalue(), np.uint8)


IMAGES = [_enc(_photo(61, 83, 0), "JPEG", quality=90),
          _enc(_photo(120, 97, 1), "JPEG", quality=90, subsampling="4:4:4"),
          _enc(_photo(77, 130, 2), "JPEG", quality=85, progressive=True),
          _enc(_photo(40, 50, 3), "PNG"), _enc(_photo(33, 47, 4), "BMP"),
          _enc(_photo(52, 41, 5), "TIFF"), _enc(_photo(45, 60, 6), "WEBP", lossless=True)]


def _dali(build):
    @dali_pipeline_def(batch_size=len(IMAGES), num_threads=1, device_id=None)
    def pipe():
        return build(dfn.external_source(source=lambda: IMAGES, batch=True))

    p = pipe()
    p.build()
    return [np.array(t) for t in p.run()[0]]


def _ours(build):
    @pipeline_def(batch_size=len(IMAGES), num_threads=1, device_id=None)
    def pipe():
        return build(fn.external_source(source=lambda: IMAGES))

    p = pipe()
    p.build()
    return [np.asarray(t) for t in p.run()[0]]


@pytest.mark.parametrize("output_type", ["RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"])
def test_decoders_image_matches_dali(output_type):
    theirs = _dali(lambda x: dfn.decoders.image(x, output_type=getattr(dtypes, output_type)))
    ours = _ours(lambda x: fn.decoders.image(x, output_type=getattr(types, output_type)))
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        diff = np.abs(a.astype(int) - b.astype(int))
        assert diff.max() <= 1 and diff.mean() < 0.05


def test_image_crop_and_slice_windows_match_dali():
    pairs = [
        (lambda x: dfn.decoders.image_crop(x, crop=(20.7, 30.2), crop_pos_x=0.3,
                                           crop_pos_y=0.8),
         lambda x: fn.decoders.image_crop(x, crop=(20.7, 30.2), crop_pos_x=0.3,
                                          crop_pos_y=0.8)),
        (lambda x: dfn.decoders.image_slice(x, rel_start=[0.106, 0.2], rel_shape=[0.5, 0.4]),
         lambda x: fn.decoders.image_slice(x, rel_start=[0.106, 0.2], rel_shape=[0.5, 0.4])),
    ]
    for theirs_fn, ours_fn in pairs:
        for a, b in zip(_ours(ours_fn), _dali(theirs_fn), strict=True):
            assert a.shape == b.shape
            assert np.abs(a.astype(int) - b.astype(int)).max() <= 1


def test_peek_image_shape_matches_dali():
    theirs = _dali(lambda x: dfn.peek_image_shape(x))
    ours = _ours(lambda x: fn.peek_image_shape(x))
    assert [a.tolist() for a in ours] == [b.tolist() for b in theirs]
