"""crop, flip and crop_mirror_normalize against numpy references and DALI's documented rules.

Anchor rule (DALI): anchor = round(crop_pos * (extent - crop)), half rounding up;
'truncate' drops the fraction. Output = (x - mean) / std * scale + shift.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_pipeline

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(0)


def _run(build, batch_size, threads=2):
    return run_pipeline(build, batch_size=batch_size, threads=threads)


def _images(shapes, dtype=np.uint8):
    if np.dtype(dtype).kind == "f":
        return [RNG.random(s).astype(dtype) * 255 for s in shapes]
    return [RNG.integers(0, 256, s, dtype=dtype) for s in shapes]


def _anchor(pos, extent, crop, rounding="round"):
    # DALI: a float32 position, the product exact, rounded half away from zero
    start = float(np.float32(pos)) * (extent - crop)
    return int(np.trunc(start)) if rounding == "truncate" else \
        int(np.copysign(np.floor(abs(start) + 0.5), start))


def _ref_window(img, ch, cw, py, px, fill, rounding="round"):
    h, w = img.shape[:2]
    ay, ax = _anchor(py, h, ch, rounding), _anchor(px, w, cw, rounding)
    out = np.empty((ch, cw, img.shape[2]), np.float64)
    out[...] = np.asarray(fill, np.float64)
    ys, xs = slice(max(ay, 0), min(ay + ch, h)), slice(max(ax, 0), min(ax + cw, w))
    out[ys.start - ay:ys.stop - ay, xs.start - ax:xs.stop - ax] = img[ys, xs]
    return out


@pytest.mark.parametrize("shapes", [[(20, 30, 3)] * 4, [(20, 30, 3), (25, 17, 3), (40, 40, 3)]])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_crop_mirror_normalize_matches_numpy(shapes, dtype):
    imgs = _images(shapes, dtype)
    pos = [(0.0, 1.0), (0.3, 0.7), (1.0, 0.0), (0.5, 0.5)][:len(shapes)]
    mirror = [1, 0, 1, 0][:len(shapes)]
    mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        py = fn.external_source(source=lambda: [np.float32(p[0]) for p in pos])
        px = fn.external_source(source=lambda: [np.float32(p[1]) for p in pos])
        m = fn.external_source(source=lambda: [np.int32(v) for v in mirror])
        return fn.crop_mirror_normalize(x, crop=(12, 16), crop_pos_y=py, crop_pos_x=px, mirror=m,
                                        mean=mean, std=std, scale=2.0, shift=1.0)

    (out,) = _run(build, len(imgs))
    assert out.layout() == "CHW" and out.dtype == types.FLOAT
    for i, img in enumerate(imgs):
        win = _ref_window(img, 12, 16, np.float32(pos[i][0]), np.float32(pos[i][1]), 0)
        if mirror[i]:
            win = win[:, ::-1]
        ref = ((win - mean) / std * 2.0 + 1.0).transpose(2, 0, 1)
        np.testing.assert_allclose(out.at(i), ref, rtol=1e-5, atol=1e-4)


def test_crop_mirror_normalize_pads_with_fill_values_in_output_space():
    imgs = _images([(10, 10, 3)] * 2)

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop_mirror_normalize(x, crop=(14, 12), crop_pos_x=0.0, crop_pos_y=1.0,
                                        out_of_bounds_policy="pad", fill_values=[5.0, 6.0, 7.0],
                                        mean=[100.0], std=[50.0], output_layout="HWC")

    (out,) = _run(build, 2)
    for i, img in enumerate(imgs):
        ref = (_ref_window(img, 14, 12, 1.0, 0.0, np.nan) - 100.0) / 50.0
        ref = np.where(np.isnan(ref), np.array([5.0, 6.0, 7.0]), ref)
        np.testing.assert_allclose(out.at(i), ref, rtol=1e-6)


@pytest.mark.parametrize("dtype,np_type", [(types.FLOAT16, np.float16), (types.UINT8, np.uint8),
                                           (types.INT8, np.int8)])
def test_crop_mirror_normalize_converts_to_dtype_with_rounding_and_saturation(dtype, np_type):
    imgs = _images([(8, 8, 3)] * 2)

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop_mirror_normalize(x, mean=[0.0], std=[0.5], dtype=dtype)

    (out,) = _run(build, 2)
    assert out.as_array().dtype == np_type
    ref = imgs[0].astype(np.float64).transpose(2, 0, 1) * 2.0
    if np.dtype(np_type).kind in "iu":
        info = np.iinfo(np_type)
        ref = np.clip(np.rint(ref), info.min, info.max)
    np.testing.assert_allclose(out.at(0).astype(np.float64), ref, rtol=1e-3)


def test_crop_mirror_normalize_window_outside_image_names_the_policy():
    imgs = _images([(10, 10, 3)])

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop_mirror_normalize(x, crop=(12, 12))

    with pytest.raises(SampleError, match="out_of_bounds_policy='pad'"):
        _run(build, 1)


def test_crop_mirror_normalize_reads_chw_input_and_pads_output_channels():
    imgs = [im.transpose(2, 0, 1).copy() for im in _images([(6, 7, 3)] * 2)]

    def build():
        x = fn.external_source(source=lambda: imgs, layout="CHW")
        return fn.crop_mirror_normalize(x, output_layout="HWC", pad_output=True)

    (out,) = _run(build, 2)
    assert out.layout() == "HWC" and out.at(0).shape == (6, 7, 4)
    np.testing.assert_array_equal(out.at(1)[..., :3], imgs[1].transpose(1, 2, 0))
    assert (out.at(1)[..., 3] == 0).all()


def test_crop_rounding_truncate_moves_the_anchor_down():
    imgs = _images([(11, 11, 1)])

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return (fn.crop(x, crop=(4, 4), crop_pos_x=0.5, crop_pos_y=0.5),
                fn.crop(x, crop=(4, 4), crop_pos_x=0.5, crop_pos_y=0.5, rounding="truncate"))

    rounded, truncated = _run(build, 1)
    np.testing.assert_array_equal(rounded.at(0), imgs[0][4:8, 4:8])  # 3.5 rounds to 4
    np.testing.assert_array_equal(truncated.at(0), imgs[0][3:7, 3:7])


def test_crop_keeps_dtype_and_pads_with_fill_values():
    imgs = _images([(5, 5, 3)] * 2, np.float32)

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop(x, crop=(9, 9), out_of_bounds_policy="pad", fill_values=[-1.0])

    (out,) = _run(build, 2)
    assert out.as_array().dtype == np.float32
    np.testing.assert_array_equal(out.at(0), _ref_window(imgs[0], 9, 9, 0.5, 0.5, -1.0))


def test_crop_trim_to_shape_clips_the_window():
    imgs = _images([(5, 6, 3)])

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop(x, crop=(8, 4), crop_pos_y=0.0, out_of_bounds_policy="trim_to_shape")

    (out,) = _run(build, 1)
    np.testing.assert_array_equal(out.at(0), imgs[0][0:5, 1:5])


def test_crop_of_hw_sequences_crops_every_frame_alike():
    seq = [RNG.integers(0, 256, (3, 8, 9, 3), dtype=np.uint8)]

    def build():
        x = fn.external_source(source=lambda: seq, layout="FHWC")
        return fn.crop(x, crop=(4, 4), crop_pos_x=0.0, crop_pos_y=0.0)

    (out,) = _run(build, 1)
    assert out.layout() == "FHWC"
    np.testing.assert_array_equal(out.at(0), seq[0][:, 0:4, 0:4])


def test_flip_per_sample_matches_numpy():
    imgs = _images([(4, 5, 3), (4, 5, 3), (6, 2, 3)])

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        h = fn.external_source(source=lambda: [np.int32(1), np.int32(0), np.int32(1)])
        return fn.flip(x, horizontal=h, vertical=1)

    (out,) = _run(build, 3)
    for i, flip_h in enumerate([1, 0, 1]):
        ref = imgs[i][::-1]
        if flip_h:
            ref = ref[:, ::-1]
        np.testing.assert_array_equal(out.at(i), ref)


def test_crop_mirror_normalize_refuses_zero_std_at_the_call():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: _images([(4, 4, 3)]), layout="HWC")
        return fn.crop_mirror_normalize(x, std=[1.0, 0.0, 1.0])

    with pytest.raises(ArgumentError, match="'std' must not contain 0"):
        pipe()


def test_deprecated_output_dtype_still_works():
    imgs = _images([(4, 4, 3)])

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop_mirror_normalize(x, output_dtype=types.FLOAT16, image_type=types.RGB)

    (out,) = _run(build, 1)
    assert out.dtype == types.FLOAT16


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
def test_float16_output_is_the_float32_output_rounded(layout):
    """uint8 images to FLOAT16: each value the float32 output rounded to the nearest
    float16 (numpy's astype), padding and mirroring included."""
    imgs = _images([(20, 30, 3), (25, 17, 3), (40, 40, 3)])

    def build(dtype):
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            return fn.crop_mirror_normalize(
                x, crop=(24, 20), crop_pos_x=0.8, mirror=fn.random.coin_flip(seed=5),
                mean=[125.3, 122.9, 113.8], std=[51.5, 50.8, 51.2], dtype=dtype,
                output_layout=layout, out_of_bounds_policy="pad", fill_values=[7.0, -3.0, 0.5],
                seed=9)
        return pipe

    (half,) = _run(build(types.FLOAT16), len(imgs))
    (full,) = _run(build(types.FLOAT), len(imgs))
    for h, f in zip(half, full, strict=True):
        h, f = np.asarray(h), np.asarray(f)
        assert h.dtype == np.float16 and f.dtype == np.float32
        np.testing.assert_array_equal(h.view(np.uint16), f.astype(np.float16).view(np.uint16))
