"""Per-pixel loops compiled with numba (color maps, grid mask, equalize); GIL released.

Arithmetic is float32 in the order DALI's CPU kernels use, and integer results are rounded
half away from zero and saturated (``_round_sat``), so outputs match DALI's to the level.
Images arrive flattened: (n, pixels) or (n, pixels, 3), one parameter set per sample.
Compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True, inline="always")
def _round_sat(v, lo, hi):  # pragma: no cover - compiled
    # Half away from zero, then clamp; the caller's store into an integer array truncates.
    # float64: v + 0.5 is exact, so 0.49999997 does not round up as it would in float32.
    d = np.float64(v)
    d = d + 0.5 if d >= 0 else d - 0.5
    return min(max(d, lo), hi)


@njit(nogil=True, cache=True)
def lut_apply(src, lut, out):  # pragma: no cover - compiled
    """out[i, p] = lut[i, src[i, p]] for uint8 src: a per-sample 256-entry table."""
    n, npx = src.shape
    for i in range(n):
        row = lut[i]
        for p in range(npx):
            out[i, p] = row[src[i, p]]


@njit(nogil=True, cache=True)
def affine(src, mul, add, lo, hi, rounds, out):  # pragma: no cover - compiled
    """out = src * mul[i] + add[i] in float32, rounded and saturated when ``rounds``."""
    n, npx = src.shape
    for i in range(n):
        m = mul[i]
        a = add[i]
        for p in range(npx):
            v = np.float32(src[i, p]) * m + a
            if rounds:
                out[i, p] = _round_sat(v, lo, hi)
            else:
                out[i, p] = v


@njit(nogil=True, cache=True)
def matrix3(src, mat, off, lo, hi, rounds, out):  # pragma: no cover - compiled
    """out[c] = sum_k mat[i, c, k] * src[k] + off[i, c] per pixel of (n, P, 3) images."""
    n, npx = src.shape[0], src.shape[1]
    for i in range(n):
        m00, m01, m02 = mat[i, 0, 0], mat[i, 0, 1], mat[i, 0, 2]
        m10, m11, m12 = mat[i, 1, 0], mat[i, 1, 1], mat[i, 1, 2]
        m20, m21, m22 = mat[i, 2, 0], mat[i, 2, 1], mat[i, 2, 2]
        o0, o1, o2 = off[i, 0], off[i, 1], off[i, 2]
        for p in range(npx):
            r = np.float32(src[i, p, 0])
            g = np.float32(src[i, p, 1])
            b = np.float32(src[i, p, 2])
            v0 = m00 * r + m01 * g + m02 * b + o0
            v1 = m10 * r + m11 * g + m12 * b + o1
            v2 = m20 * r + m21 * g + m22 * b + o2
            if rounds:
                out[i, p, 0] = _round_sat(v0, lo, hi)
                out[i, p, 1] = _round_sat(v1, lo, hi)
                out[i, p, 2] = _round_sat(v2, lo, hi)
            else:
                out[i, p, 0] = v0
                out[i, p, 1] = v1
                out[i, p, 2] = v2


@njit(nogil=True, cache=True)
def rgb_to_ycbcr(src, coef, off, bgr, out):  # pragma: no cover - compiled
    """uint8 RGB (BGR when ``bgr``) to BT.601 YCbCr, computed on values scaled to [0, 1]."""
    n, npx = src.shape[0], src.shape[1]
    scale = np.float32(255.0)
    norm = np.arange(256).astype(np.float32) / scale  # x / 255 in float32, by table
    ri, bi = (2, 0) if bgr else (0, 2)
    c00, c01, c02 = coef[0, 0], coef[0, 1], coef[0, 2]
    c10, c11, c12 = coef[1, 0], coef[1, 1], coef[1, 2]
    c20, c21, c22 = coef[2, 0], coef[2, 1], coef[2, 2]
    for i in range(n):
        for p in range(npx):
            r = norm[src[i, p, ri]]
            g = norm[src[i, p, 1]]
            b = norm[src[i, p, bi]]
            out[i, p, 0] = _round_sat((c00 * r + c01 * g + c02 * b + off[0]) * scale, 0.0, 255.0)
            out[i, p, 1] = _round_sat((c10 * r + c11 * g + c12 * b + off[1]) * scale, 0.0, 255.0)
            out[i, p, 2] = _round_sat((c20 * r + c21 * g + c22 * b + off[2]) * scale, 0.0, 255.0)


@njit(nogil=True, cache=True)
def ycbcr_to_rgb(src, coef, off, bgr, out):  # pragma: no cover - compiled
    """uint8 BT.601 YCbCr to RGB (BGR when ``bgr``), on values scaled to [0, 1]."""
    n, npx = src.shape[0], src.shape[1]
    scale = np.float32(255.0)
    norm = np.arange(256).astype(np.float32) / scale
    ri, bi = (2, 0) if bgr else (0, 2)
    c00, c01, c02 = coef[0, 0], coef[0, 1], coef[0, 2]
    c10, c11, c12 = coef[1, 0], coef[1, 1], coef[1, 2]
    c20, c21, c22 = coef[2, 0], coef[2, 1], coef[2, 2]
    for i in range(n):
        for p in range(npx):
            y = norm[src[i, p, 0]] - off[0]
            cb = norm[src[i, p, 1]] - off[1]
            cr = norm[src[i, p, 2]] - off[2]
            out[i, p, ri] = _round_sat((c00 * y + c01 * cb + c02 * cr) * scale, 0.0, 255.0)
            out[i, p, 1] = _round_sat((c10 * y + c11 * cb + c12 * cr) * scale, 0.0, 255.0)
            out[i, p, bi] = _round_sat((c20 * y + c21 * cb + c22 * cr) * scale, 0.0, 255.0)


@njit(nogil=True, cache=True)
def grid_mask(src, tile, ratio, angle, shift_x, shift_y, out):  # pragma: no cover
    """Zeroes the grid's squares in (n, H, W, C) images; float32 coordinates as in DALI."""
    n, h, w, c = src.shape
    for i in range(n):
        t = np.float32(tile[i])
        ca = np.float32(math.cos(np.float32(angle[i]))) / t
        sa = np.float32(math.sin(np.float32(angle[i]))) / t
        sx = np.float32(shift_x[i]) / t
        sy = np.float32(shift_y[i]) / t
        rt = np.float32(ratio[i])
        for y in range(h):
            fxy = -sx + np.float32(y) * -sa
            fyy = -sy + np.float32(y) * ca
            for x in range(w):
                fx = fxy + np.float32(x) * ca
                fy = fyy + np.float32(x) * sa
                keep = (fx - np.floor(fx) >= rt) or (fy - np.floor(fy) >= rt)
                for k in range(c):
                    out[i, y, x, k] = src[i, y, x, k] if keep else 0


@njit(nogil=True, cache=True)
def histograms(src, channels, hist):  # pragma: no cover - compiled
    """hist[c, v] += count of level v in channel c of interleaved uint8 data (1-D)."""
    npx = src.shape[0] // channels
    if channels == 3:  # unrolled: three independent counters per pixel
        for p in range(npx):
            hist[0, src[3 * p]] += 1
            hist[1, src[3 * p + 1]] += 1
            hist[2, src[3 * p + 2]] += 1
        return
    c = 0
    for p in range(src.shape[0]):
        hist[c, src[p]] += 1
        c += 1
        if c == channels:
            c = 0


@njit(nogil=True, cache=True)
def lut_apply_channels(src, luts, out):  # pragma: no cover - compiled
    """out[p * C + c] = luts[c, src[p * C + c]] for 1-D data of C interleaved channels."""
    channels = luts.shape[0]
    if channels == 3:
        for p in range(src.shape[0] // 3):
            out[3 * p] = luts[0, src[3 * p]]
            out[3 * p + 1] = luts[1, src[3 * p + 1]]
            out[3 * p + 2] = luts[2, src[3 * p + 2]]
        return
    c = 0
    for p in range(src.shape[0]):
        out[p] = luts[c, src[p]]
        c += 1
        if c == channels:
            c = 0


@njit(nogil=True, cache=True)
def add_noise(src, z, mean, std, lo, hi, rounds, out):  # pragma: no cover - compiled
    """out = src + (z * std + mean) in float32, rounded and saturated when ``rounds``."""
    m = np.float32(mean)
    s = np.float32(std)
    for p in range(src.shape[0]):
        v = np.float32(src[p]) + (z[p] * s + m)
        if rounds:
            out[p] = _round_sat(v, lo, hi)
        else:
            out[p] = v


@njit(nogil=True, cache=True)
def salt_and_pepper(src, u, noise_p, salt_p, salt, pepper, out):  # pragma: no cover
    """(A, C, B) data: an element becomes ``salt`` where u < salt_p, ``pepper`` where
    salt_p <= u < noise_p; ``u`` is (A, C, B), or (A, 1, B) to share a draw across C."""
    a_n, c_n, b_n = src.shape
    shared = u.shape[1] == 1
    s = salt[0]
    pp = pepper[0]
    if b_n == 1 and shared:  # channels last (HWC): one draw per pixel, channels inside
        for a in range(a_n):
            r = u[a, 0, 0]
            for c in range(c_n):
                out[a, c, 0] = s if r < salt_p else (pp if r < noise_p else src[a, c, 0])
        return
    for a in range(a_n):
        for c in range(c_n):
            cu = 0 if shared else c
            for b in range(b_n):
                r = u[a, cu, b]
                out[a, c, b] = s if r < salt_p else (pp if r < noise_p else src[a, c, b])


# fastmath lets LLVM reorder the float64 sums into SIMD lanes; the order of additions
# changes, not their precision.
@njit(nogil=True, cache=True, fastmath=True)
def group_sums(x, center, squares, inner_kept, acc):  # pragma: no cover - compiled
    """acc[k0, k1] += x, or (x - center)^2 when ``squares``, in float64, over the reduced
    axes of a 4-D view: (K0, R0, K1, R1), or (R0, K0, R1, K1) when ``inner_kept``."""
    n0, n1, n2, n3 = x.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                if inner_kept:  # acc[b, :] += x[a, b, c, :]
                    for f in range(n3):
                        v = np.float64(x[a, b, c, f])
                        if squares:
                            v -= center[b, f]
                            v *= v
                        acc[b, f] += v
                else:  # acc[a, c] += sum(x[a, b, c, :])
                    m = center[a, c]
                    t = 0.0
                    for f in range(n3):
                        v = np.float64(x[a, b, c, f])
                        if squares:
                            v -= m
                            v *= v
                        t += v
                    acc[a, c] += t


@njit(nogil=True, cache=True)
def group_normalize(x, mean, inv, shift, lo, hi, rounds, inner_kept, out):  # pragma: no cover
    """out = (x - mean[k]) * inv[k] + shift in float32 over the same 4-D views as
    ``group_sums``, rounded and saturated when ``rounds``."""
    n0, n1, n2, n3 = x.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                for f in range(n3):
                    if inner_kept:
                        m = mean[b, f]
                        s = inv[b, f]
                    else:
                        m = mean[a, c]
                        s = inv[a, c]
                    v = (np.float32(x[a, b, c, f]) - m) * s + shift
                    if rounds:
                        out[a, b, c, f] = _round_sat(v, lo, hi)
                    else:
                        out[a, b, c, f] = v
