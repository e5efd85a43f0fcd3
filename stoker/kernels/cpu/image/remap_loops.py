"""Sampling an image at given source points, compiled with numba (GIL released).

Output pixel (y, x) reads the source at point (sx[y, x], sy[y, x]) in continuous
coordinates where source pixel (i, j) covers [i, i + 1) x [j, j + 1), as in warp_loops:
nearest takes the pixel holding the point, bilinear weighs the four pixel centers around
it. Taps outside the image read ``fill`` (one value per channel). Integer outputs are
rounded half away from zero and saturated. fn.water, fn.sphere and
fn.experimental.warp_perspective compute the points; these loops read them.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True, inline="always")
def _convert(v, is_int, lo, hi):  # pragma: no cover - compiled
    if is_int:
        v = np.floor(v + 0.5) if v >= 0 else -np.floor(-v + 0.5)
        return min(max(v, lo), hi)
    return v


@njit(nogil=True, cache=True)
def remap_linear(src, sx, sy, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover
    h, w, c = src.shape
    oh, ow = dst.shape[0], dst.shape[1]
    half = np.float32(0.5)
    acc = np.empty(c, np.float32)
    for y in range(oh):
        for x in range(ow):
            px = sx[y, x] - half
            py = sy[y, x] - half
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
                        yy2 = min(max(yy, 0), h - 1)
                        xx2 = min(max(xx, 0), w - 1)
                        for ch in range(c):
                            acc[ch] += wgt * np.float32(src[yy2, xx2, ch])
                    elif 0 <= yy < h and 0 <= xx < w:
                        for ch in range(c):
                            acc[ch] += wgt * np.float32(src[yy, xx, ch])
                    else:
                        for ch in range(c):
                            acc[ch] += wgt * fill[ch]
            for ch in range(c):
                dst[y, x, ch] = _convert(acc[ch], is_int, lo, hi)


@njit(nogil=True, cache=True)
def remap_nearest(src, sx, sy, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover
    h, w, c = src.shape
    oh, ow = dst.shape[0], dst.shape[1]
    for y in range(oh):
        for x in range(ow):
            xx = int(np.floor(sx[y, x]))
            yy = int(np.floor(sy[y, x]))
            if clamp:
                yy = min(max(yy, 0), h - 1)
                xx = min(max(xx, 0), w - 1)
            if 0 <= yy < h and 0 <= xx < w:
                for ch in range(c):
                    dst[y, x, ch] = src[yy, xx, ch]
            else:
                for ch in range(c):
                    dst[y, x, ch] = _convert(fill[ch], is_int, lo, hi)
