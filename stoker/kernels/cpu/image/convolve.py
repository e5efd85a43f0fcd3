"""2-D correlation of images with a user-given kernel (fn.filter) and the Laplacian's taps.

The image is moved to (H, W, rest) with every non-spatial axis (channels, frames) folded
into OpenCV's channels, padded by the border rule with numpy, and correlated by
``cv2.filter2D`` in float32 over the padded image: the border rules (reflect_101,
reflect_1001, wrap, clamp, constant) are numpy's, OpenCV sees no border at all. The result
is rounded half to even and saturated into the output type (DALI 2.4's filter, measured:
1.5 -> 2, 38.5 -> 38).
"""

from __future__ import annotations

import cv2
import numpy as np

from stoker.kernels.cpu.saturate import round_sat

PAD_MODES = {"reflect_101": "reflect", "reflect_1001": "symmetric", "wrap": "wrap",
             "clamp": "edge", "constant": "constant"}
_CV_MAX_CHANNELS = 512  # OpenCV's CV_CN_MAX


def _round_even_sat(values: np.ndarray, out_type: np.dtype) -> np.ndarray:
    if out_type.kind not in "iu":
        return values.astype(out_type, copy=False)
    info = np.iinfo(out_type)
    return np.clip(np.rint(values), info.min, info.max).astype(out_type)


# Border rules OpenCV's filter2D applies itself (its constant border is 0 only).
_CV_BORDERS = {"reflect_101": cv2.BORDER_REFLECT_101, "reflect_1001": cv2.BORDER_REFLECT,
               "clamp": cv2.BORDER_REPLICATE, "constant": cv2.BORDER_CONSTANT}
# Types filter2D reads and writes, rounding half to even (cvRound) and saturating as DALI.
_CV_TYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int16),
             np.dtype(np.float32))


def _direct(img: np.ndarray, taps: np.ndarray, anchor: tuple[int, int], border: str,
            fill: float, valid: bool, out_type: np.dtype) -> np.ndarray | None:
    """filter2D straight on the (H, W, C) image, when it can give the result: no padding
    copy, no float32 image, OpenCV's SIMD loops. None when it cannot."""
    if img.dtype not in _CV_TYPES or out_type not in (img.dtype, np.dtype(np.float32)) or \
            img.shape[2] > 4 or (border == "constant" and fill != 0) or \
            (not valid and border not in _CV_BORDERS):
        return None
    kh, kw = taps.shape
    ay, ax = (0, 0) if valid else anchor
    depth = cv2.CV_32F if out_type == np.float32 else -1
    if depth == cv2.CV_32F and img.dtype != np.float32 and kh * kw > 9:
        # Converted first, larger kernels run in filter2D's float32 SIMD loop: 5x5 on
        # 480x640x3 uint8, 9.7 -> 5.8 ms (the sums differ from the integer path's by float
        # rounding, as the two paths' do)
        img = img.astype(np.float32)
    got = cv2.filter2D(np.ascontiguousarray(img), depth, np.ascontiguousarray(taps, np.float32),
                       anchor=(ax, ay), borderType=_CV_BORDERS.get(border, cv2.BORDER_CONSTANT))
    got = got.reshape(img.shape[0], img.shape[1], -1)
    if valid:  # the 'valid' pixels: where the kernel, anchored at its corner, fits
        got = got[:img.shape[0] - kh + 1, :img.shape[1] - kw + 1]
    return got


def correlate2d(x: np.ndarray, h_axis: int, w_axis: int, taps: np.ndarray,
                anchor: tuple[int, int], border: str, fill: float, valid: bool,
                out_type: np.dtype) -> np.ndarray:
    """``x`` correlated with ``taps`` (kh, kw) over axes (h_axis, w_axis).

    ``anchor`` (ay, ax) is the kernel cell over the output pixel; ``valid`` keeps only the
    pixels where the kernel lies inside the image (then ``anchor`` and the border do not
    matter)."""
    moved = np.moveaxis(x, (h_axis, w_axis), (0, 1))
    rest = moved.shape[2:]
    height, width = moved.shape[:2]
    kh, kw = taps.shape
    if valid and (height < kh or width < kw):
        raise ValueError(f"mode 'valid' needs an image at least as large as the filter "
                         f"({kh}x{kw}), got {height}x{width}")
    fast = _direct(moved.reshape(height, width, -1), taps, anchor, border, fill, valid,
                   out_type)
    if fast is not None:
        out = fast.reshape(fast.shape[0], fast.shape[1], *rest)
        return np.moveaxis(out, (0, 1), (h_axis, w_axis))
    img = moved.reshape(height, width, -1).astype(np.float32)
    if valid:
        out_h, out_w = height - kh + 1, width - kw + 1
    else:
        ay, ax = anchor
        pads = ((ay, kh - 1 - ay), (ax, kw - 1 - ax), (0, 0))
        if border == "constant":
            img = np.pad(img, pads, mode="constant", constant_values=fill)
        else:
            img = np.pad(img, pads, mode=PAD_MODES[border])
        out_h, out_w = height, width
    k = np.ascontiguousarray(taps, np.float32)
    res = np.empty((out_h, out_w, img.shape[2]), np.float32)
    for c0 in range(0, img.shape[2], _CV_MAX_CHANNELS):
        part = np.ascontiguousarray(img[:, :, c0:c0 + _CV_MAX_CHANNELS])
        got = cv2.filter2D(part, cv2.CV_32F, k, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
        res[:, :, c0:c0 + _CV_MAX_CHANNELS] = got.reshape(part.shape)[:out_h, :out_w]
    out = _round_even_sat(res, out_type).reshape(out_h, out_w, *rest)
    return np.moveaxis(out, (0, 1), (h_axis, w_axis))


# -- Laplacian: a sum of separable second derivatives ------------------------------------------

def binomial(size: int) -> np.ndarray:
    """Smoothing window: the binomial coefficients of ``size`` taps ([1, 2, 1] for 3)."""
    row = np.ones(1)
    for _ in range(size - 1):
        row = np.convolve(row, [1.0, 1.0])
    return row


def second_derivative(size: int) -> np.ndarray:
    """Derivative window: [1, -2, 1] smoothed by binomial(size - 2) ([1, 0, -2, 0, 1] for 5)."""
    return np.convolve([1.0, -2.0, 1.0], binomial(size - 2))


def _correlate_axis(x: np.ndarray, axis: int, taps: np.ndarray) -> np.ndarray:
    """``x`` (float32) correlated along ``axis`` with symmetric ``taps``, reflect_101."""
    if taps.size == 1:
        return x * np.float32(taps[0])
    moved = np.moveaxis(x, axis, 0)
    length = moved.shape[0]
    flat = moved.reshape(length, -1)
    r = taps.size // 2
    padded = np.pad(flat, ((r, r), (0, 0)), mode="reflect")
    col = np.ascontiguousarray(taps, np.float32).reshape(-1, 1)
    out = np.empty_like(flat)
    for c0 in range(0, flat.shape[1], 1 << 20):  # keep OpenCV's Mat widths moderate
        part = np.ascontiguousarray(padded[:, c0:c0 + (1 << 20)])
        out[:, c0:c0 + (1 << 20)] = cv2.filter2D(part, cv2.CV_32F, col, anchor=(0, 0),
                                                  borderType=cv2.BORDER_CONSTANT)[:length]
    return np.moveaxis(out.reshape(moved.shape), 0, axis)


def laplacian(x: np.ndarray, axes: list[int], windows: list[int],
              smoothing: list[list[int]], scales: list[float], out_type: np.dtype) -> np.ndarray:
    """Sum over ``axes`` of the second derivative along axis i (window ``windows[i]``),
    smoothed along each other spatial axis j by a binomial window of ``smoothing[i][j]``
    taps, times ``scales[i]``; borders reflect_101."""
    src = np.ascontiguousarray(x, np.float32)
    total = None
    hw_image = len(axes) == 2 and axes == [0, 1] and src.ndim <= 3 and \
        (src.ndim == 2 or src.shape[2] <= _CV_MAX_CHANNELS)
    for i in range(len(axes)):
        taps = [second_derivative(windows[i]) * scales[i] if j == i else
                binomial(smoothing[i][j]) for j in range(len(axes))]
        if hw_image:  # one OpenCV call per partial derivative
            part = cv2.sepFilter2D(src, cv2.CV_32F, taps[1].astype(np.float32),
                                   taps[0].astype(np.float32),
                                   borderType=cv2.BORDER_REFLECT_101).reshape(src.shape)
        else:
            part = src
            for j, other in enumerate(axes):
                part = _correlate_axis(part, other, taps[j])
        total = part if total is None else total + part
    if out_type.kind in "iu":  # half away from zero and saturated, in place in float32
        info = np.iinfo(out_type)
        total += np.copysign(np.float32(0.5), total)
        np.trunc(total, out=total)
        np.clip(total, info.min, info.max, out=total)
        return total.astype(out_type)
    return round_sat(total, out_type)
