"""gaussian_blur and jpeg_compression_distortion against numpy / OpenCV references.

Blur rules (DALI 2.4, measured): window 0 -> 2 * ceil(3 * sigma) + 1; sigma 0 -> OpenCV's
0.3 * ((window - 1) / 2 - 1) + 0.8; normalized taps; borders mirrored without repeating the
edge (numpy's 'reflect'); only D, H, W axes are blurred; no layout means all axes spatial.
JPEG distortion is an OpenCV encode/decode round trip of the image in BGR order.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from helpers import apply_op, run_samples

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(1)




def _taps(sigma, window):
    window = window or 2 * math.ceil(3 * sigma) + 1
    sigma = sigma or 0.3 * ((window - 1) / 2 - 1) + 0.8
    x = np.arange(window) - window // 2
    k = np.exp(-x * x / (2 * sigma * sigma))
    return k / k.sum()


def _blur_ref(x, axes, sigmas, windows):
    """float64 separable correlation with reflect-101 borders along ``axes``."""
    out = x.astype(np.float64)
    for axis, s, w in zip(axes, sigmas, windows, strict=True):
        k = _taps(s, w)
        r = len(k) // 2
        pad = [(0, 0)] * out.ndim
        pad[axis] = (r, r)
        padded = np.pad(out, pad, mode="reflect")
        acc = np.zeros_like(out)
        for i, tap in enumerate(k):
            acc += tap * np.take(padded, range(i, i + out.shape[axis]), axis=axis)
        out = acc
    return out


def _u8(*shape):
    return RNG.integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("sigma,window", [(1.0, 0), (2.5, 0), (0.0, 5), (0.7, 9), (1.5, 3)])
def test_gaussian_blur_matches_separable_reference(sigma, window):
    imgs = [_u8(30, 40, 3), _u8(25, 31, 3)]
    kw = {"sigma": sigma, "window_size": window}
    floats = apply_op(fn.gaussian_blur, imgs, dtype=types.FLOAT, **kw)
    exact = apply_op(fn.gaussian_blur, imgs, **kw)
    for img, f, u in zip(imgs, floats, exact, strict=True):
        ref = _blur_ref(img, (0, 1), (sigma, sigma), (window, window))
        assert f.dtype == np.float32 and u.dtype == np.uint8
        np.testing.assert_allclose(f, ref, atol=2e-3)
        assert np.abs(u.astype(int) - np.floor(ref + 0.5)).max() <= 1


def test_window_and_sigma_derive_from_each_other():
    impulse = np.zeros((1, 41), np.float32)
    impulse[0, 20] = 1
    (a,) = apply_op(fn.gaussian_blur, [impulse], layout="HW", sigma=[1e-3, 1.0])
    assert np.count_nonzero(a[0] > 1e-12) == 7  # 2 * ceil(3 * 1.0) + 1
    (b,) = apply_op(fn.gaussian_blur, [impulse], layout="HW", window_size=[1, 5])
    tail = b[0, 18:23]
    sigma = math.sqrt(-1 / (2 * math.log(tail[3] / tail[2])))
    assert sigma == pytest.approx(0.3 * (2 - 1) + 0.8, rel=1e-4)  # 1.1 for window 5


def test_per_axis_sigmas_follow_the_layout_order():
    img = _u8(40, 50).astype(np.float32)
    (out,) = apply_op(fn.gaussian_blur, [img], layout="HW", sigma=[0.5, 3.0])
    np.testing.assert_allclose(out, _blur_ref(img, (0, 1), (0.5, 3.0), (0, 0)), atol=1e-3)
    (wh,) = apply_op(fn.gaussian_blur, [img.T.copy()], layout="WH", sigma=[3.0, 0.5])
    np.testing.assert_allclose(wh.T, out, atol=1e-4)


def test_blur_keeps_frames_and_channels_apart():
    img = _u8(20, 24, 3)
    (hwc,) = apply_op(fn.gaussian_blur, [img], sigma=1.2)
    (chw,) = apply_op(fn.gaussian_blur, [img.transpose(2, 0, 1).copy()], layout="CHW", sigma=1.2)
    np.testing.assert_array_equal(chw, hwc.transpose(2, 0, 1))
    seq = np.stack([img, img[::-1].copy(), np.zeros_like(img)])
    (fhwc,) = apply_op(fn.gaussian_blur, [seq], layout="FHWC", sigma=1.2)
    np.testing.assert_array_equal(fhwc[0], hwc)
    assert (fhwc[2] == 0).all()


def test_volumes_blur_along_depth_too():
    vol = _u8(6, 12, 14, 2).astype(np.float32)
    (out,) = apply_op(fn.gaussian_blur, [vol], layout="DHWC", sigma=[1.0, 1.5, 0.8])
    ref = _blur_ref(vol, (0, 1, 2), (1.0, 1.5, 0.8), (0, 0, 0))
    np.testing.assert_allclose(out, ref, atol=1e-3)
    (nolayout,) = apply_op(fn.gaussian_blur, [vol[..., 0].copy()], layout="", sigma=1.0)
    ref = _blur_ref(vol[..., 0], (0, 1, 2), (1.0,) * 3, (0,) * 3)
    np.testing.assert_allclose(nolayout, ref, atol=1e-3)


def test_windows_larger_than_the_image_reflect_repeatedly():
    img = RNG.random((5, 6)).astype(np.float32)
    (out,) = apply_op(fn.gaussian_blur, [img], layout="HW", window_size=15)
    np.testing.assert_allclose(out, _blur_ref(img, (0, 1), (0, 0), (15, 15)), atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.int8, np.float64])
def test_blur_keeps_other_input_types(dtype):
    img = (RNG.random((16, 18, 3)) * 100).astype(dtype)
    (out,) = apply_op(fn.gaussian_blur, [img], sigma=1.3)
    assert out.dtype == dtype
    ref = _blur_ref(img, (0, 1), (1.3, 1.3), (0, 0))
    tol = 1e-6 if np.dtype(dtype).kind == "f" else 1.0
    np.testing.assert_allclose(out, ref if np.dtype(dtype).kind == "f" else np.floor(ref + .5),
                               atol=tol)


def test_per_sample_sigma():
    imgs = [_u8(20, 20).astype(np.float32) for _ in range(2)]
    sig = [np.array([0.5, 2.0], np.float32), np.array([1.5], np.float32)]

    def build():
        x = fn.external_source(source=lambda: imgs, layout="HW")
        return fn.gaussian_blur(x, sigma=fn.external_source(source=lambda: sig))

    (outs,) = run_samples(build, 2)
    np.testing.assert_allclose(outs[0], _blur_ref(imgs[0], (0, 1), (0.5, 2.0), (0, 0)),
                               atol=1e-3)
    np.testing.assert_allclose(outs[1], _blur_ref(imgs[1], (0, 1), (1.5, 1.5), (0, 0)),
                               atol=1e-3)


def test_gaussian_blur_errors():
    img = [_u8(8, 8, 3)]
    with pytest.raises(ArgumentError, match="'window_size' must hold odd numbers"):
        apply_op(fn.gaussian_blur, img, window_size=4)
    with pytest.raises(SampleError, match="'sigma' and 'window_size' are both 0"):
        apply_op(fn.gaussian_blur, img)
    with pytest.raises(SampleError, match=r"must be the input type \(uint8\) or FLOAT"):
        apply_op(fn.gaussian_blur, img, sigma=1.0, dtype=types.INT16)
    with pytest.raises(SampleError, match="'sigma' has 3 values for 2 spatial axes"):
        apply_op(fn.gaussian_blur, img, sigma=[1.0, 2.0, 3.0])
    with pytest.raises(SampleError, match="without a layout"):
        apply_op(fn.gaussian_blur, [_u8(2, 4, 4, 3)], layout="", sigma=1.0)


# -- jpeg_compression_distortion ---------------------------------------------------------------


def _opencv_roundtrip(rgb, quality):
    ok, data = cv2.imencode(".jpg", rgb[..., ::-1].copy(), [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(data, cv2.IMREAD_COLOR)[..., ::-1]


def _photo(h=96, w=128):
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 2, y * 2, (x + y)], axis=-1) % 256
    return (img + RNG.integers(0, 30, img.shape)).clip(0, 255).astype(np.uint8)


@pytest.mark.parametrize("quality", [1, 30, 50, 95, 100])
def test_jpeg_distortion_is_an_opencv_round_trip(quality):
    imgs = [_photo(), _photo(45, 67)]
    outs = apply_op(fn.jpeg_compression_distortion, imgs, quality=quality)
    for img, out in zip(imgs, outs, strict=True):
        assert out.shape == img.shape and out.dtype == np.uint8
        np.testing.assert_array_equal(out, _opencv_roundtrip(img, quality))


def test_jpeg_quality_orders_the_error_and_clamps():
    img = [_photo()]
    err = {q: np.abs(apply_op(fn.jpeg_compression_distortion, img, quality=q)[0].astype(int)
                     - img[0]).mean() for q in (5, 50, 95)}
    assert err[5] > err[50] > err[95] > 0
    np.testing.assert_array_equal(apply_op(fn.jpeg_compression_distortion, img, quality=0)[0],
                                  apply_op(fn.jpeg_compression_distortion, img, quality=1)[0])
    np.testing.assert_array_equal(apply_op(fn.jpeg_compression_distortion, img, quality=101)[0],
                                  apply_op(fn.jpeg_compression_distortion, img, quality=100)[0])


def test_jpeg_distortion_on_sequences_and_errors():
    frames = [_photo(), _photo()]
    (seq,) = apply_op(fn.jpeg_compression_distortion, [np.stack(frames)], layout="FHWC")
    np.testing.assert_array_equal(seq, np.stack([_opencv_roundtrip(f, 50) for f in frames]))
    with pytest.raises(SampleError, match="with 3 channels"):
        apply_op(fn.jpeg_compression_distortion, [_u8(8, 8, 1)])
    with pytest.raises(SampleError, match="input type float32 is not supported"):
        apply_op(fn.jpeg_compression_distortion, [np.zeros((8, 8, 3), np.float32)])
