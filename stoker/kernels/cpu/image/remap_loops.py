"""Sampling an image at given source points, compiled with numba (GIL released).

Output pixel (y, x) reads the source at point (sx[y, x], sy[y, x]) in continuous
coordinates where source pixel (i, j) covers [i, i + 1) x [j, j + 1), with
``sample_loops``' samplers (the ones warp_loops uses): nearest takes the pixel holding the
point, bilinear weighs the four pixel centers around it. Taps outside the image read
``fill`` (one value per channel). Integer outputs are rounded half away from zero and
saturated. fn.water, fn.sphere and fn.experimental.warp_perspective compute the points;
these loops read them.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.image.sample_loops import linear_row, nearest_row
from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True)
def remap_linear(src, sx, sy, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover
    acc = np.empty(src.shape[2], np.float32)
    for y in range(dst.shape[0]):
        linear_row(src, sx[y], sy[y], fill, clamp, acc, dst[y], is_int, lo, hi)


@njit(nogil=True, cache=True)
def remap_nearest(src, sx, sy, fill, clamp, dst, is_int, lo, hi):  # pragma: no cover
    for y in range(dst.shape[0]):
        nearest_row(src, sx[y], sy[y], fill, clamp, dst[y], is_int, lo, hi)
