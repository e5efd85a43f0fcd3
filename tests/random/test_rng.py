"""The counter-based random streams: compiled loop equals the numpy specification, values
are uniform, and a sample's values depend only on (seed, index)."""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.random import rng


def test_compiled_loop_equals_numpy_reference():
    idx = np.arange(0, 50_000, 7)
    for seed in (0, 1, 2**62 + 12345):
        np.testing.assert_array_equal(rng.uniform01(seed, idx, 3),
                                      rng.uniform01_reference(seed, idx, 3))


def test_a_run_of_indices_draws_what_the_index_array_draws():
    """uniform01_from (a chunk's consecutive indices, no index array) is uniform01."""
    for seed, first, n in ((0, 0, 5), (5, 12_345, 64), (2**62 + 3, 2**40 - 7, 9)):
        np.testing.assert_array_equal(
            rng.uniform01_from(seed, first, n, 3),
            rng.uniform01_reference(seed, np.arange(first, first + n), 3))


def test_values_are_uniform_in_unit_interval():
    u = rng.uniform01(42, np.arange(200_000), 1).ravel()
    assert u.min() >= 0.0 and u.max() < 1.0
    counts = np.histogram(u, bins=20, range=(0, 1))[0]
    expected = len(u) / 20
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 45  # 19 degrees of freedom: p < 0.001 beyond ~43.8


def test_a_sample_draws_the_same_values_whatever_its_neighbours():
    alone = rng.uniform01(9, np.array([1234]), 4)[0]
    among = rng.uniform01(9, np.arange(1200, 1300), 4)[34]
    np.testing.assert_array_equal(alone, among)


def test_neighbouring_indices_and_seeds_are_uncorrelated():
    a = rng.uniform01(5, np.arange(100_000), 1).ravel()
    b = rng.uniform01(5, np.arange(1, 100_001), 1).ravel()
    c = rng.uniform01(6, np.arange(100_000), 1).ravel()
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.02
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.02


def _philox(seed: int, index: int) -> np.random.Generator:
    return np.random.Generator(np.random.Philox(key=[seed, index]))


def test_generator_is_philox_keyed_by_seed_and_index_whatever_came_before():
    # The thread's generator is re-keyed, not remade: nothing of the previous sample's
    # draws (its counter, buffered 32-bit halves, a normal's spare) may leak into the next.
    first = rng.generator(7, 11)
    first.integers(0, 10, 3, dtype=np.uint32)
    first.standard_normal()
    for seed, index in ((7, 12), (2**63 + 5, 2**64 - 1), (0, 0)):
        gen = rng.generator(seed, index)
        want = _philox(seed, index)
        np.testing.assert_array_equal(gen.integers(0, 1000, 5, dtype=np.uint32),
                                      want.integers(0, 1000, 5, dtype=np.uint32))
        assert gen.uniform(0.08, 1.0) == want.uniform(0.08, 1.0)
        assert gen.standard_normal() == want.standard_normal()


def test_each_thread_draws_its_own_stream():
    import threading

    results: dict = {}
    barrier = threading.Barrier(4)

    def draw(k: int) -> None:
        out = []
        for i in range(200):
            gen = rng.generator(3, 100 * k + i)
            if i == 0:
                barrier.wait()
            out.append(gen.random(4))
        results[k] = np.array(out)

    threads = [threading.Thread(target=draw, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        want = np.array([_philox(3, 100 * k + i).random(4) for i in range(200)])
        np.testing.assert_array_equal(results[k], want)
