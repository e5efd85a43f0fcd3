"""Image-chain fusion (operators/image/fusion.py): decode -> resize / random_resized_crop ->
crop_mirror_normalize run as one operator, with the unfused chain's results and draws."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from helpers import photo as _photo
from PIL import Image

import stoker.graph.fuse as fuse
import stoker.operators.image.decode_resize as decode_resize
from stoker import fn, pipeline_def, types
from stoker.cli.pipelines import MEAN, STD


def _jpeg(img: np.ndarray, quality: int = 90) -> np.ndarray:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", quality=quality)
    return np.frombuffer(buf.getvalue(), np.uint8)


# Sizes around and below the 224 output (no DCT scaling: the window never shrinks 2x).
SHAPES = [(300, 280), (180, 260), (333, 250), (120, 160), (260, 390), (240, 240)]
JPEGS = [_jpeg(_photo(h, w, k)) for k, (h, w) in enumerate(SHAPES)]
IMAGES = [_photo(h, w, 10 + k) for k, (h, w) in enumerate(SHAPES)]


BATCH = len(SHAPES)


def _build(body, batch=BATCH, threads=2, seed=5):
    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return body()

    p = pipe()
    p.build()
    return p


def _ops(p) -> list[str]:
    return [op.schema.name for op in p._plan.ops]


def _fused_and_plain(body, monkeypatch, batches=2, **kw):
    """Outputs (per batch, per output, per sample) of the fused and the unfused graph."""
    fused = _build(body, **kw)
    with monkeypatch.context() as m:
        m.setattr(fuse, "ENABLED", False)
        plain = _build(body, **kw)

    def run(p):
        return [[[np.array(s) for s in tl] for tl in p.run()] for _ in range(batches)]

    return fused, plain, run(fused), run(plain)


def _assert_identical(a, b):
    for batch_a, batch_b in zip(a, b, strict=True):
        for out_a, out_b in zip(batch_a, batch_b, strict=True):
            for x, y in zip(out_a, out_b, strict=True):
                assert x.dtype == y.dtype and x.shape == y.shape
                np.testing.assert_array_equal(x, y)


def _encoded():
    return fn.external_source(source=lambda: JPEGS)


def _train():  # DALI's ResNet-50 training pipeline
    images = fn.decoders.image_random_crop(_encoded(), device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_x=224, resize_y=224)
    return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN,
                                    std=STD, mirror=fn.random.coin_flip())


def _train_rrc():
    images = fn.decoders.image(_encoded(), device="cpu", output_type=types.RGB)
    images = fn.random_resized_crop(images, size=224)
    return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN,
                                    std=STD, mirror=fn.random.coin_flip())


def _val():
    images = fn.decoders.image(_encoded(), device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=256)
    return fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                    output_layout="CHW", mean=MEAN, std=STD)


@pytest.mark.parametrize("body", [_train, _train_rrc, _val], ids=["train", "rrc", "val"])
def test_decode_resize_normalize_equals_unfused_bit_for_bit(body, monkeypatch):
    monkeypatch.setattr(decode_resize, "DCT_SCALING", False)
    fused, plain, a, b = _fused_and_plain(body, monkeypatch)
    assert "_decode_resize" in _ops(fused)
    assert "crop_mirror_normalize" in _ops(plain) and "_decode_resize" not in _ops(plain)
    _assert_identical(a, b)


def test_random_windows_and_mirrors_do_not_change_with_fusion(monkeypatch):
    monkeypatch.setattr(decode_resize, "DCT_SCALING", False)

    def body():
        return _train(), fn.random.coin_flip()  # a later op: its seed must not move either

    fused, plain, a, b = _fused_and_plain(body, monkeypatch, batches=3)
    _assert_identical(a, b)
    fused_op = next(op for op in fused._plan.ops if op.schema.name == "_decode_resize")
    decoder = fused_op.args["_seed_from"]
    assert decoder.schema.name == "decoders.image_random_crop"
    plain_decoder = next(op for op in plain._plan.ops
                         if op.schema.name == "decoders.image_random_crop")
    assert fused._plan.seeds[fused_op] == plain._plan.seeds[plain_decoder]


def test_thread_count_and_batch_size_do_not_change_fused_results(monkeypatch):
    one = _build(_train, threads=1)
    three = _build(_train, threads=3)
    np.testing.assert_array_equal(one.run()[0].as_array(), three.run()[0].as_array())


def test_decode_resize_without_normalize_equals_unfused(monkeypatch):
    monkeypatch.setattr(decode_resize, "DCT_SCALING", False)

    def body():
        images = fn.decoders.image(_encoded())
        return fn.resize(images, resize_shorter=200, interp_type=types.INTERP_CUBIC)

    fused, _, a, b = _fused_and_plain(body, monkeypatch)
    assert _ops(fused)[-1] == "_decode_resize"
    _assert_identical(a, b)


def test_dct_scaled_decode_stays_within_the_decoders_tolerance(monkeypatch):
    # 1/4-scale decodes: a 900x1200 photo-like JPEG resized to 224 (4x smaller).
    big = cv2.resize(_photo(240, 320, 3), (1200, 900), interpolation=cv2.INTER_CUBIC)
    data = [_jpeg(big, 92)]

    def body():
        images = fn.decoders.image(fn.external_source(source=lambda: data))
        images = fn.resize(images, resize_shorter=224)
        return fn.crop_mirror_normalize(images, crop=(200, 200), dtype=types.FLOAT,
                                        mean=[0.0], std=[1.0], output_layout="HWC")

    fused, _, a, b = _fused_and_plain(body, monkeypatch, batch=1, batches=1)
    assert _ops(fused)[-1] == "_decode_resize"
    diff = np.abs(a[0][0][0].astype(np.float64) - b[0][0][0])  # in 0..255 levels
    assert diff.mean() < 2.0 and diff.max() <= 16


def _from_images(images=IMAGES, layout="HWC"):
    return fn.external_source(source=lambda: images, layout=layout)


@pytest.mark.parametrize("resize_args,cmn_args", [
    (dict(resize_shorter=100), dict(crop=(80, 90), crop_pos_x=0.2, crop_pos_y=0.9,
                                    output_layout="HWC", dtype=types.FLOAT16)),
    (dict(size=[120, 140], interp_type=types.INTERP_LANCZOS3), dict(mirror=1, scale=2.0,
                                                                      shift=3.0)),
    (dict(resize_x=64, resize_y=48, dtype=types.FLOAT), dict(crop=(40, 40), mean=[10.0],
                                                             std=[3.0])),
    (dict(resize_x=64, resize_y=48, interp_type=types.INTERP_NN), dict(dtype=types.INT8,
                                                                       mean=[128.0])),
    (dict(resize_shorter=64), dict(crop=(80, 80), out_of_bounds_policy="pad",
                                   fill_values=[7.0], pad_output=True)),
    (dict(resize_shorter=64), dict(crop=(70, 50), out_of_bounds_policy="trim_to_shape")),
], ids=["window-hwc-fp16", "lanczos-mirror-scale", "float-resize", "nn-int8", "pad",
        "trim"])
def test_resize_then_normalize_equals_unfused(resize_args, cmn_args, monkeypatch):
    def body():
        resized = fn.resize(_from_images(), **resize_args)
        return fn.crop_mirror_normalize(resized, **{"mean": MEAN, "std": STD, **cmn_args})

    fused, _, a, b = _fused_and_plain(body, monkeypatch)
    assert _ops(fused)[-1] == "_resize_normalize"
    _assert_identical(a, b)


def test_per_sample_window_mirror_mean_and_size_equal_unfused(monkeypatch):
    def body():
        size = fn.random.uniform(range=(60.0, 90.0))
        resized = fn.resize(_from_images(), resize_shorter=size)
        return fn.crop_mirror_normalize(
            resized, crop=(50, 50), crop_pos_x=fn.random.uniform(range=(0.0, 1.0)),
            crop_pos_y=fn.random.uniform(range=(0.0, 1.0)), mirror=fn.random.coin_flip(),
            mean=fn.random.uniform(range=(50.0, 150.0), shape=[3]), std=STD)

    fused, _, a, b = _fused_and_plain(body, monkeypatch, batches=3)
    assert _ops(fused)[-1] == "_resize_normalize"
    _assert_identical(a, b)


def test_random_resized_crop_then_normalize_equals_unfused(monkeypatch):
    def body():
        images = fn.random_resized_crop(_from_images(), size=[96, 128],
                                        random_area=[0.3, 1.0])
        return fn.crop_mirror_normalize(images, mean=MEAN, std=STD,
                                        mirror=fn.random.coin_flip())

    fused, _, a, b = _fused_and_plain(body, monkeypatch, batches=3)
    assert _ops(fused)[-1] == "_resize_normalize"
    _assert_identical(a, b)


def test_resized_image_used_elsewhere_is_not_fused():
    def body():
        resized = fn.resize(_from_images(), resize_shorter=64)
        return fn.crop_mirror_normalize(resized, crop=(32, 32)), resized

    assert _ops(_build(body))[-2:] == ["resize", "crop_mirror_normalize"]


def test_decoded_image_used_elsewhere_is_not_fused():
    def body():
        images = fn.decoders.image(_encoded())
        return fn.resize(images, resize_shorter=64), images

    assert "decoders.image" in _ops(_build(body))


def test_chw_input_and_saved_attributes_are_not_fused():
    chw = [np.ascontiguousarray(im.transpose(2, 0, 1)) for im in IMAGES]

    def chw_body():
        resized = fn.resize(_from_images(chw, "CHW"), resize_shorter=64)
        return fn.crop_mirror_normalize(resized, crop=(32, 32))

    def attrs_body():
        resized, attrs = fn.resize(_from_images(), resize_shorter=64, save_attrs=True)
        return fn.crop_mirror_normalize(resized, crop=(32, 32)), attrs

    assert "crop_mirror_normalize" in _ops(_build(chw_body))
    assert "crop_mirror_normalize" in _ops(_build(attrs_body))


def test_fused_decode_error_names_the_users_operators_and_file():
    bad = [np.frombuffer(b"\xff\xd8\xff\xe0 not a jpeg", np.uint8)]

    def body():
        images = fn.decoders.image(fn.external_source(source=lambda: bad))
        return fn.crop_mirror_normalize(fn.resize(images, resize_x=8, resize_y=8))

    p = _build(body, batch=1)
    with pytest.raises(Exception, match=r"fn\.decoders\.image -> fn\.resize -> "
                                        r"fn\.crop_mirror_normalize \(fused\)"):
        p.run()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.uint16])
def test_other_image_types_equal_unfused(dtype, monkeypatch):
    images = [(im.astype(np.float64) / 255).astype(dtype) if dtype != np.uint16 else
              im.astype(np.uint16) * 257 for im in IMAGES]

    def body():
        resized = fn.resize(_from_images(images), resize_shorter=50, dtype=types.FLOAT)
        return fn.crop_mirror_normalize(resized, crop=(40, 40), mean=[0.4], std=[0.25],
                                        mirror=fn.random.coin_flip())

    fused, _, a, b = _fused_and_plain(body, monkeypatch)
    assert _ops(fused)[-1] == "_resize_normalize"
    _assert_identical(a, b)
