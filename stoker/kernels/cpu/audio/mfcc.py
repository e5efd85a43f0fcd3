"""Mel-frequency cepstral coefficients as DALI's ``fn.mfcc`` computes them: a DCT along one
axis, keeping the first ``n_mfcc`` coefficients, then optional liftering.

DALI's unnormalized DCTs are half of scipy's (scipy.fft.dct(type=t) / 2: DALI's own
tests divide by 2; measured equal on 2.4 within 3e-8), its normalized ones are scipy's
``norm="ortho"`` (not defined for type 1). The lifter multiplies coefficient i by
``1 + (L / 2) sin(pi (i + 1) / L)`` (librosa's formula; DALI 2.4's docstring writes
another, its code computes this one). The DCT is one matrix product with a cached basis.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=64)
def dct_matrix(n_out: int, n: int, dct_type: int, normalize: bool,
               lifter: float) -> np.ndarray:
    """The (n_out, n) float32 basis, liftered (read-only, cached)."""
    k = np.arange(n_out, dtype=np.float64)[:, None]
    j = np.arange(n, dtype=np.float64)[None, :]
    if dct_type == 1:
        basis = np.cos(np.pi * k * j / max(n - 1, 1))
        basis[:, [0, -1]] *= 0.5
    elif dct_type == 2:
        basis = np.cos(np.pi * k * (2 * j + 1) / (2 * n))
        if normalize:
            basis *= np.where(k == 0, np.sqrt(1.0 / n), np.sqrt(2.0 / n))
    elif dct_type == 3:
        basis = np.cos(np.pi * j * (2 * k + 1) / (2 * n))
        if normalize:
            basis *= np.where(j == 0, np.sqrt(1.0 / n), np.sqrt(2.0 / n))
        else:
            basis[:, 0] *= 0.5
    else:
        basis = np.cos(np.pi * (2 * k + 1) * (2 * j + 1) / (4 * n))
        if normalize:
            basis *= np.sqrt(2.0 / n)
    if lifter:
        basis *= 1.0 + (lifter / 2.0) * np.sin(np.pi * (k + 1) / lifter)
    out = basis.astype(np.float32)
    out.flags.writeable = False
    return out


def mfcc(x: np.ndarray, axis: int, n_mfcc: int, dct_type: int, normalize: bool,
         lifter: float) -> np.ndarray:
    """The coefficients of float32 ``x`` along ``axis`` (``n_mfcc`` is cut to the axis'
    extent, as DALI does)."""
    n = x.shape[axis]
    basis = dct_matrix(min(n_mfcc, n), n, dct_type, normalize, float(lifter))
    moved = np.moveaxis(x, axis, -2) if x.ndim >= 2 else x[:, None]
    out = np.matmul(basis, moved.astype(np.float32, copy=False))
    if x.ndim < 2:
        return out[:, 0]
    return np.ascontiguousarray(np.moveaxis(out, -2, axis))
