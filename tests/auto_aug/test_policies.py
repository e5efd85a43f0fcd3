"""The policies' random choices, checked statistically with marker augmentations (each
writes its index and parameter into the image, so the output says what ran), and the real
suites end to end: shapes and types kept, deterministic per seed, every augmentation of
the suite reached."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def
from stoker.auto_aug import auto_augment, rand_augment, trivial_augment
from stoker.auto_aug.core import Policy, augmentation

BATCH = 256


def _marker(k: int, negate: bool = False):
    @augmentation(mag_range=(0, 10), randomly_negate=negate, name=f"mark{k}")
    def mark(data, magnitude):
        # data * 0 + 1000 * (k + 1) + magnitude: float32, one value per sample
        return fn.cast(data, dtype=7) * 0 + (1000.0 * (k + 1)) + magnitude
    return mark


def _run(graph, seed=5, data=None):
    samples = data or [np.zeros((2, 2, 3), np.uint8)] * BATCH

    @pipeline_def(batch_size=len(samples), num_threads=2, device_id=None,
                  enable_conditionals=True, seed=seed)
    def pipe():
        return graph(fn.external_source(source=lambda: samples, layout="HWC"))

    p = pipe()
    p.build()
    (out,) = p.run()
    return [np.asarray(out.at(j)) for j in range(len(samples))]


def _chi2_uniform(counts: np.ndarray) -> float:
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


# 99.9% quantiles of chi-square: a correct draw fails about once in a thousand runs, and
# the seeds are fixed, so these tests are deterministic.
CHI2_999 = {3: 16.27, 4: 18.47, 10: 29.59, 11: 31.26}


def test_trivial_augment_picks_op_and_bin_uniformly():
    marks = [_marker(k) for k in range(4)]
    outs = _run(lambda x: trivial_augment.apply_trivial_augment(marks, x,
                                                                num_magnitude_bins=11))
    values = np.array([o.flat[0] for o in outs])
    ops = (values // 1000).astype(int) - 1
    bins = np.rint(values % 1000).astype(int)  # magnitudes 0..10 = bins (linspace(0, 10))
    assert set(ops) == {0, 1, 2, 3} and set(bins) <= set(range(11))
    assert _chi2_uniform(np.bincount(ops, minlength=4)) < CHI2_999[3]
    assert _chi2_uniform(np.bincount(bins, minlength=11)) < CHI2_999[10]
    assert all((o == o.flat[0]).all() for o in outs)  # one op per sample, whole image


def test_trivial_augment_negates_half_of_the_magnitudes():
    marks = [_marker(k, negate=True) for k in range(2)]
    outs = _run(lambda x: trivial_augment.apply_trivial_augment(marks, x,
                                                                num_magnitude_bins=11))
    offsets = np.array([o.flat[0] % 1000 for o in outs])
    raw = np.array([o.flat[0] for o in outs])
    negative = (raw - 1000 * np.round(raw / 1000)) < 0
    assert 0.4 < negative.mean() < 0.6, offsets[:10]


def test_rand_augment_applies_n_ops_at_magnitude_m():
    @augmentation(mag_range=(0, 10), name="add")
    def add(data, magnitude):
        return data + magnitude

    @augmentation(mag_range=(0, 10), name="times_two")
    def times_two(data, magnitude):
        return data * 2

    start = [np.ones((1, 1, 1), np.float32)] * BATCH
    outs = _run(lambda x: rand_augment.apply_rand_augment([add, times_two], x, n=3, m=4,
                                                          num_magnitude_bins=11), data=start)
    # Each sample: 3 steps of "+4" or "*2" from 1: exactly 8 possible results, all reached.
    results = {}
    for seq in range(8):
        v = 1.0
        for step in range(3):
            v = v + 4 if (seq >> step) & 1 == 0 else v * 2
        results[v] = results.get(v, 0) + 1
    got = [float(o.flat[0]) for o in outs]
    assert set(got) <= set(results)
    assert len(set(got)) == len(results)


def test_auto_augment_runs_steps_with_their_probabilities():
    marks = [_marker(k) for k in range(3)]
    policy = Policy("test", 11, [[(marks[0], 0.25, 2)], [(marks[1], 1.0, 5)],
                                 [(marks[2], 0.0, 7)]])
    # float32 in: a step not run keeps the sample as it is, whose type must be the markers'
    zeros = [np.zeros((2, 2, 3), np.float32)] * BATCH
    outs = _run(lambda x: auto_augment.apply_auto_augment(policy, x), data=zeros)
    values = np.array([o.flat[0] for o in outs])
    counts = {k: int((np.rint(values) == 1000 * (k + 1) + m).sum())
              for k, m in ((0, 2), (1, 5), (2, 7))}
    untouched = int((values == 0).sum())
    assert counts[2] == 0  # probability 0: never
    assert counts[0] + counts[1] + untouched == BATCH
    # sub-policy 1 (p=1): ~1/3 of the batch; sub-policy 0 runs a quarter of its third
    assert abs(counts[1] - BATCH / 3) < 4 * np.sqrt(BATCH * (1 / 3) * (2 / 3))
    assert abs(counts[0] - BATCH / 12) < 4 * np.sqrt(BATCH * (1 / 12) * (11 / 12))


def _photo(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    yy, xx = np.mgrid[0:24, 0:32]
    base = np.stack([xx * 7, yy * 9, (xx + yy) * 4], axis=-1)
    return [np.clip(base + rng.integers(-20, 21, base.shape), 0, 255).astype(np.uint8)
            for _ in range(n)]


@pytest.mark.parametrize("policy", ["trivial", "rand", "auto"])
def test_suites_keep_shape_and_type_and_are_deterministic(policy):
    graphs = {
        "trivial": lambda x: trivial_augment.trivial_augment_wide(x),
        "rand": lambda x: rand_augment.rand_augment(x, n=2, m=9),
        "auto": lambda x: auto_augment.auto_augment_image_net(x),
    }
    images = _photo(64)
    a = _run(graphs[policy], seed=9, data=images)
    b = _run(graphs[policy], seed=9, data=images)
    c = _run(graphs[policy], seed=10, data=images)
    for x, y, img in zip(a, b, images, strict=True):
        assert x.shape == img.shape and x.dtype == np.uint8
        np.testing.assert_array_equal(x, y)
    changed = sum(not np.array_equal(x, img) for x, img in zip(a, images, strict=True))
    assert changed > 32  # most samples are transformed
    assert any(not np.array_equal(x, z) for x, z in zip(a, c, strict=True))


def test_excluded_names_must_be_in_the_suite():
    with pytest.raises(ValueError, match="excluded names 'blur'"):
        _run(lambda x: trivial_augment.trivial_augment_wide(x, excluded=["blur"]))


def test_translate_with_shape_needs_no_absolute_limit():
    with pytest.raises(ValueError, match="max_translate_abs cannot be used with image shapes"):
        _run(lambda x: rand_augment.rand_augment(x, n=1, m=3, shape=(2, 2),
                                                 max_translate_abs=10))
