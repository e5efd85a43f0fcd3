"""Fusion rules give the same results as the unfused chain, and fire only when safe."""

from __future__ import annotations

import numpy as np
import pytest

import stoker.graph.fuse as fuse
from stoker import fn, pipeline_def, types

DATA = np.random.default_rng(1).integers(0, 256, (32, 20, 24, 3), dtype=np.uint8)


def _pipe(crop_policy, crop_size, also_output_crop=False, threads=2):
    @pipeline_def(batch_size=32, num_threads=threads, device_id=None, seed=11)
    def pipe():
        x = fn.external_source(source=lambda: DATA, layout="HWC")
        padded = fn.crop(x, crop=crop_size, out_of_bounds_policy=crop_policy,
                         fill_values=[3.0, 4.0, 5.0])
        out = fn.crop_mirror_normalize(
            padded, crop=(16, 16), crop_pos_x=fn.random.uniform(range=(0, 1)),
            crop_pos_y=fn.random.uniform(range=(0, 1)), mirror=fn.random.coin_flip(),
            mean=[50.0, 60.0, 70.0], std=[10.0, 20.0, 30.0], dtype=types.FLOAT)
        return (out, padded) if also_output_crop else out

    p = pipe()
    p.build()
    return p


def _ops(p):
    return [op.schema.name for op in p._plan.ops]


@pytest.mark.parametrize("policy,size", [("pad", (28, 32)), ("error", (18, 20)),
                                         ("pad", (16, 16))])
def test_crop_into_crop_mirror_normalize_equals_unfused(policy, size, monkeypatch):
    fused = _pipe(policy, size)
    assert "crop" not in _ops(fused)
    monkeypatch.setattr(fuse, "ENABLED", False)
    plain = _pipe(policy, size)
    assert "crop" in _ops(plain)
    for _ in range(2):
        np.testing.assert_array_equal(fused.run()[0].as_array(), plain.run()[0].as_array())


def test_crop_used_elsewhere_is_not_fused():
    p = _pipe("pad", (28, 32), also_output_crop=True)
    assert "crop" in _ops(p)


def test_random_draws_do_not_depend_on_fusion(monkeypatch):
    fused = _pipe("pad", (28, 32))
    monkeypatch.setattr(fuse, "ENABLED", False)
    plain = _pipe("pad", (28, 32))
    seeds = {op.schema.name + str(i): s for i, (op, s) in enumerate(
        (op, fused._plan.seeds[op]) for op in fused._plan.ops if op.schema.random)}
    seeds_plain = {op.schema.name + str(i): s for i, (op, s) in enumerate(
        (op, plain._plan.seeds[op]) for op in plain._plan.ops if op.schema.random)}
    assert seeds == seeds_plain
