"""The 1-D resampling pass of ``resize.py``, compiled with numba (GIL released).

``resample_rows`` filters a (A, B, C) array along its first axis: each output row is a
weighted sum of whole source rows, so the inner loop runs over contiguous memory and
vectorizes. The other axis is done by the same pass on a transposed array (OpenCV's
transpose is a fast blocked copy), which beats a gathering horizontal loop several times.

Taps are absolute source row indices (already clamped: edge rows repeat) with weights. A
pass that writes an integer type rounds half up (floor of x + 0.5) and saturates, as DALI
converts its float accumulators.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# No 'nnan'/'ninf': float images may hold NaN or inf and must propagate them.
_FAST = {"nsz", "arcp", "contract", "afn", "reassoc"}


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_float(src, rows, taps, dst):  # pragma: no cover - compiled
    """dst[a] = sum_k taps[a, k] * src[rows[a, k]] on rows flattened to 1-D."""
    n_out, support = rows.shape
    for a in range(n_out):
        out = dst[a]
        r0 = src[rows[a, 0]]
        t0 = taps[a, 0]
        for j in range(out.shape[0]):
            out[j] = t0 * np.float32(r0[j])
        for k in range(1, support):
            row = src[rows[a, k]]
            t = taps[a, k]
            for j in range(out.shape[0]):
                out[j] += t * np.float32(row[j])


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_int(src, rows, taps, dst, lo, hi):  # pragma: no cover - compiled
    """As ``_rows_float``, stored as round-half-up (floor(x + 0.5)), saturated integers."""
    n_out, support = rows.shape
    flat = dst.shape[1]
    acc = np.empty(flat, np.float32)
    for a in range(n_out):
        r0 = src[rows[a, 0]]
        t0 = taps[a, 0]
        for j in range(flat):
            acc[j] = t0 * np.float32(r0[j]) + np.float32(0.5)
        for k in range(1, support):
            row = src[rows[a, k]]
            t = taps[a, k]
            for j in range(flat):
                acc[j] += t * np.float32(row[j])
        out = dst[a]
        for j in range(flat):
            out[j] = np.floor(min(max(acc[j], lo), hi))


@njit(nogil=True, cache=True)
def nearest_taps(out_size, lo, scale, extent, accumulate):  # pragma: no cover - compiled
    """One tap per output pixel at floor(lo + (i + 0.5) * scale), in float32."""
    idx = np.empty((out_size, 1), np.intp)
    pos = lo + np.float32(0.5) * scale
    for i in range(out_size):
        if not accumulate:
            pos = lo + (np.float32(i) + np.float32(0.5)) * scale
        p = int(np.floor(pos))
        idx[i, 0] = min(max(p, 0), extent - 1)
        pos += scale
    return idx, np.ones((out_size, 1), np.float32)


@njit(nogil=True, cache=True)
def filter_taps(out_size, lo, scale, table, step, anchor, support, extent):  # pragma: no cover
    """Taps of a tabulated filter ``width`` source pixels wide (``step`` table samples per
    pixel, centered at ``anchor``), linearly interpolated and normalized to sum 1."""
    idx = np.empty((out_size, support), np.intp)
    taps = np.empty((out_size, support), np.float32)
    n = table.shape[0]
    start = lo + np.float32(0.5) * scale - np.float32(0.5) - anchor
    for i in range(out_size):
        pos = np.float32(i) * scale + start
        first = np.ceil(pos)
        frac = np.float32(first - pos)
        total = np.float32(0.0)
        for k in range(support):
            x = (frac + np.float32(k)) * step
            v = np.float32(0.0)
            if x > -1 and x < n:
                x0 = int(np.floor(x))
                d = x - np.float32(x0)
                f0 = table[x0] if x0 >= 0 else np.float32(0.0)
                f1 = table[x0 + 1] if x0 + 1 < n else np.float32(0.0)
                v = f0 + d * (f1 - f0)
            taps[i, k] = v
            total += v
            src = int(first) + k
            idx[i, k] = min(max(src, 0), extent - 1)
        if total != 0:
            for k in range(support):
                taps[i, k] /= total
    return idx, taps


def resample_rows(src: np.ndarray, rows: np.ndarray, taps: np.ndarray,
                  dst: np.ndarray) -> None:
    """Filters C-contiguous (A, ...) ``src`` along A into (A', ...) ``dst``."""
    src2 = src.reshape(src.shape[0], -1)
    dst2 = dst.reshape(dst.shape[0], -1)
    if dst.dtype.kind in "iu":
        info = np.iinfo(dst.dtype)
        _rows_int(src2, rows, taps, dst2, np.float32(info.min), np.float32(info.max))
    else:
        _rows_float(src2, rows, taps, dst2)
