"""The counter hash of ``rng.uniform01`` as one compiled loop (numpy needs ~20 small calls)."""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_SCALE = 1.0 / (1 << 53)


@njit(nogil=True, cache=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(nogil=True, cache=True, inline="always")
def stream_base(seed, index):  # pragma: no cover - compiled
    """The state of sample ``index``'s stream under ``seed`` (both uint64)."""
    return _mix(index * _GOLDEN ^ seed)


@njit(nogil=True, cache=True, inline="always")
def stream_draw(base, k):  # pragma: no cover - compiled
    """Draw ``k`` (from 1) of the stream whose state is ``base``: a float64 in [0, 1)."""
    return np.float64(_mix(base + np.uint64(k) * _GOLDEN) >> _S11) * _SCALE


@njit(nogil=True, cache=True)
def uniform01_loop(seed, indices, out):  # pragma: no cover - compiled
    n, count = out.shape
    for i in range(n):
        base = stream_base(seed, indices[i])
        for j in range(count):
            out[i, j] = stream_draw(base, j + 1)


@njit(nogil=True, cache=True)
def uniform01_from_loop(seed, first, out):  # pragma: no cover - compiled
    """``uniform01_loop`` for the indices ``first``, ``first + 1``, ... (a chunk's)."""
    n, count = out.shape
    for i in range(n):
        base = stream_base(seed, first + np.uint64(i))
        for j in range(count):
            out[i, j] = stream_draw(base, j + 1)
