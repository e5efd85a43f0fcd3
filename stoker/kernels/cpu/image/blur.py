"""Separable Gaussian blur over the spatial axes of a sample, borders mirrored (101).

DALI's rules, measured: a window of 0 becomes ``2 * ceil(3 * sigma) + 1``; a sigma of 0
becomes OpenCV's ``0.3 * ((window - 1) / 2 - 1) + 0.8``; taps are normalized to sum 1;
borders reflect without repeating the edge (``dcb|abcd|cba``). Filtering uses OpenCV's
separable filter, which releases the GIL; integer results round to nearest and saturate.
"""

from __future__ import annotations

import math

import numpy as np

from stoker.kernels.cpu.saturate import round_sat

F32 = np.float32
_CV_CHANNELS = 512  # OpenCV's limit on the channels of one image
# Types OpenCV filters directly (and keeps as output type); others go through float32.
_NATIVE = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def gaussian_taps(sigma: float, window: int) -> np.ndarray:
    """Normalized float32 taps for one axis; either argument may be 0 (derived)."""
    if window <= 0:
        window = 2 * math.ceil(3 * sigma) + 1
    if sigma <= 0:
        sigma = 0.3 * ((window - 1) * 0.5 - 1) + 0.8
    x = np.arange(window, dtype=np.float64) - (window - 1) / 2
    taps = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return (taps / taps.sum()).astype(F32)


def _filter2d(img: np.ndarray, ky: np.ndarray, kx: np.ndarray, ddepth: int) -> np.ndarray:
    """One (rows, cols[, C]) image through OpenCV, in groups of at most 512 channels."""
    import cv2

    def one(a: np.ndarray) -> np.ndarray:
        return cv2.sepFilter2D(np.ascontiguousarray(a), ddepth, kx, ky,
                               borderType=cv2.BORDER_REFLECT_101)

    if img.ndim == 2 or img.shape[2] <= _CV_CHANNELS:
        out = one(img)
        return out.reshape(*img.shape[:2], -1) if img.ndim == 3 else out
    parts = [one(img[..., k:k + _CV_CHANNELS]).reshape(*img.shape[:2], -1)
             for k in range(0, img.shape[2], _CV_CHANNELS)]
    return np.concatenate(parts, axis=2)


def _blur_block(block: np.ndarray, taps: list[np.ndarray], ddepth: int) -> np.ndarray:
    """Blurs (S1[, S2[, S3]], C) with one taps array per spatial axis."""
    one = np.ones(1, F32)
    if len(taps) == 1:  # (S, C): the signal runs down the rows of a one-column image
        return _filter2d(block[:, None, :], taps[0], one, ddepth)[:, 0]
    if len(taps) == 2:
        return _filter2d(block, taps[0], taps[1], ddepth)
    # Three axes: each depth slice in-plane, then along depth with the plane as one row.
    planes = np.stack([_filter2d(block[d], taps[1], taps[2], ddepth)
                       for d in range(block.shape[0])])
    flat = planes.reshape(planes.shape[0], -1)
    return _filter2d(flat, taps[0], one, ddepth).reshape(planes.shape)


def gaussian_blur(sample: np.ndarray, spatial: list[int], taps: list[np.ndarray],
                  out_dtype: np.dtype) -> np.ndarray:
    """Blurs one sample along the axes ``spatial`` (each with its taps).

    Non-spatial axes (frames, channels) are kept apart: a trailing channel axis is
    filtered as interleaved channels, any other one slice by slice.
    """
    import cv2

    out_dtype = np.dtype(out_dtype)
    work = sample
    native = sample.dtype in [np.dtype(t) for t in _NATIVE]
    if not native:
        work = sample.astype(F32)
    float_out = out_dtype.kind == "f" and work.dtype != out_dtype and work.dtype.kind != "f"
    ddepth = cv2.CV_32F if float_out else -1
    if len(spatial) == 3:  # keep the depth pass in float, round once at the end
        if work.dtype.kind != "f":
            work = work.astype(F32)
        ddepth = -1
    ndim = sample.ndim
    trailing = [ndim - 1] if ndim - 1 not in spatial else []
    leading = [a for a in range(ndim) if a not in spatial and a not in trailing]
    order = leading + list(spatial) + trailing
    moved = np.transpose(work, order)
    lead_shape = moved.shape[:len(leading)]
    blocks = moved.reshape(-1, *moved.shape[len(leading):])
    if not trailing:
        blocks = blocks[..., None]
    outs = [_blur_block(b, taps, ddepth) for b in blocks]
    res = np.stack(outs) if outs else np.empty(blocks.shape, work.dtype)
    if not trailing:
        res = res[..., 0]
    res = res.reshape(*lead_shape, *res.shape[1:])
    res = np.transpose(res, np.argsort(order))
    if res.dtype != out_dtype:
        res = round_sat(res, out_dtype)
    return np.ascontiguousarray(res)
