"""Fused pixel loops compiled with numba: one pass, no temporaries, GIL released.

These replace chains of numpy passes (pad, gather, flip, subtract, divide, cast,
transpose) with one loop per output row. Windows may leave the image: outside pixels take
the fill value. Loops run over output memory in order (channel planes for CHW output,
pixels for HWC), which measured ~3x faster than a per-pixel loop writing all planes.
Compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True)
def crop_windows(src, ay, ax, mirror, fill, out):  # pragma: no cover - compiled
    """out[i, y, x, :] = src[i, ay[i] + y, ax[i] + x', :] (x' mirrored), fill outside."""
    n, h, w, c = src.shape
    ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        step = -1 if mirror[i] else 1
        x0 = ax[i] + (cw - 1 if mirror[i] else 0)
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for x in range(cw):
                sx = x0 + step * x
                if row_in and 0 <= sx < w:
                    for k in range(c):
                        out[i, y, x, k] = src[i, sy, sx, k]
                else:
                    for k in range(c):
                        out[i, y, x, k] = fill[k]


@njit(nogil=True, cache=True)
def crop_normalize_table_chw(src, ay, ax, mirror, table, out):  # pragma: no cover
    """uint8 windows through a (C, 257) table into CHW; entry 256 is the fill value."""
    n, h, w, c = src.shape
    ch, cw = out.shape[2], out.shape[3]
    for i in range(n):
        step = -1 if mirror[i] else 1
        x0 = ax[i] + (cw - 1 if mirror[i] else 0)
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for k in range(c):
                tk = table[k]
                fill = tk[256]
                plane_row = out[i, k, y]
                if not row_in:
                    plane_row[:] = fill
                    continue
                row = src[i, sy, :, k]
                for x in range(cw):
                    sx = x0 + step * x
                    plane_row[x] = tk[row[sx]] if 0 <= sx < w else fill


@njit(nogil=True, cache=True)
def crop_normalize_table_hwc(src, ay, ax, mirror, table, out):  # pragma: no cover
    """uint8 windows through a (C, 257) table into HWC; entry 256 is the fill value."""
    n, h, w, c = src.shape
    ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        step = -1 if mirror[i] else 1
        x0 = ax[i] + (cw - 1 if mirror[i] else 0)
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for x in range(cw):
                sx = x0 + step * x
                inside = row_in and 0 <= sx < w
                for k in range(c):
                    out[i, y, x, k] = table[k, src[i, sy, sx, k]] if inside else table[k, 256]


@njit(nogil=True, cache=True)
def crop_normalize_float(src, ay, ax, mirror, mean, inv_std, shift, fill, out,
                         channels_first):  # pragma: no cover - compiled
    """Any-type windows normalized as (v - mean) * inv_std + shift (``normalize_value``);
    fill outside."""
    n, h, w, c = src.shape
    if channels_first:
        ch, cw = out.shape[2], out.shape[3]
    else:
        ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        step = -1 if mirror[i] else 1
        x0 = ax[i] + (cw - 1 if mirror[i] else 0)
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            if channels_first:
                for k in range(c):
                    m, s = mean[i, k], inv_std[i, k]
                    for x in range(cw):
                        sx = x0 + step * x
                        if row_in and 0 <= sx < w:
                            out[i, k, y, x] = normalize_value(src[i, sy, sx, k], m, s, shift)
                        else:
                            out[i, k, y, x] = fill[k]
            else:
                for x in range(cw):
                    sx = x0 + step * x
                    inside = row_in and 0 <= sx < w
                    for k in range(c):
                        if inside:
                            out[i, y, x, k] = normalize_value(src[i, sy, sx, k], mean[i, k],
                                                              inv_std[i, k], shift)
                        else:
                            out[i, y, x, k] = fill[k]



@njit(nogil=True, cache=True, inline="always")
def normalize_value(v, mean, inv_std, shift):  # pragma: no cover - compiled
    """(v - mean) * inv_std + shift of float32 factors, rounded to float32. The product is
    exact in float64 (24 x 24 bits), so whether the compiler fuses the multiply-add or
    not, every loop gets the same value (float32 arithmetic would differ by one unit in
    the last place where it is fused)."""
    return np.float32(np.float64(v - mean) * np.float64(inv_std) + np.float64(shift))

