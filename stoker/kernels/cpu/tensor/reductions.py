"""Per-sample reductions (sum, mean, min, max) over some axes, with DALI's result types:
integer sums widen to 64 bits of the same signedness, means are float32 unless asked
otherwise, min/max keep the input's type."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_SUPPORTED = frozenset("iuf")


def sum_type(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    if dtype.kind == "i":
        return np.dtype(np.int64)
    return np.dtype(np.float32)


# Types OpenCV's per-channel statistics take (cv2.mean sums in double precision).
_CV_TYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16,
                                            np.int32, np.float32))


def _image_stats(x: np.ndarray, kind: str) -> np.ndarray | None:
    """Over H and W of an HWC image (up to 4 channels), per channel, in OpenCV's SIMD loops:
    numpy's reduction over the leading axes of interleaved channels ran ~100x slower
    (5 ms for a 224x224x3 image)."""
    import cv2

    c = x.shape[2]
    if kind in ("min", "max"):
        planes = cv2.split(np.ascontiguousarray(x)) if c > 1 else [x[:, :, 0]]
        pick = 0 if kind == "min" else 1
        return np.array([cv2.minMaxLoc(p)[pick] for p in planes], x.dtype)
    means = np.array(cv2.mean(np.ascontiguousarray(x))[:c])
    total = means * (x.shape[0] * x.shape[1])
    return np.rint(total) if x.dtype.kind in "iu" else total  # integer sums are exact


def reduce_sample(x: np.ndarray, kind: str, axes: Sequence[int] | None, keep_dims: bool,
                  out_dtype: np.dtype | None) -> np.ndarray:
    if x.dtype.kind not in _SUPPORTED or x.dtype == np.float64:
        raise TypeError(f"unsupported input type {x.dtype} (integers and float32 only)")
    axis = None if axes is None else tuple(axes)
    if axis is not None and x.ndim == 3 and all(-3 <= a < 3 for a in axis) and \
            sorted(a % 3 for a in axis) == [0, 1] and \
            1 <= x.shape[2] <= 4 and x.dtype in _CV_TYPES and x.shape[0] * x.shape[1] > 0:
        stats = _image_stats(x, kind)
        if kind in ("min", "max"):
            out = stats
        elif kind == "sum":
            acc = sum_type(x.dtype) if out_dtype is None else out_dtype
            out = stats.astype(acc)
        else:
            n = x.shape[0] * x.shape[1]
            out = (stats.astype(np.float32) * np.float32(1.0 / n)).astype(
                np.float32 if out_dtype is None else out_dtype)
        return out.reshape(1, 1, -1) if keep_dims else out
    if axis is not None:
        bad = [a for a in axis if not -x.ndim <= a < x.ndim]
        if bad:
            raise ValueError(f"axis {bad[0]} is out of range for a {x.ndim}-d sample")
    if kind in ("min", "max"):
        if x.size == 0 and (axis is None or any(x.shape[a] == 0 for a in axis)):
            raise ValueError(f"cannot take the {kind} of an empty extent")
        out = (np.min if kind == "min" else np.max)(x, axis=axis, keepdims=keep_dims)
        return np.asarray(out, x.dtype)
    if kind == "sum":
        acc = sum_type(x.dtype) if out_dtype is None else out_dtype
        return np.asarray(np.sum(x, axis=axis, keepdims=keep_dims, dtype=acc), acc)
    # mean as DALI computes it (measured): the sum as float32 times float32(1 / n); a
    # division gives the neighbouring float32 now and then (113.95 for DALI's 113.950005).
    total = np.sum(x, axis=axis, keepdims=keep_dims, dtype=np.float64).astype(np.float32)
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    out = total * np.float32(1.0 / max(n, 1))
    return np.asarray(out, np.float32 if out_dtype is None else out_dtype)
