"""Affine warp loops compiled with numba (GIL released): bilinear and nearest sampling.

Output pixel (x, y) reads the source at ``M @ (x + 0.5, y + 0.5)``, a point in continuous
coordinates where source pixel (i, j) covers [i, i + 1) x [j, j + 1). Bilinear weights
come from that point minus 0.5 (pixel centers); nearest takes the pixel holding it. Taps
outside the image take ``fill`` (one value per channel), or with ``clamp`` the nearest
edge pixel. Integer outputs are rounded half away from zero and saturated.
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
def warp_linear(src, m, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover - compiled
    h, w, c = src.shape
    oh, ow = dst.shape[0], dst.shape[1]
    m00, m01, m02 = np.float32(m[0, 0]), np.float32(m[0, 1]), np.float32(m[0, 2])
    m10, m11, m12 = np.float32(m[1, 0]), np.float32(m[1, 1]), np.float32(m[1, 2])
    half = np.float32(0.5)
    acc = np.empty(c, np.float32)
    for y in range(oh):
        fy = np.float32(y) + half
        for x in range(ow):
            fx = np.float32(x) + half
            sx = m00 * fx + m01 * fy + m02 - half
            sy = m10 * fx + m11 * fy + m12 - half
            x0f = np.floor(sx)
            y0f = np.floor(sy)
            ax = sx - x0f
            ay = sy - y0f
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
                dst[y, x, ch] = _convert(acc[ch], is_int, lo, hi)


@njit(nogil=True, cache=True)
def warp_nearest(src, m, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover - compiled
    h, w, c = src.shape
    oh, ow = dst.shape[0], dst.shape[1]
    m00, m01, m02 = np.float32(m[0, 0]), np.float32(m[0, 1]), np.float32(m[0, 2])
    m10, m11, m12 = np.float32(m[1, 0]), np.float32(m[1, 1]), np.float32(m[1, 2])
    half = np.float32(0.5)
    for y in range(oh):
        fy = np.float32(y) + half
        for x in range(ow):
            fx = np.float32(x) + half
            # Rounded from the pixel-center position, as DALI's sampler does.
            xx = int(np.floor((m00 * fx + m01 * fy + m02 - half) + half))
            yy = int(np.floor((m10 * fx + m11 * fy + m12 - half) + half))
            if clamp:
                yy = min(max(yy, 0), h - 1)
                xx = min(max(xx, 0), w - 1)
            if 0 <= yy < h and 0 <= xx < w:
                for ch in range(c):
                    dst[y, x, ch] = src[yy, xx, ch]
            else:
                for ch in range(c):
                    dst[y, x, ch] = _convert(fill[ch], is_int, lo, hi)
