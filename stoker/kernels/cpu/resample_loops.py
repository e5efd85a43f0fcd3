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

from stoker.kernels.cpu.fused import normalize_value

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
    """Filters (A, ...) ``src`` along A into (A', ...) ``dst`` (each row of both one block
    of memory; the rows may lie apart)."""
    src2 = src.reshape(src.shape[0], -1)
    dst2 = dst.reshape(dst.shape[0], -1)
    if dst.dtype.kind in "iu":
        lo, hi = _limits(dst.dtype)
        _rows_int(src2, rows, taps, dst2, lo, hi)
    else:
        _rows_float(src2, rows, taps, dst2)


_LIMITS: dict = {}


def _limits(dtype: np.dtype) -> tuple[np.float32, np.float32]:
    """The integer type's range as float32 (np.iinfo costs microseconds per call)."""
    lim = _LIMITS.get(dtype)
    if lim is None:
        info = np.iinfo(dtype)
        lim = _LIMITS[dtype] = (np.float32(info.min), np.float32(info.max))
    return lim




# -- the last pass with an output stage (resize -> crop_mirror_normalize fused) ---------------
# Each result row is accumulated exactly as ``_rows_int`` / ``_rows_float`` accumulate it,
# so the output equals resizing to an image and then normalizing it; the stage then
# scatters the row's interleaved channels into channel planes: dst[k, a, b] is channel k
# of pixel b of result row a (dst may be a strided view: an HWC output seen as planes).


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_table(src, rows, taps, table, dst):  # pragma: no cover - compiled
    """Rounded and saturated to uint8 as ``_rows_int`` does, then v of channel k stored as
    table[k, v]."""
    n_out, support = rows.shape
    c, nb = dst.shape[0], dst.shape[2]
    flat = nb * c
    acc = np.empty(flat, np.float32)
    level = np.empty(flat, np.uint8)
    for a in range(n_out):
        _accumulate(src, rows, taps, a, acc, np.float32(0.5))
        for j in range(flat):
            level[j] = np.uint8(np.floor(min(max(acc[j], np.float32(0.0)), np.float32(255.0))))
        for k in range(c):
            tk = table[k]
            out = dst[k, a]
            for b in range(nb):
                out[b] = tk[level[b * c + k]]


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_levels(src, rows, taps, mean, inv_std, shift, dst):  # pragma: no cover - compiled
    """Rounded and saturated to uint8 values as ``_rows_int`` does (kept as float32), then
    normalized as (v - mean[k]) * inv_std[k] + shift."""
    n_out, support = rows.shape
    flat = dst.shape[2] * dst.shape[0]
    acc = np.empty(flat, np.float32)
    for a in range(n_out):
        _accumulate(src, rows, taps, a, acc, np.float32(0.5))
        for j in range(flat):
            acc[j] = np.floor(min(max(acc[j], np.float32(0.0)), np.float32(255.0)))
        _store_normalized(acc, mean, inv_std, shift, dst, a)


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_affine(src, rows, taps, mean, inv_std, shift, dst):  # pragma: no cover - compiled
    """Accumulated as ``_rows_float`` does, stored as (v - mean[k]) * inv_std[k] + shift."""
    flat = dst.shape[2] * dst.shape[0]
    acc = np.empty(flat, np.float32)
    for a in range(rows.shape[0]):
        _accumulate(src, rows, taps, a, acc, np.float32(0.0))
        _store_normalized(acc, mean, inv_std, shift, dst, a)


@njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _accumulate(src, rows, taps, a, acc, bias):  # pragma: no cover - compiled
    # The order of ``_rows_int``: bias (0.5 for integers, none for floats) after tap 0.
    r0 = src[rows[a, 0]]
    t0 = taps[a, 0]
    if bias != 0:
        for j in range(acc.shape[0]):
            acc[j] = t0 * r0[j] + bias
    else:
        for j in range(acc.shape[0]):
            acc[j] = t0 * r0[j]
    for k in range(1, rows.shape[1]):
        row = src[rows[a, k]]
        t = taps[a, k]
        for j in range(acc.shape[0]):
            acc[j] += t * row[j]


@njit(nogil=True, cache=True)
def _store_normalized(acc, mean, inv_std, shift, dst, a):  # pragma: no cover - compiled
    # crop_mirror_normalize's arithmetic (fused.normalize_value), into the channel planes.
    c, nb = dst.shape[0], dst.shape[2]
    if c == 3:  # a constant stride lets the compiler de-interleave with vector shuffles
        o0, o1, o2 = dst[0, a], dst[1, a], dst[2, a]
        m0, m1, m2 = mean[0], mean[1], mean[2]
        s0, s1, s2 = inv_std[0], inv_std[1], inv_std[2]
        for b in range(nb):
            o0[b] = normalize_value(acc[3 * b], m0, s0, shift)
            o1[b] = normalize_value(acc[3 * b + 1], m1, s1, shift)
            o2[b] = normalize_value(acc[3 * b + 2], m2, s2, shift)
        return
    for k in range(c):
        m, s = mean[k], inv_std[k]
        out = dst[k, a]
        for b in range(nb):
            out[b] = normalize_value(acc[b * c + k], m, s, shift)


def resample_rows_normalized(src: np.ndarray, rows: np.ndarray, taps: np.ndarray,
                             dst: np.ndarray, table: np.ndarray | None,
                             mean: np.ndarray | None = None, inv_std: np.ndarray | None = None,
                             shift: float = 0.0, quantize: bool = True) -> None:
    """``resample_rows`` of float32 (A, B, C) ``src`` into channel planes ``dst`` (C, A', B):
    with ``quantize``, rounded to uint8 values (as a uint8 resize stores them), then looked
    up in ``table`` (C, 257) or normalized to (v - mean[k]) * inv_std[k] + shift."""
    src2 = src.reshape(src.shape[0], -1)
    if table is not None:
        _rows_table(src2, rows, taps, table, dst)
    elif quantize:
        _rows_levels(src2, rows, taps, mean, inv_std, np.float32(shift), dst)
    else:
        _rows_affine(src2, rows, taps, mean, inv_std, np.float32(shift), dst)
