"""Color kernels: affine pixel maps, 3x3 color matrices and color space conversions.

brightness/contrast are one affine map per sample (``out = in * mul + add``); for uint8
input it becomes a 256-entry table. hue, saturation, hsv and color_twist are one 3x3
matrix per sample in RGB space: DALI rotates hue and scales saturation in YIQ space, and
folds ``RGB -> YIQ -> adjust -> RGB`` into a single matrix, as done here. Conversions
between RGB, BGR and GRAY go through OpenCV (DALI's CPU operator calls the same
functions); those to and from YCbCr use BT.601's studio-range matrices in float32.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.saturate import round_sat, type_range

F32 = np.float32

# RGB -> YIQ as DALI writes it; the way back is its exact inverse (measured: hue=0 is the
# identity to float precision, so DALI does not use the rounded textbook inverse).
RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114],
                       [0.596, -0.274, -0.321],
                       [0.211, -0.523, 0.311]])
YIQ_TO_RGB = np.linalg.inv(RGB_TO_YIQ)

# BT.601 studio range (Y in 16..235, Cb/Cr in 16..240) on values scaled to [0, 1].
_KR, _KB = 0.299, 0.114
_KG = 1.0 - _KR - _KB
RGB_TO_YCBCR = np.array([
    [_KR * 219 / 255, _KG * 219 / 255, _KB * 219 / 255],
    [-_KR / (1 - _KB) / 2 * 224 / 255, -_KG / (1 - _KB) / 2 * 224 / 255, 0.5 * 224 / 255],
    [0.5 * 224 / 255, -_KG / (1 - _KR) / 2 * 224 / 255, -_KB / (1 - _KR) / 2 * 224 / 255],
])
YCBCR_OFFSET = np.array([16.0, 128.0, 128.0]) / 255
YCBCR_TO_RGB = np.linalg.inv(RGB_TO_YCBCR)


def full_range(dtype: np.dtype) -> float:
    """The brightness shift unit: the type's maximum for integers, 1 for floats."""
    dtype = np.dtype(dtype)
    return float(np.iinfo(dtype).max) if dtype.kind in "iu" else 1.0


def half_range(dtype: np.dtype) -> float:
    """DALI's default contrast center: 128 for uint8, 16384 for int16, 0.5 for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        return 0.5
    return float(1 << (8 * dtype.itemsize - (dtype.kind == "i") - 1))


def brightness_contrast_params(brightness: np.ndarray, shift: np.ndarray, contrast: np.ndarray,
                               center: np.ndarray, out_dtype: np.dtype
                               ) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample (mul, add) of ``out = shift * range + b * (center + c * (in - center))``.

    Folded as DALI folds it, in float32: mul = b * c, add = shift * range +
    b * (center - c * center).
    """
    b, s, c, cc = (np.asarray(v, F32) for v in (brightness, shift, contrast, center))
    add = s * F32(full_range(out_dtype)) + b * (cc - c * cc)
    return (b * c).astype(F32), add.astype(F32)


def _flat(images: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(images).reshape(images.shape[0], -1)


def apply_table(x: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = table[x]`` for one uint8 sample (OpenCV's LUT: SIMD, GIL released)."""
    import cv2

    shape = (-1, x.shape[-1]) if x.ndim else (1, 1)
    if table.dtype in _CV_LUT_TYPES:
        dst = out.reshape(shape)
        res = cv2.LUT(np.ascontiguousarray(x).reshape(shape), table, dst=dst)
        if res is not dst and not np.shares_memory(res, dst):
            dst[...] = res
    else:
        out[...] = table[x]


_CV_LUT_TYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32,
                                            np.float32, np.float64))


def affine(images: np.ndarray, mul: np.ndarray, add: np.ndarray,
           out_dtype: np.dtype) -> np.ndarray:
    """``round_sat(in * mul[i] + add[i])`` for (n, ...) images, in float32."""
    L = loops("image.pixel_loops")

    n = images.shape[0]
    out_dtype = np.dtype(out_dtype)
    mul = np.ascontiguousarray(np.broadcast_to(mul, (n,)), F32)
    add = np.ascontiguousarray(np.broadcast_to(add, (n,)), F32)
    out = np.empty(images.shape, out_dtype)
    src, dst = _flat(images), out.reshape(n, -1)
    if images.dtype == np.uint8:
        levels = np.arange(256, dtype=F32)
        table = round_sat(levels[None, :] * mul[:, None] + add[:, None], out_dtype)
        for j in range(n):
            apply_table(images[j], table[j], out[j])
        return out
    lo, hi = type_range(out_dtype)
    L.affine(src, mul, add, lo, hi, out_dtype.kind in "iu", dst)
    return out


def twist_matrices(hue: np.ndarray, saturation: np.ndarray, value: np.ndarray,
                   scale: np.ndarray) -> np.ndarray:
    """(n, 3, 3) RGB matrices: to YIQ, rotate I/Q by ``hue`` degrees, scale I/Q by
    ``saturation`` and everything by ``value``, back to RGB, times ``scale``."""
    hue, saturation, value, scale = np.broadcast_arrays(
        *(np.asarray(v, np.float64).reshape(-1) for v in (hue, saturation, value, scale)))
    n = hue.shape[0]
    rad = np.deg2rad(hue.astype(F32).astype(np.float64))
    adjust = np.zeros((n, 3, 3))
    adjust[:, 0, 0] = 1.0
    adjust[:, 1, 1] = adjust[:, 2, 2] = np.cos(rad) * saturation
    adjust[:, 1, 2] = np.sin(rad) * saturation
    adjust[:, 2, 1] = -np.sin(rad) * saturation
    mats = YIQ_TO_RGB @ adjust @ RGB_TO_YIQ
    return (mats * (value * scale)[:, None, None]).astype(F32)


def color_matrix(images: np.ndarray, mats: np.ndarray, offsets: np.ndarray,
                 out_dtype: np.dtype) -> np.ndarray:
    """``out = mats[i] @ rgb + offsets[i]`` per pixel of (n, ..., 3) images."""
    L = loops("image.pixel_loops")

    n = images.shape[0]
    out_dtype = np.dtype(out_dtype)
    src = images
    if src.dtype == np.float16:  # numba has no float16 arithmetic; widen losslessly
        src = src.astype(F32)
    src = np.ascontiguousarray(src).reshape(n, -1, 3)
    work = np.dtype(F32) if out_dtype == np.float16 else out_dtype
    out = np.empty(src.shape, work)
    offs = np.ascontiguousarray(np.broadcast_to(np.asarray(offsets, F32).reshape(n, -1),
                                                (n, 3)))
    lo, hi = type_range(work)
    L.matrix3(src, np.ascontiguousarray(mats, F32), offs, lo, hi, work.kind in "iu", out)
    return out.reshape(images.shape).astype(out_dtype, copy=False)


# -- color space conversion ------------------------------------------------------------------

CHANNELS = {"RGB": 3, "BGR": 3, "GRAY": 1, "YCbCr": 3}


def _gray_to_y_table() -> np.ndarray:
    x = np.arange(256, dtype=F32) / F32(255)
    return round_sat((x * F32(219 / 255) + F32(16 / 255)) * F32(255), np.uint8)


def _y_to_gray_table() -> np.ndarray:
    x = np.arange(256, dtype=F32) / F32(255)
    return round_sat(((x - F32(16 / 255)) * F32(255 / 219)) * F32(255), np.uint8)


def _cv_image(images: np.ndarray) -> np.ndarray:
    """(n, ..., W, C) as one tall 2-D image for OpenCV's per-pixel conversions."""
    w, c = images.shape[-2], images.shape[-1]
    return np.ascontiguousarray(images).reshape(-1, w, c)


def convert_color(images: np.ndarray, src: str, dst: str) -> np.ndarray:
    """uint8 (n, ..., C) images from color space ``src`` to ``dst`` (RGB, BGR, GRAY, YCbCr)."""
    import cv2

    L = loops("image.pixel_loops")

    lead = images.shape[:-1]
    n = images.shape[0]
    if src == dst:
        return images.copy()
    if "YCbCr" not in (src, dst):
        code = getattr(cv2, f"COLOR_{src}2{dst}")
        out = cv2.cvtColor(_cv_image(images), code)
        return out.reshape(*lead, CHANNELS[dst])
    if src == "GRAY":
        y = _gray_to_y_table()[images[..., 0]]
        out = np.full((*lead, 3), 128, np.uint8)
        out[..., 0] = y
        return out
    if dst == "GRAY":
        return _y_to_gray_table()[images[..., :1]]
    flat = np.ascontiguousarray(images).reshape(n, -1, 3)
    out = np.empty(flat.shape, np.uint8)
    if dst == "YCbCr":
        L.rgb_to_ycbcr(flat, RGB_TO_YCBCR.astype(F32), YCBCR_OFFSET.astype(F32),
                       src == "BGR", out)
    else:
        L.ycbcr_to_rgb(flat, YCBCR_TO_RGB.astype(F32), YCBCR_OFFSET.astype(F32),
                       dst == "BGR", out)
    return out.reshape(*lead, 3)
