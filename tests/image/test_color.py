"""Color operators against numpy/OpenCV references, hand-computed values and DALI's rules.

Rules (measured on DALI 2.4's CPU operators, see stoker/operators/image/color.py):
brightness/contrast compute ``shift * R + b * (center + c * (x - center))`` in float32, R being
the output type's max (1 for float), center defaulting to half the input type's range; integer
results round half away from zero and saturate. hue/saturation/hsv/color_twist are one
RGB matrix: to YIQ, rotate/scale I and Q, back with the exact inverse.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from helpers import apply_op, run_pipeline, run_samples
from op_cases import Lib, check_case, run_case
from op_cases import cases as dali_cases

from stoker import Pipeline, fn, types
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(0)
YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])




def _half_away(v):
    return np.trunc(np.asarray(v, np.float64) + np.copysign(0.5, v))


def _sat_u8(v):
    return np.clip(_half_away(v), 0, 255).astype(np.uint8)


def _images(n=3, shape=(20, 24, 3)):
    return [RNG.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]


RAMP = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=2)

# -- brightness / contrast --------------------------------------------------------------------


def test_brightness_rounds_half_away_from_zero_and_saturates():
    (half,) = apply_op(fn.brightness, [RAMP], brightness=0.5)
    v = RAMP[..., 0].reshape(-1)
    assert half.dtype == np.uint8
    # 1 * 0.5 = 0.5 -> 1, 5 * 0.5 = 2.5 -> 3, 255 * 0.5 = 127.5 -> 128 (not to even)
    assert half[..., 0].reshape(-1)[[1, 5, 255]].tolist() == [1, 3, 128]
    np.testing.assert_array_equal(half[..., 0].reshape(-1), np.floor(v * 0.5 + 0.5))
    (bright,) = apply_op(fn.brightness, [RAMP], brightness=1.5)
    assert bright[..., 0].reshape(-1)[[3, 169, 170, 255]].tolist() == [5, 254, 255, 255]


def test_brightness_shift_counts_in_output_type_units():
    (u8,) = apply_op(fn.brightness, [RAMP], brightness_shift=0.1)  # +25.5 for uint8
    assert u8[..., 0].reshape(-1)[[0, 1, 230, 255]].tolist() == [26, 27, 255, 255]
    (f32,) = apply_op(fn.brightness, [RAMP], brightness_shift=0.1, dtype=types.FLOAT)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, RAMP.astype(np.float32) + np.float32(0.1), rtol=1e-6)
    (i16,) = apply_op(fn.brightness, [RAMP], brightness_shift=0.1, dtype=types.INT16)
    assert i16[0, 0, 0] == 3277  # 0.1 * 32767 = 3276.7


def test_contrast_center_defaults_to_half_the_input_range():
    (u8,) = apply_op(fn.contrast, [RAMP], contrast=2.0)  # center 128
    assert u8[..., 0].reshape(-1)[[0, 64, 127, 128, 129, 200]].tolist() == \
        [0, 0, 126, 128, 130, 255]
    (given,) = apply_op(fn.contrast, [RAMP], contrast=2.0, contrast_center=0.5)
    assert given[..., 0].reshape(-1)[[0, 1, 2]].tolist() == [0, 2, 4]  # 2x - 0.5, rounded
    x16 = np.array([[[0], [1], [100]]], np.int16)
    (i16,) = apply_op(fn.contrast, [x16], contrast=2.0)  # center 16384
    assert i16.reshape(-1).tolist() == [-16384, -16382, -16184]
    xf = np.array([[[0.0], [0.25], [1.0]]], np.float32)
    (f,) = apply_op(fn.contrast, [xf], contrast=2.0)  # center 0.5
    np.testing.assert_allclose(f.reshape(-1), [-0.5, 0.0, 1.5])


@pytest.mark.parametrize("dtype", [None, types.FLOAT, types.INT16, types.INT32])
def test_brightness_contrast_matches_float32_formula(dtype):
    imgs = _images()
    b, s, c, cc = 1.3, -0.05, 0.7, 100.0
    outs = apply_op(fn.brightness_contrast, imgs, brightness=b, brightness_shift=s, contrast=c,
                  contrast_center=cc, **({"dtype": dtype} if dtype else {}))
    out_type = np.dtype(types.to_numpy(dtype)) if dtype else np.dtype(np.uint8)
    f = np.float32
    rng_max = f(1.0) if out_type.kind == "f" else f(np.iinfo(out_type).max)
    mul, add = f(b) * f(c), f(s) * rng_max + f(b) * (f(cc) - f(c) * f(cc))
    for img, out in zip(imgs, outs, strict=True):
        ref = img.astype(f) * mul + add
        assert out.dtype == out_type
        if out_type.kind == "f":
            np.testing.assert_allclose(out, ref, rtol=1e-6)
        else:
            info = np.iinfo(out_type)
            np.testing.assert_array_equal(out, np.clip(_half_away(ref), info.min, info.max))


def test_brightness_contrast_on_float_and_int32_input():
    xf = RNG.random((5, 6, 3)).astype(np.float32)
    (out,) = apply_op(fn.brightness_contrast, [xf], brightness=2.0, contrast=0.5)
    np.testing.assert_allclose(out, 2.0 * (0.5 + 0.5 * (xf - 0.5)), rtol=1e-6)
    x32 = RNG.integers(-1000, 1000, (4, 4, 3)).astype(np.int32)
    (out,) = apply_op(fn.brightness, [x32], brightness=3.0)
    np.testing.assert_array_equal(out, x32 * 3)


def test_per_sample_brightness_is_shared_by_image_and_mask():
    imgs = _images(4)
    masks = [np.full((20, 24, 1), 100, np.uint8) for _ in imgs]

    def build():
        img = fn.external_source(source=lambda: imgs, layout="HWC")
        mask = fn.external_source(source=lambda: masks, layout="HWC")
        factor = fn.random.uniform(range=[0.5, 1.5])
        return (fn.brightness(img, brightness=factor), fn.brightness(mask, brightness=factor),
                factor)

    out_img, out_mask, factors = run_samples(build, 4)
    assert len({float(f) for f in factors}) == 4  # really per sample
    for img, oi, om, fac in zip(imgs, out_img, out_mask, factors, strict=True):
        np.testing.assert_array_equal(oi, _sat_u8(img.astype(np.float32) * np.float32(fac)))
        np.testing.assert_array_equal(om, _sat_u8(np.float32(100) * np.float32(fac)))


def test_brightness_on_sequences_applies_the_sample_value_to_every_frame():
    seq = np.stack(_images(3))

    def build():
        x = fn.external_source(source=lambda: [seq, seq[::-1].copy()], layout="FHWC")
        return fn.brightness(x, brightness=fn.random.uniform(range=[0.5, 1.5])), \
            fn.brightness(fn.external_source(source=lambda: [np.float32(1)] * 2),
                          brightness=1.0, dtype=types.FLOAT)

    (outs, _) = run_samples(build, 2)
    assert outs[0].shape == seq.shape
    ratio = outs[0].astype(np.float64).sum(axis=(1, 2, 3)) / seq.sum(axis=(1, 2, 3))
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-2)


def test_brightness_rejects_unsupported_types():
    with pytest.raises(ArgumentError, match=r"fn.brightness: argument 'dtype' must be one of"):
        apply_op(fn.brightness, [RAMP], dtype=types.INT8)
    with pytest.raises(SampleError, match="input type uint16 is not supported"):
        apply_op(fn.brightness, [RAMP.astype(np.uint16)])


# -- hue / saturation / hsv / color_twist ------------------------------------------------------


def _twist_reference(img, hue=0.0, sat=1.0, value=1.0, brightness=1.0, contrast=1.0):
    """float64 reference: to YIQ, rotate I/Q by hue degrees, scale, back, then contrast."""
    t = np.deg2rad(hue)
    adjust = np.array([[1, 0, 0],
                       [0, sat * np.cos(t), sat * np.sin(t)],
                       [0, -sat * np.sin(t), sat * np.cos(t)]])
    mat = np.linalg.inv(YIQ) @ adjust @ YIQ * value * brightness * contrast
    half = 0.5 if img.dtype.kind == "f" else 128.0
    return img.astype(np.float64) @ mat.T + (half - half * contrast) * brightness


@pytest.mark.parametrize("kwargs", [{"hue": 35.0}, {"hue": -120.0, "saturation": 1.4},
                                    {"saturation": 0.3}, {"hue": 200.0, "value": 0.8}])
def test_hsv_matches_yiq_reference(kwargs):
    imgs = _images()
    outs = apply_op(fn.hsv, imgs, dtype=types.FLOAT, **kwargs)
    exact = apply_op(fn.hsv, imgs, **kwargs)
    ref_args = {"hue": kwargs.get("hue", 0.0), "sat": kwargs.get("saturation", 1.0),
                "value": kwargs.get("value", 1.0)}
    for img, out, u8 in zip(imgs, outs, exact, strict=True):
        ref = _twist_reference(img, **ref_args)
        np.testing.assert_allclose(out, ref, atol=2e-3)
        assert u8.dtype == np.uint8
        assert np.abs(u8.astype(int) - np.clip(np.floor(ref + 0.5), 0, 255)).max() <= 1


def test_hue_zero_and_full_turn_leave_images_unchanged():
    imgs = _images()
    for hue in (0.0, 360.0):
        for img, out in zip(imgs, apply_op(fn.hue, imgs, hue=hue), strict=True):
            np.testing.assert_array_equal(out, img)


def test_saturation_zero_leaves_luma_only():
    imgs = _images()
    for img, out in zip(imgs, apply_op(fn.saturation, imgs, saturation=0.0), strict=True):
        luma = img.astype(np.float64) @ YIQ[0]
        # DALI maps back with the exact inverse of its YIQ matrix, whose first column is
        # (0.9997, 0.9996, 1.0028), so the three channels agree to about 1 level.
        np.testing.assert_array_less(np.abs(out.astype(float) - luma[..., None]), 1.51)


def test_color_twist_adds_contrast_offset_around_the_middle():
    imgs = _images()
    kw = {"hue": 25.0, "saturation": 0.7, "brightness": 1.2, "contrast": 0.8}
    outs = apply_op(fn.color_twist, imgs, dtype=types.FLOAT, **kw)
    for img, out in zip(imgs, outs, strict=True):
        ref = _twist_reference(img, hue=25.0, sat=0.7, brightness=1.2, contrast=0.8)
        np.testing.assert_allclose(out, ref, atol=2e-3)
    xf = RNG.random((4, 5, 3)).astype(np.float32)
    (out,) = apply_op(fn.color_twist, [xf], contrast=0.5)  # float data: middle is 0.5
    np.testing.assert_allclose(out, _twist_reference(xf, contrast=0.5), atol=1e-5)


def test_hsv_outputs_uint8_by_default_and_other_types_on_request():
    xf = RNG.random((4, 5, 3)).astype(np.float32) * 255
    (out,) = apply_op(fn.hsv, [xf], hue=10.0)
    assert out.dtype == np.uint8
    (out16,) = apply_op(fn.hue, [xf.astype(np.float16)], hue=10.0)
    assert out16.dtype == np.float16
    np.testing.assert_allclose(out16, _twist_reference(xf.astype(np.float16), hue=10.0),
                               rtol=2e-3, atol=0.2)


def test_hue_on_sequences_equals_hue_per_frame():
    frames = _images(3)
    (seq,) = apply_op(fn.hue, [np.stack(frames)], layout="FHWC", hue=50.0)
    singles = apply_op(fn.hue, frames, hue=50.0)
    np.testing.assert_array_equal(seq, np.stack(singles))


def test_per_sample_hue_values():
    imgs = _images(3)
    hues = [np.float32(h) for h in (10.0, 90.0, -45.0)]

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.hue(x, hue=fn.external_source(source=lambda: hues), dtype=types.FLOAT)

    (outs,) = run_samples(build, 3)
    for img, h, out in zip(imgs, hues, outs, strict=True):
        np.testing.assert_allclose(out, _twist_reference(img, hue=float(h)), atol=2e-3)


def test_twist_operators_need_three_channel_last_images():
    with pytest.raises(SampleError, match="expects 3 channels"):
        apply_op(fn.hue, [RNG.integers(0, 255, (4, 4, 4), dtype=np.uint8)], hue=3.0)
    with pytest.raises(SampleError, match="expects channel-last images"):
        apply_op(fn.saturation, [np.zeros((3, 4, 4), np.uint8)], layout="CHW")


# -- color_space_conversion --------------------------------------------------------------------


def _csc(images, src, dst, layout="HWC"):
    return apply_op(fn.color_space_conversion, images, layout=layout, image_type=src,
                  output_type=dst)


def test_rgb_gray_bgr_conversions_match_opencv():
    imgs = _images()
    for img, gray, bgr in zip(imgs, _csc(imgs, types.RGB, types.GRAY),
                              _csc(imgs, types.RGB, types.BGR), strict=True):
        assert gray.shape == (*img.shape[:2], 1)
        np.testing.assert_array_equal(gray[..., 0], cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))
        luma = img.astype(np.float64) @ [0.299, 0.587, 0.114]
        assert np.abs(gray[..., 0] - luma).max() <= 0.51
        np.testing.assert_array_equal(bgr, img[..., ::-1])
    g = [img[..., :1].copy() for img in imgs]
    for src, out in zip(g, _csc(g, types.GRAY, types.RGB), strict=True):
        np.testing.assert_array_equal(out, np.repeat(src, 3, axis=2))


def test_rgb_to_ycbcr_follows_bt601_studio_range():
    imgs = _images()
    coef = np.array([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                     [112.0, -93.786, -18.214]]) / 255
    for img, out, via_bgr in zip(imgs, _csc(imgs, types.RGB, types.YCbCr),
                                 _csc([i[..., ::-1].copy() for i in imgs], types.BGR,
                                      types.YCbCr), strict=True):
        ref = img.astype(np.float64) @ coef.T + [16, 128, 128]
        assert np.abs(out - np.floor(ref + 0.5)).max() <= 1
        assert np.mean(out != np.floor(ref + 0.5)) < 1e-3  # only float32 ties differ
        np.testing.assert_array_equal(via_bgr, out)


def test_ycbcr_round_trip_and_gray_levels():
    imgs = _images()
    ycc = _csc(imgs, types.RGB, types.YCbCr)
    for img, back in zip(imgs, _csc(ycc, types.YCbCr, types.RGB), strict=True):
        assert np.abs(back.astype(int) - img).max() <= 3  # 8-bit quantization of YCbCr
    levels = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    (y,) = _csc([levels], types.GRAY, types.YCbCr)
    np.testing.assert_array_equal(y[..., 0], np.floor(16 + levels[..., 0] / 255 * 219 + 0.5))
    assert (y[..., 1:] == 128).all()
    (g,) = _csc([levels.repeat(3, axis=2)], types.YCbCr, types.GRAY)  # Y = every level
    ref = np.clip(np.floor((levels.astype(float) - 16) * 255 / 219 + 0.5), 0, 255)
    np.testing.assert_array_equal(g, ref)


def test_color_space_conversion_on_sequences():
    frames = _images(2)
    (seq,) = _csc([np.stack(frames)], types.RGB, types.YCbCr, layout="FHWC")
    np.testing.assert_array_equal(seq, np.stack(_csc(frames, types.RGB, types.YCbCr)))


def test_color_space_conversion_errors():
    with pytest.raises(ArgumentError, match="'image_type' and 'output_type' are both RGB"):
        _csc(_images(1), types.RGB, types.RGB)
    with pytest.raises(SampleError, match=r"a GRAY image needs 1 channel\(s\)"):
        _csc(_images(1), types.GRAY, types.RGB)
    with pytest.raises(SampleError, match="input type float32 is not supported"):
        _csc([np.zeros((2, 2, 3), np.float32)], types.RGB, types.BGR)
    with pytest.raises(ArgumentError, match="'output_type' must be one of"):
        _csc(_images(1), types.RGB, types.ANY_DATA)


# -- layouts and default types, against DALI 2.4's recorded outcomes ----------------------------

COLOR_CASES = dali_cases("color")


@pytest.mark.parametrize("case", COLOR_CASES, ids=[c["name"] for c in COLOR_CASES])
def test_color_operators_match_dali_layouts_types_and_values(case):
    # An input without a layout comes out HWC (3-D) or FHWC (4-D), as DALI names it.
    check_case(case, run_case(case, Lib(fn, types, Pipeline)))


def test_unnamed_image_layout_reaches_get_property_and_later_operators():
    frames = [np.zeros((2, 3, 4, 3), np.uint8), np.ones((2, 3, 4, 3), np.uint8)]
    out = run_pipeline(lambda x: (fn.hue(x, hue=10.0),
                                  fn.get_property(fn.saturation(x), key="layout"),
                                  fn.copy(fn.hsv(x))), frames)
    assert out[0].layout() == "FHWC" and out[2].layout() == "FHWC"
    assert bytes(np.asarray(out[1][0])).decode() == "FHWC"
    # At graph build the layout is still unknown: rules that read it see "".
    images = [np.zeros((3, 4, 3), np.uint8)]
    out = run_pipeline(lambda x: fn.brightness(x, brightness=2.0), images, layouts=["CHW"])
    assert out[0].layout() == "CHW"
