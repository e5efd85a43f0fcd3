"""Affine warps (``warp_affine``, ``rotate``): output size rules, matrices and the driver.

Matrices are (2, 3) destination-to-source maps in continuous pixel coordinates (pixel
(i, j) spans [i, i + 1)); OpenCV samples them where it supports the type and channel
count, ``warp_loops.py`` (the same semantics in numba) elsewhere. ``rotated_size`` and
``rotation_matrix`` follow DALI's rotate: the canvas fits the rotated image and keeps (or,
past 45 degrees, swaps) the parity of the input extents, the rotation is counter-clockwise
on screen about the centers of both images.
"""

from __future__ import annotations

import math

import numpy as np

from stoker.kernels.cpu.compiled import loops

NN, LINEAR = 0, 1


def _angle_rad(angle_deg: float) -> float:
    # DALI converts degrees to radians in float32 before taking sines in double; at exact
    # multiples of 45 degrees that rounding decides which parity rule applies.
    return float(np.float32(angle_deg) * np.float32(math.pi / 180))


def rotated_size(in_hw: tuple[int, int], angle_deg: float) -> tuple[int, int]:
    """(height, width) of the canvas that holds an image of ``in_hw`` rotated."""
    h, w = int(in_hw[0]), int(in_hw[1])
    a = _angle_rad(angle_deg)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    eps = 1e-2
    out_w = math.ceil(c * w + s * h - eps)
    out_h = math.ceil(c * h + s * w - eps)
    # Same parity as the source extent that dominates each output extent: the center
    # pixel then maps onto a pixel center instead of blurring between two.
    par_w, par_h = (w, h) if s <= c else (h, w)
    if out_w % 2 != par_w % 2:
        out_w += 1
    if out_h % 2 != par_h % 2:
        out_h += 1
    return out_h, out_w


def rotation_matrix(in_hw: tuple[int, int], out_hw: tuple[int, int],
                    angle_deg: float) -> np.ndarray:
    """Destination-to-source map of a counter-clockwise rotation about both centers.

    Built in float32 like DALI's, so nearest-neighbour ties break the same way.
    """
    f = np.float32
    a = f(_angle_rad(angle_deg))
    c, s = f(np.cos(a)), f(np.sin(a))
    # Image y points down, so a counter-clockwise turn on screen is clockwise in (x, y).
    ox, oy = -f(out_hw[1]) * f(0.5), -f(out_hw[0]) * f(0.5)
    ix, iy = f(in_hw[1]) * f(0.5), f(in_hw[0]) * f(0.5)
    tx = f(f(c * ox) + f(-s * oy)) + ix
    ty = f(f(s * ox) + f(c * oy)) + iy
    return np.array([[c, -s, tx], [s, c, ty]], np.float32)


def invert_affine(matrix: np.ndarray) -> np.ndarray:
    full = np.eye(3)
    full[:2] = matrix
    return np.linalg.inv(full)[:2]


# Types and channel counts OpenCV's warpAffine handles; it matches DALI's sampling as
# closely as the float loops (measured: same rounding flips) and is several times faster.
_CV_TYPES = {np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64)}


def _opencv_warp(image: np.ndarray, matrix: np.ndarray, out_hw: tuple[int, int], interp: int,
                 fill: float | None, out_dtype: np.dtype) -> np.ndarray | None:
    c = image.shape[2]
    src = image
    if out_dtype != image.dtype:
        if out_dtype != np.float32 and out_dtype != np.float64:
            return None
        src = image.astype(out_dtype)  # a float output keeps the unrounded interpolation
    if src.dtype not in _CV_TYPES or not 1 <= c <= 4:
        return None
    import cv2

    m = np.asarray(matrix, np.float64)
    # OpenCV samples the source at M @ (x, y); on pixel centers the offset absorbs the 0.5s.
    t = m[:, :2] @ np.array([0.5, 0.5]) + m[:, 2] - 0.5
    flags = (cv2.INTER_NEAREST if interp == NN else cv2.INTER_LINEAR) | cv2.WARP_INVERSE_MAP
    if fill is None:
        border, value = cv2.BORDER_REPLICATE, 0
    else:
        border, value = cv2.BORDER_CONSTANT, (float(fill),) * 4
    out = cv2.warpAffine(np.ascontiguousarray(src), np.concatenate([m[:, :2], t[:, None]], 1),
                         (int(out_hw[1]), int(out_hw[0])), flags=flags, borderMode=border,
                         borderValue=value)
    return out.reshape(int(out_hw[0]), int(out_hw[1]), c)


def warp_hwc(image: np.ndarray, matrix: np.ndarray, out_hw: tuple[int, int], interp: int,
             fill: float | None, out_dtype: np.dtype | None = None) -> np.ndarray:
    """Warps one (H, W, C) image; ``fill`` None repeats edge pixels instead of filling."""
    L = loops("image.warp_loops")

    out_dtype = np.dtype(out_dtype or image.dtype)
    c = image.shape[2]
    if image.shape[0] and image.shape[1] and out_hw[0] > 0 and out_hw[1] > 0:
        done = _opencv_warp(image, matrix, out_hw, interp, fill, out_dtype)
        if done is not None:
            return done
    out = np.empty((int(out_hw[0]), int(out_hw[1]), c), out_dtype)
    if out.size == 0:
        return out
    if image.shape[0] == 0 or image.shape[1] == 0:
        if fill is None:
            raise ValueError("cannot warp an empty image without a fill_value")
        out[...] = fill
        return out
    src = np.ascontiguousarray(image if image.dtype != np.float16 else
                               image.astype(np.float32))
    fills = np.full(c, 0.0 if fill is None else float(fill), np.float32)
    is_int = out_dtype.kind in "iu"
    info = np.iinfo(out_dtype) if is_int else None
    lo, hi = (np.float32(info.min), np.float32(info.max)) if info else (np.float32(0),) * 2
    work = out if out_dtype != np.float16 else np.empty(out.shape, np.float32)
    loop = L.warp_nearest if int(interp) == NN else L.warp_linear
    loop(src, np.asarray(matrix, np.float64), fills, fill is None, work, is_int, lo, hi)
    if work is not out:
        out[...] = work
    return out
