"""Counter-based random streams: values are a pure function of (seed, sample index, draw).

Thread count, chunking and batch size therefore never change what a sample draws.
``uniform01`` is a vectorized splitmix64 hash for the simple draws every batch needs;
``generator`` gives a full numpy Generator (Philox keyed by seed and index) for draws
that need rejection sampling, at about 3 us per sample.
"""

from __future__ import annotations

import threading

import numpy as np

from stoker.kernels.cpu.compiled import loops

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def derive_seed(*parts: int) -> int:
    """A 63-bit seed mixed from integers (pipeline seed, operator order, ...)."""
    z = np.uint64(0x243F6A8885A308D3)
    with np.errstate(over="ignore"):
        for p in parts:
            z = _mix(np.asarray(z ^ np.uint64(p & _MASK64) + _GOLDEN, dtype=np.uint64))
    return int(z) >> 1


def uniform01(seed: int, indices: np.ndarray, count: int) -> np.ndarray:
    """(len(indices), count) float64 values in [0, 1), one row per sample index."""
    uniform01_loop = loops("random.rng_loop").uniform01_loop

    idx = np.ascontiguousarray(indices, dtype=np.uint64)
    out = np.empty((len(idx), count), np.float64)
    uniform01_loop(np.uint64(seed & _MASK64), idx, out)
    return out


def uniform01_from(seed: int, first: int, n: int, count: int) -> np.ndarray:
    """``uniform01`` of the indices ``first`` to ``first + n - 1`` (a chunk's: no index
    array to make, on the producer's serial path once a batch)."""
    out = np.empty((n, count), np.float64)
    loops("random.rng_loop").uniform01_from_loop(np.uint64(seed & _MASK64),
                                                 np.uint64(first), out)
    return out


def uniform01_reference(seed: int, indices: np.ndarray, count: int) -> np.ndarray:
    """The same values as ``uniform01``, in plain numpy (the specification; tests use it)."""
    idx = np.asarray(indices, dtype=np.uint64)
    with np.errstate(over="ignore"):
        base = _mix(idx * _GOLDEN ^ np.uint64(seed & _MASK64))
        draws = np.arange(1, count + 1, dtype=np.uint64) * _GOLDEN
        bits = _mix(base[:, None] + draws[None, :])
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def normal_from_uniform(u: np.ndarray, count: int) -> np.ndarray:
    """(rows, count) standard normal float64 values from (rows, 2 * count) uniforms in
    [0, 1), by Box-Muller. fn.random.normal and fn.noise.gaussian both draw this way, so
    that with one seed the noise is the normal values (as in DALI, where
    ``noise.gaussian(x, seed=s)`` equals ``x + random.normal(x, seed=s)``)."""
    u1, u2 = u[:, 0::2][:, :count], u[:, 1::2][:, :count]
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)


# Above this many values per sample, normal draws come from the sample's keyed Philox
# stream through numpy's ziggurat (3-5 ns a value) instead of Box-Muller on the counter
# hash (80 ns a value: a dither of 150,000 audio samples took 12 ms). Up to it, draws are
# what they always were.
NORMAL_BULK = 4096


def normal_values(seed: int, index: int, count: int) -> np.ndarray:
    """``count`` standard normal float64 values of sample ``index``'s stream: what
    fn.random.normal and fn.noise.gaussian draw (see NORMAL_BULK)."""
    if count > NORMAL_BULK:
        return generator(seed, index).standard_normal(count)
    u = uniform01(seed, np.array([index]), 2 * max(count, 1))
    return normal_from_uniform(u, count)[0]


_local = threading.local()


def generator(seed: int, index: int) -> np.random.Generator:
    """A numpy Generator whose stream belongs to one (seed, sample index) pair: Philox
    keyed by both, counter at zero.

    Each thread has one Generator, re-keyed by every call: making a Philox costs about
    16 us (numpy seeds it from the OS first), setting its state 3 us. So a generator is
    valid until the same thread asks for the next one; draw from it, don't keep it.
    """
    gen = getattr(_local, "generator", None)
    if gen is None:
        gen = _local.generator = np.random.Generator(np.random.Philox(key=[0, 0]))
    gen.bit_generator.state = {
        "bit_generator": "Philox",
        "state": {"counter": np.zeros(4, np.uint64),
                  "key": np.array([seed & _MASK64, index & _MASK64], np.uint64)},
        "buffer": np.zeros(4, np.uint64), "buffer_pos": 4, "has_uint32": 0, "uinteger": 0}
    return gen
