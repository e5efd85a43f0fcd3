"""fn.batch_permutation (statistics) and fn.permute_batch (outputs) against DALI 2.4's
recording (tests/data/dali_batch_order.json, recorder tests/data/record/batch_order.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import stoker.fn as fn
from stoker import pipeline_def

DATA = json.loads((pathlib.Path(__file__).resolve().parents[1] / "data" /
                   "dali_batch_order.json").read_text())
BATCH, ITER = DATA["batch"], DATA["iterations"]


def _draws(flags: dict, seed: int = 11) -> np.ndarray:
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=seed)
    def pipe():
        return fn.batch_permutation(**flags)

    p = pipe()
    p.build()
    return np.array([[int(np.asarray(t)) for t in p.run()[0]] for _ in range(ITER)])


@pytest.mark.parametrize("case", DATA["batch_permutation"], ids=lambda c: str(c["args"]))
def test_batch_permutation_statistics_match_dali(case):
    draws = _draws(case["args"])
    want = case["stats"]
    n = BATCH
    assert draws.dtype.kind == "i" and ((draws >= 0) & (draws < n)).all()
    fixed = float((draws == np.arange(n)).mean())
    repeats = float(np.mean([len(set(r)) < n for r in draws]))
    # Exact properties are exact; rates agree within ~4 standard errors of ITER batches.
    if want["fixed_point_rate"] == 0:
        assert fixed == 0
    else:
        assert abs(fixed - want["fixed_point_rate"]) < 0.05
    if want["repeat_rate"] == 0:
        assert repeats == 0
    else:
        assert abs(repeats - want["repeat_rate"]) < 0.06
    np.testing.assert_allclose(draws.mean(0), want["mean_per_position"], atol=0.35)


def test_batch_permutation_depends_on_seed_and_iteration():
    a, b = _draws({}, seed=1), _draws({}, seed=2)
    assert not np.array_equal(a, b)
    assert len({tuple(r) for r in a}) > 30  # 120 permutations of 5: batches differ


@pytest.mark.parametrize("case", DATA["permute_batch"], ids=lambda c: str(c["indices"]))
def test_permute_batch_matches_dali(case):
    samples = [np.full((2, 1 + k), k, np.int16) for k in range(BATCH)]

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return fn.permute_batch(fn.external_source(lambda: samples, layout="HW"),
                                indices=case["indices"])

    if case["out"].get("error"):
        with pytest.raises(Exception, match="'indices'"):
            p = pipe()
            p.build()
            p.run()
        return
    p = pipe()
    p.build()
    out = p.run()[0]
    assert out.layout() == case["out"]["layout"]
    assert [np.asarray(t).tolist() for t in out] == case["out"]["samples"]


def test_permute_batch_by_drawn_permutation_reorders_samples():
    samples = [np.full((3,), k, np.float32) for k in range(BATCH)]

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=5)
    def pipe():
        perm = fn.batch_permutation()
        return perm, fn.permute_batch(fn.external_source(lambda: samples), indices=perm)

    p = pipe()
    p.build()
    perm, out = p.run()
    for i in range(BATCH):
        np.testing.assert_array_equal(np.asarray(out[i]), samples[int(np.asarray(perm[i]))])
