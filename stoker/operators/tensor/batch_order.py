"""Reordering a batch: ``fn.batch_permutation`` draws an order, ``fn.permute_batch`` applies one.

``batch_permutation`` gives each sample an int32 scalar: together they are a random
permutation of 0..N-1 (with 'allow_repetitions', N independent draws; with
'no_fixed_points', no sample gets its own index - a batch of one gets [0], as in DALI).
``permute_batch`` makes output sample i from input sample indices[i]; 'indices' is a
constant list of batch size entries or a per-sample scalar (batch_permutation's output).
Both see the whole batch, so both run as batch stages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.random import rng
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema


def draw_permutation(gen: np.random.Generator, n: int, repetitions: bool,
                     no_fixed_points: bool) -> np.ndarray:
    if n <= 1 or not no_fixed_points:
        if repetitions:
            return gen.integers(0, max(n, 1), n).astype(np.int32)
        return gen.permutation(n).astype(np.int32)
    if repetitions:  # each sample from the other n - 1 indices
        draw = gen.integers(0, n - 1, n)
        return (draw + (draw >= np.arange(n))).astype(np.int32)
    while True:  # a uniform derangement: about e tries
        perm = gen.permutation(n)
        if not (perm == np.arange(n)).any():
            return perm.astype(np.int32)


class PermutationStage:
    def __init__(self, op: Any, pipeline: Any = None):
        self.op = op
        self.args = op.args

    def run_batch(self, ins: list, argv: dict, bctx: Any, seed: int) -> tuple:
        # One stream per batch: keyed by the operator's seed and the batch's first sample.
        gen = rng.generator(seed, bctx.first_index)
        perm = draw_permutation(gen, bctx.size, bool(self.args["allow_repetitions"]),
                                bool(self.args["no_fixed_points"]))
        return (perm.copy(),)


register(OpSchema(
    name="batch_permutation",
    doc="A random permutation of the batch's sample indices: sample i gets the index of "
        "the sample that goes to position i (an int32 scalar).",
    args=(Arg("allow_repetitions", "bool", False, "Draw each index independently, so "
              "indices may repeat."),
          Arg("no_fixed_points", "bool", False, "No sample keeps its own index.")),
    stage="batch", instance=PermutationStage, random=True,
    layout=lambda layouts, a: "", dtype=lambda d, a: np.dtype(np.int32),
    examples=(
        Example(),
        Example(args={"no_fixed_points": True}),
        Example(args={"allow_repetitions": True}),
        Example(args={"allow_repetitions": True, "no_fixed_points": True}),
        Example(args={"no_fixed_points": 2}, raises=TypeError, match="'no_fixed_points'"),
    ),
))


def _indices(args: dict, argv: dict, n: int) -> list[int]:
    if "indices" in argv:
        rows = [np.asarray(v) for v in argv["indices"]]
        if any(r.size != 1 for r in rows):
            raise ValueError("'indices' given per sample must be one scalar per sample")
        idx = [int(r.reshape(())) for r in rows]
    else:
        idx = [int(v) for v in args["indices"]]
    if len(idx) != n:
        raise ValueError(f"'indices' has {len(idx)} entries but the batch has {n} samples")
    for i, v in enumerate(idx):
        if not 0 <= v < n:
            raise ValueError(f"'indices'[{i}] = {v} is not a sample index of a batch of {n}")
    return idx


def _permute(ins: list, args: dict, argv: dict, n: int) -> tuple:
    x = ins[0]
    idx = _indices(args, argv, n)
    if isinstance(x, np.ndarray):  # dense in, dense out
        return (x[idx],)
    return ([np.array(x[i], copy=True) for i in idx],)


class PermuteStage:
    def __init__(self, op: Any, pipeline: Any = None):
        self.op = op
        self.args = op.args

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        return _permute(ins, self.args, argv, len(ins[0]))


def _check(args: dict) -> None:
    idx = args.get("indices")
    if isinstance(idx, list) and any(v < 0 for v in idx):
        raise ArgumentError(f"fn.permute_batch: argument 'indices' must hold sample indices "
                            f"(>= 0), got {idx!r}")


_SAMPLES = [np.full((2, 3), i, np.uint8) for i in range(3)]

register(OpSchema(
    name="permute_batch",
    doc="Reorders the batch: output sample i is input sample indices[i] (indices may "
        "repeat or leave samples out).",
    inputs=(Input("input", "Data of any type and layout."),),
    args=(Arg("indices", "ints", REQUIRED, "Index of the input sample for "
              "each output sample: a list of batch size entries or a per-sample scalar.",
              per_sample=True),),
    stage="batch", instance=PermuteStage, check=_check,
    examples=(
        Example(args={"indices": [2, 0, 0]}, inputs=(_SAMPLES,)),
        Example(args={"indices": [1, 2, 0]}, inputs=([np.arange(k + 1, dtype=np.float32)
                                                      for k in range(3)],)),
        Example(args={"indices": [3, 0, 1]}, inputs=(_SAMPLES,), raises=RuntimeError,
                match="'indices'[0] = 3 is not a sample index of a batch of 3"),
        Example(args={"indices": [1, 0]}, inputs=(_SAMPLES,), raises=RuntimeError,
                match="has 2 entries but the batch has 3 samples"),
        Example(args={"indices": [-1, 0, 1]}, inputs=(_SAMPLES,), raises=ArgumentError,
                match="must hold sample indices"),
    ),
))
