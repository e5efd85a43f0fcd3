"""Affine warp loops compiled with numba (GIL released): bilinear and nearest sampling.

Output pixel (x, y) reads the source at ``M @ (x + 0.5, y + 0.5)``, a point in continuous
coordinates where source pixel (i, j) covers [i, i + 1) x [j, j + 1), with
``sample_loops``' samplers (the ones remap_loops uses). Bilinear weights come from that
point minus 0.5 (pixel centers); nearest takes the pixel holding it. Taps outside the
image take ``fill`` (one value per channel), or with ``clamp`` the nearest edge pixel.
Integer outputs are rounded half away from zero and saturated.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.image.sample_loops import linear_row, nearest_row
from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True, inline="always")
def _row_points(m, y, xs, ys):  # pragma: no cover - compiled
    """The source points of output row ``y``: M @ (x + 0.5, y + 0.5) for every x."""
    m00, m01, m02 = np.float32(m[0, 0]), np.float32(m[0, 1]), np.float32(m[0, 2])
    m10, m11, m12 = np.float32(m[1, 0]), np.float32(m[1, 1]), np.float32(m[1, 2])
    half = np.float32(0.5)
    fy = np.float32(y) + half
    for x in range(xs.shape[0]):
        fx = np.float32(x) + half
        xs[x] = m00 * fx + m01 * fy + m02
        ys[x] = m10 * fx + m11 * fy + m12


@njit(nogil=True, cache=True)
def warp_linear(src, m, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover - compiled
    xs = np.empty(dst.shape[1], np.float32)
    ys = np.empty(dst.shape[1], np.float32)
    acc = np.empty(src.shape[2], np.float32)
    for y in range(dst.shape[0]):
        _row_points(m, y, xs, ys)
        linear_row(src, xs, ys, fill, clamp, acc, dst[y], is_int, lo, hi)


@njit(nogil=True, cache=True)
def warp_nearest(src, m, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover - compiled
    xs = np.empty(dst.shape[1], np.float32)
    ys = np.empty(dst.shape[1], np.float32)
    half = np.float32(0.5)
    for y in range(dst.shape[0]):
        _row_points(m, y, xs, ys)
        # Rounded from the pixel-center position, as DALI's sampler does.
        for x in range(xs.shape[0]):
            xs[x] = (xs[x] - half) + half
            ys[x] = (ys[x] - half) + half
        nearest_row(src, xs, ys, fill, clamp, dst[y], is_int, lo, hi)
