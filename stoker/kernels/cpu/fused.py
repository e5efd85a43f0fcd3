"""Fused pixel loops compiled with numba: one pass, no temporaries, GIL released.

These replace chains of numpy passes (pad, gather, flip, subtract, divide, cast,
transpose) with one loop per output pixel. Windows may leave the image: outside pixels
take the fill value. Compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def crop_windows(src, ay, ax, mirror, fill, out):  # pragma: no cover - compiled
    """out[i, y, x, c] = src[i, ay[i] + y, ax[i] + x', c] (x' mirrored), fill outside."""
    n, h, w, c = src.shape
    ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for x in range(cw):
                sx = ax[i] + (cw - 1 - x if mirror[i] else x)
                if row_in and 0 <= sx < w:
                    for k in range(c):
                        out[i, y, x, k] = src[i, sy, sx, k]
                else:
                    for k in range(c):
                        out[i, y, x, k] = fill[k]


@njit(nogil=True, cache=True)
def crop_normalize_table(src, ay, ax, mirror, table, out, channels_first):  # pragma: no cover
    """uint8 windows through a (C, 257) table; entry 256 is the fill value."""
    n, h, w, c = src.shape
    if channels_first:
        ch, cw = out.shape[2], out.shape[3]
    else:
        ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for x in range(cw):
                sx = ax[i] + (cw - 1 - x if mirror[i] else x)
                inside = row_in and 0 <= sx < w
                for k in range(c):
                    v = table[k, src[i, sy, sx, k]] if inside else table[k, 256]
                    if channels_first:
                        out[i, k, y, x] = v
                    else:
                        out[i, y, x, k] = v


@njit(nogil=True, cache=True)
def crop_normalize_float(src, ay, ax, mirror, mean, inv_std, shift, fill, out,
                         channels_first):  # pragma: no cover
    """Any-type windows normalized as (v - mean) * inv_std + shift; fill outside."""
    n, h, w, c = src.shape
    if channels_first:
        ch, cw = out.shape[2], out.shape[3]
    else:
        ch, cw = out.shape[1], out.shape[2]
    for i in range(n):
        for y in range(ch):
            sy = ay[i] + y
            row_in = 0 <= sy < h
            for x in range(cw):
                sx = ax[i] + (cw - 1 - x if mirror[i] else x)
                inside = row_in and 0 <= sx < w
                for k in range(c):
                    if inside:
                        v = (np.float32(src[i, sy, sx, k]) - mean[i, k]) * inv_std[i, k] + shift
                    else:
                        v = fill[k]
                    if channels_first:
                        out[i, k, y, x] = v
                    else:
                        out[i, y, x, k] = v
