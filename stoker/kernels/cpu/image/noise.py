"""Noise kernels: additive Gaussian, salt and pepper, shot (Poisson) noise.

Each takes one sample and a numpy Generator that belongs to that sample, so values never
depend on threads or batching. Integer outputs round half away from zero and saturate,
as DALI converts them; float outputs are not clamped.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.saturate import cast_like_c, round_sat, type_range

F32 = np.float32


def gaussian(x: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``x + noise`` per element in float32 (``noise``: float32, one value per element)."""
    L = loops("image.pixel_loops")

    out = np.empty(x.shape, x.dtype)
    lo, hi = type_range(x.dtype)
    L.add_noise(np.ascontiguousarray(x).reshape(-1), noise.reshape(-1), 0.0, 1.0, lo, hi,
                x.dtype.kind in "iu", out.reshape(-1))
    return out


def default_salt_pepper(dtype: np.dtype) -> tuple[float, float]:
    """DALI's defaults: the type's max and min for integers, 1 and -1 for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.max), float(info.min)
    return 1.0, -1.0


def salt_and_pepper(x: np.ndarray, gen: np.random.Generator, prob: float, salt_vs_pepper: float,
                    salt: float, pepper: float, channel_axis: int | None) -> np.ndarray:
    """Replaces elements with ``salt`` (probability prob * salt_vs_pepper) or ``pepper``
    (the rest of prob). With a ``channel_axis``, a pixel's channels share one draw."""
    L = loops("image.pixel_loops")

    if channel_axis is None:  # a draw per element
        shape3 = draws = (x.size, 1, 1)
    else:  # (before, C, after), one draw per (before, after)
        shape3 = (int(np.prod(x.shape[:channel_axis])), x.shape[channel_axis],
                  int(np.prod(x.shape[channel_axis + 1:])))
        draws = (shape3[0], 1, shape3[2])
    u = gen.random(int(np.prod(draws)), dtype=F32).reshape(draws)
    noise_p = F32(prob)
    salt_p = noise_p * F32(salt_vs_pepper)
    out = np.empty(x.shape, x.dtype)
    L.salt_and_pepper(np.ascontiguousarray(x).reshape(shape3), u, noise_p, salt_p,
                      cast_like_c([salt], x.dtype), cast_like_c([pepper], x.dtype),
                      out.reshape(shape3))
    return out


def shot(x: np.ndarray, gen: np.random.Generator, factor: float) -> np.ndarray:
    """``Poisson(x / factor) * factor`` per element (negative values count as 0).

    A factor of 0 gives zeros, as DALI's kernel does (it draws nothing and scales by 0).
    """
    f = F32(factor)
    if f == 0:
        return np.zeros_like(x)
    lam = np.maximum(x.astype(F32) * (F32(1) / f), F32(0))
    counts = gen.poisson(lam)
    return round_sat(counts.astype(F32) * f, x.dtype)
