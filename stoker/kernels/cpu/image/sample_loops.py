"""Reading a row of output pixels from source points, compiled with numba: the sampling
that ``warp_loops`` (points from an affine matrix) and ``remap_loops`` (point maps) share.

Source pixel (i, j) covers [i, i + 1) x [j, j + 1). Output pixel ``out[i]`` reads the
source at point (xs[i], ys[i]): ``linear_row`` weighs the four pixel centers around it (the
point minus 0.5), ``nearest_row`` takes the pixel holding it. Taps outside the image read
``fill`` (one value per channel), or with ``clamp`` the nearest edge pixel. Integer outputs
are rounded half away from zero and saturated to [lo, hi].

The callers pass a row at a time, not a pixel: a compiled call that takes arrays costs
reference counting per call (inlined or not), which at one call per pixel made the loops
several times slower.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True, inline="always")
def convert(v, is_int, lo, hi):  # pragma: no cover - compiled
    if is_int:
        v = np.floor(v + 0.5) if v >= 0 else -np.floor(-v + 0.5)
        return min(max(v, lo), hi)
    return v


@njit(nogil=True, cache=True)
def linear_row(src, xs, ys, fill, clamp, acc, out, is_int, lo, hi):  # pragma: no cover
    """out[i] = the bilinear sample at (xs[i], ys[i]); ``acc`` is float32 scratch of one
    value per channel."""
    h, w, c = src.shape
    half = np.float32(0.5)
    for i in range(out.shape[0]):
        px = xs[i] - half
        py = ys[i] - half
        x0f = np.floor(px)
        y0f = np.floor(py)
        ax = px - x0f
        ay = py - y0f
        x0 = int(x0f)
        y0 = int(y0f)
        for ch in range(c):
            acc[ch] = 0.0
        for dy in range(2):
            yy = y0 + dy
            wy = ay if dy else np.float32(1.0) - ay
            for dx in range(2):
                xx = x0 + dx
                wgt = wy * (ax if dx else np.float32(1.0) - ax)
                if clamp:
                    cy = min(max(yy, 0), h - 1)
                    cx = min(max(xx, 0), w - 1)
                    for ch in range(c):
                        acc[ch] += wgt * np.float32(src[cy, cx, ch])
                elif 0 <= yy < h and 0 <= xx < w:
                    for ch in range(c):
                        acc[ch] += wgt * np.float32(src[yy, xx, ch])
                else:
                    for ch in range(c):
                        acc[ch] += wgt * fill[ch]
        for ch in range(c):
            out[i, ch] = convert(acc[ch], is_int, lo, hi)


@njit(nogil=True, cache=True)
def nearest_row(src, xs, ys, fill, clamp, out, is_int, lo, hi):  # pragma: no cover
    """out[i] = the source pixel holding point (xs[i], ys[i])."""
    h, w, c = src.shape
    for i in range(out.shape[0]):
        xx = int(np.floor(xs[i]))
        yy = int(np.floor(ys[i]))
        if clamp:
            yy = min(max(yy, 0), h - 1)
            xx = min(max(xx, 0), w - 1)
        if 0 <= yy < h and 0 <= xx < w:
            for ch in range(c):
                out[i, ch] = src[yy, xx, ch]
        else:
            for ch in range(c):
                out[i, ch] = convert(fill[ch], is_int, lo, hi)
