"""The counter-based random streams: compiled loop equals the numpy specification, values
are uniform, and a sample's values depend only on (seed, index)."""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu import rng


def test_compiled_loop_equals_numpy_reference():
    idx = np.arange(0, 50_000, 7)
    for seed in (0, 1, 2**62 + 12345):
        np.testing.assert_array_equal(rng.uniform01(seed, idx, 3),
                                      rng.uniform01_reference(seed, idx, 3))


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
