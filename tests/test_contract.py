"""The contract battery: every registered operator goes through the same checks.

Each schema's examples are run in a small pipeline whose inputs come from
``fn.external_source``. Valid examples must run; their outputs must have the dtype and
layout the schema predicts, leave the inputs untouched, agree between the dense (batch
kernel) and per-sample paths, between a batch of N and N batches of 1, between thread
counts and between two runs with the same seed. Invalid examples must raise the error they
document. An operator without at least one valid and one invalid example fails here.

The operator list is the registry itself, so new operators join the battery on import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import stoker.fn  # noqa: F401  (registers every operator family)
from stoker import Pipeline
from stoker.errors import DeviceError, GraphError
from stoker.graph.layouts import resolve
from stoker.operators.machinery.layouts import run_layout
from stoker.operators.machinery.registry import REGISTRY, call_op, gpu_backend_available
from stoker.operators.machinery.schema import Example, Input, OpSchema

SEED = 1234
NAMES = sorted(REGISTRY)
RANDOM_NAMES = sorted(name for name, s in REGISTRY.items() if s.random)


def _valid(schema: OpSchema) -> list[Example]:
    return [e for e in schema.examples if e.raises is None]


def _invalid(schema: OpSchema) -> list[Example]:
    return [e for e in schema.examples if e.raises is not None]


def _runs_here(schema: OpSchema) -> bool:
    # The battery builds CPU pipelines (device_id=None), where a GPU-only operator cannot
    # run even when a GPU is present; tests/gpu covers those.
    return "cpu" in schema.devices


def _uses_inputs(schema: OpSchema) -> bool:
    return schema.stage != "source" and bool(schema.inputs)


def _batch_size(example: Example) -> int:
    return len(example.inputs[0]) if example.inputs else 2


def _uniform(example: Example) -> bool:
    """Every input's samples share one shape, so the batch can be handed over dense."""
    return all(len({np.shape(s) for s in samples}) == 1 for samples in example.inputs)


def _copies(example: Example) -> list[list[np.ndarray]]:
    return [[np.array(s, copy=True) for s in samples] for samples in example.inputs]


def _returning(batch: Any) -> Any:
    return lambda: batch


def _nth_sample(samples: list[np.ndarray]) -> Any:
    """A source for a batch-1 pipeline: iteration k gives sample k."""
    return lambda iteration: [samples[iteration]]


@dataclass
class Ran:
    """One example run: the output samples, the output nodes and what the op received."""

    outputs: list[list[np.ndarray]]  # per output, per sample
    layouts: list[str]  # of the returned TensorLists
    nodes: list  # the operator's output DataNodes
    fed: list[list[np.ndarray]]  # the arrays handed to the operator (no copy in between)


def _define(schema: OpSchema, example: Example, pipe: Pipeline, sources: list) -> list:
    with pipe:
        nodes = [stoker.fn.external_source(source=src, no_copy=True) for src in sources]
        out = call_op(schema.name, nodes, dict(example.args))
        outs = list(out) if isinstance(out, list | tuple) else [out]
        pipe.set_outputs(*outs)
    return outs


def run_example(schema: OpSchema, example: Example, *, seed: int = SEED, dense: bool = False,
                num_threads: int = 1) -> Ran:
    """Runs one batch of the example; ``dense`` hands each input over as one stacked array."""
    fed = _copies(example) if _uses_inputs(schema) else []
    batches = [np.stack(f) if dense else f for f in fed]
    sources = [_returning(b) for b in batches]
    pipe = Pipeline(batch_size=_batch_size(example), num_threads=num_threads, seed=seed,
                    device_id=None, exec_pipelined=False)
    try:
        nodes = _define(schema, example, pipe, sources)
        tls = list(pipe.run())
    finally:
        pipe.close()
    outputs = [[np.array(s, copy=True) for s in tl] for tl in tls]
    return Ran(outputs, [tl.layout() for tl in tls], nodes, fed)


def run_one_sample_at_a_time(schema: OpSchema, example: Example, *, seed: int = SEED) -> list:
    """The example's batch as N runs of a batch-1 pipeline (global sample indices 0..N-1)."""
    fed = _copies(example) if _uses_inputs(schema) else []
    n = _batch_size(example)
    sources = [_nth_sample(f) for f in fed]
    pipe = Pipeline(batch_size=1, num_threads=1, seed=seed, device_id=None,
                    exec_pipelined=False)
    try:
        _define(schema, example, pipe, sources)
        runs = [pipe.run() for _ in range(n)]
    finally:
        pipe.close()
    return [[np.array(run[k][0], copy=True) for run in runs] for k in range(len(runs[0]))]


def assert_same_outputs(a: list[list[np.ndarray]], b: list[list[np.ndarray]], what: str) -> None:
    assert len(a) == len(b), f"{what}: {len(a)} outputs vs {len(b)}"
    for k, (xs, ys) in enumerate(zip(a, b, strict=True)):
        assert len(xs) == len(ys), f"{what}: output {k} has {len(xs)} samples vs {len(ys)}"
        for j, (x, y) in enumerate(zip(xs, ys, strict=True)):
            assert x.dtype == y.dtype, f"{what}: output {k} sample {j}: {x.dtype} vs {y.dtype}"
            assert x.shape == y.shape, f"{what}: output {k} sample {j}: {x.shape} vs {y.shape}"
            assert x.tobytes() == y.tobytes(), f"{what}: output {k} sample {j} differs"


# Operators whose outputs hold another number of samples than their inputs (a conditional's
# branches): the battery feeds every input one batch size, so it runs their invalid examples
# only; tests/tensor/test_conditional.py runs them through real `if` statements.
RESIZES_BATCH = {"_conditional.split", "_conditional.merge"}


def _runnable_examples(name: str) -> tuple[OpSchema, list[Example]]:
    schema = REGISTRY[name]
    if name in RESIZES_BATCH:
        pytest.skip(f"{schema.fn_name} changes the batch size (tests/tensor/test_conditional.py)")
    if not _runs_here(schema):
        pytest.skip(f"{schema.fn_name} runs only on {schema.devices} and there is no GPU here")
    examples = _valid(schema)
    if not examples:
        pytest.fail(f"{schema.fn_name} has no valid example to run")
    return schema, examples


# -- the battery -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_operator_has_valid_and_invalid_examples(name: str) -> None:
    schema = REGISTRY[name]
    assert _valid(schema) or name in RESIZES_BATCH, f"{schema.fn_name}: no example of a valid call"
    assert _invalid(schema), f"{schema.fn_name}: no example of a call that must be rejected"
    for example in _invalid(schema):
        assert example.match, f"{schema.fn_name}: invalid example {example.args} has no match"


@pytest.mark.parametrize("name", NAMES)
def test_outputs_have_predicted_dtype_and_layout(name: str) -> None:
    schema, examples = _runnable_examples(name)
    for example in examples:
        ran = run_example(schema, example)
        in_dtypes = [np.asarray(samples[0]).dtype for samples in example.inputs]
        resolved = ran.nodes[0].op.args
        if schema.dtype is not None:
            predicted = schema.dtype(in_dtypes, resolved)
        elif in_dtypes and _uses_inputs(schema):
            predicted = in_dtypes[0]
        else:
            predicted = None  # a source without a dtype rule: its data decides
        if predicted is not None and not isinstance(predicted, list | tuple):
            predicted = [predicted] * len(ran.outputs)
        assert len(ran.outputs) == schema.outputs_for(resolved)
        # The inputs come from sources without a declared layout, whose layout is the data's
        # (none here): the graph resolves the nodes' layouts with it (graph/layouts.py).
        op = ran.nodes[0].op
        at_run = resolve([op], {n: "" for n in op.inputs}) if op.inputs else {}
        for k, (samples, layout, node) in enumerate(
                zip(ran.outputs, ran.layouts, ran.nodes, strict=True)):
            assert len(samples) == _batch_size(example)
            # The node's layout, or what its rule says for the samples
            # (operators/machinery/layouts.py).
            assert layout == run_layout(at_run.get(node, node.layout), samples), \
                f"{schema.fn_name} output {k}: layout"
            for j, s in enumerate(samples):
                if predicted is not None:
                    assert s.dtype == np.dtype(predicted[k]), (
                        f"{schema.fn_name}{example.args} output {k} sample {j}: "
                        f"dtype {s.dtype}, schema predicts {np.dtype(predicted[k])}")
                if layout:
                    assert len(layout) == s.ndim, (
                        f"{schema.fn_name}{example.args} output {k}: layout {layout!r} "
                        f"for a {s.ndim}-D sample")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dense", [False, True], ids=["per_sample", "dense"])
def test_inputs_are_not_mutated(name: str, dense: bool) -> None:
    schema, examples = _runnable_examples(name)
    for example in examples:
        if dense and not _uniform(example):
            continue
        ran = run_example(schema, example, dense=dense)
        for fed, original in zip(ran.fed, example.inputs, strict=True):
            for got, want in zip(fed, original, strict=True):
                np.testing.assert_array_equal(got, want, err_msg=f"{schema.fn_name} changed "
                                                                 f"its input {example.args}")


@pytest.mark.parametrize("name", NAMES)
def test_dense_batch_equals_per_sample_batch(name: str) -> None:
    schema, examples = _runnable_examples(name)
    for example in examples:
        if not _uniform(example):
            continue  # ragged inputs have no dense form
        assert_same_outputs(run_example(schema, example, dense=True).outputs,
                            run_example(schema, example).outputs,
                            f"{schema.fn_name}{example.args} dense vs per-sample")


@pytest.mark.parametrize("name", NAMES)
def test_batch_of_n_equals_n_batches_of_one(name: str) -> None:
    schema, examples = _runnable_examples(name)
    # A batch stage (pad, ...) sees the whole batch by design, e.g. pads to its longest sample.
    if schema.stage == "batch":
        pytest.skip("a batch-stage operator (pad, ...) may depend on the whole batch by design")
    if schema.stage == "source":
        pytest.skip("a source's example makes batches of its own, fixed size")
    for example in examples:
        assert_same_outputs(run_example(schema, example).outputs,
                            run_one_sample_at_a_time(schema, example),
                            f"{schema.fn_name}{example.args} batch of N vs N of 1")


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_same_output(name: str) -> None:
    schema, examples = _runnable_examples(name)
    for example in examples:
        assert_same_outputs(run_example(schema, example).outputs,
                            run_example(schema, example).outputs,
                            f"{schema.fn_name}{example.args} run twice")


@pytest.mark.parametrize("name", NAMES)
def test_thread_count_does_not_change_output(name: str) -> None:
    schema, examples = _runnable_examples(name)
    for example in examples:
        for dense in (False, True):
            if dense and not _uniform(example):
                continue
            assert_same_outputs(run_example(schema, example, dense=dense).outputs,
                                run_example(schema, example, dense=dense, num_threads=3).outputs,
                                f"{schema.fn_name}{example.args} 1 vs 3 threads")


@pytest.mark.parametrize("name", RANDOM_NAMES)
def test_random_operator_output_depends_on_seed(name: str) -> None:
    schema, examples = _runnable_examples(name)

    def flat(seed: int) -> bytes:
        outs = [run_example(schema, e, seed=seed).outputs for e in examples]
        return b"".join(s.tobytes() for out in outs for samples in out for s in samples)

    assert flat(SEED) != flat(SEED + 1), f"{schema.fn_name}: seed changes nothing"


@pytest.mark.parametrize("name", NAMES)
def test_invalid_examples_raise_documented_error(name: str) -> None:
    schema = REGISTRY[name]
    invalid = _invalid(schema)
    if not invalid:
        pytest.fail(f"{schema.fn_name} has no example of a call that must be rejected")
    for example in invalid:
        # Rejected when the graph is defined or, for data-dependent rules, at run().
        with pytest.raises(example.raises, match=re.escape(example.match)) as info:
            run_example(schema, example)
        assert schema.fn_name in str(info.value), (
            f"the error for {example.args} does not name {schema.fn_name}: {info.value}")


@pytest.mark.parametrize("name", [n for n in NAMES if "cpu" not in REGISTRY[n].devices])
def test_gpu_only_operator_without_gpu_raises_device_error(name: str) -> None:
    if gpu_backend_available():
        pytest.skip("a GPU is available here")
    schema = REGISTRY[name]
    examples = _valid(schema) or [Example(inputs=([np.zeros(2, np.float32)],))]
    for example in examples:
        # The battery's pipelines are CPU-only (device_id=None): refused at build, as DALI
        # does; with a device_id they would run on the CPU (tests/pipeline/test_gpu_fallback).
        with pytest.raises((DeviceError, GraphError), match=re.escape(schema.fn_name)):
            run_example(schema, example)


def test_every_public_operator_is_reachable_through_fn() -> None:
    for name, schema in REGISTRY.items():
        if name.startswith("_"):
            continue
        func: Any = stoker.fn
        for part in name.split("."):
            func = getattr(func, part)
        assert callable(func) and func.__doc__.startswith(schema.doc.strip()[:20]), name


# -- the battery's own teeth: a broken operator must fail it -----------------------------------

_PROBE = "_battery_probe"
_PROBE_INPUT = ([np.array([1, 2], np.int32), np.array([3, 4], np.int32)],)


def _probe(monkeypatch: pytest.MonkeyPatch, kernel: Any, **schema: Any) -> None:
    defaults: dict[str, Any] = {
        "examples": (Example(inputs=_PROBE_INPUT),
                     Example(args={"sede": 1}, inputs=_PROBE_INPUT, raises=TypeError,
                             match="did you mean 'seed'?"))}
    monkeypatch.setitem(REGISTRY, _PROBE, OpSchema(
        name=_PROBE, doc="A deliberately broken operator.", inputs=(Input("x"),),
        kernel=kernel, **{**defaults, **schema}))


def test_battery_fails_operator_without_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    _probe(monkeypatch, lambda ins, a, c: ins[0], examples=())
    with pytest.raises(AssertionError, match="no example of a valid call"):
        test_operator_has_valid_and_invalid_examples(_PROBE)
    with pytest.raises(pytest.fail.Exception, match="no valid example to run"):
        test_same_seed_gives_same_output(_PROBE)


def test_battery_fails_operator_that_mutates_its_input(monkeypatch: pytest.MonkeyPatch) -> None:
    def kernel(ins, args, ctx):
        ins[0][0] = 0
        return ins[0] + 1

    _probe(monkeypatch, kernel)
    with pytest.raises(AssertionError, match="changed its input"):
        test_inputs_are_not_mutated(_PROBE, dense=False)


def test_battery_fails_operator_with_wrong_dtype_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    _probe(monkeypatch, lambda ins, a, c: ins[0] * 2, dtype=lambda d, a: np.dtype(np.float32))
    with pytest.raises(AssertionError, match="dtype int32, schema predicts float32"):
        test_outputs_have_predicted_dtype_and_layout(_PROBE)


def test_battery_fails_operator_whose_sample_depends_on_batch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _probe(monkeypatch, lambda ins, a, c: ins[0] + c.idx_in_batch)
    with pytest.raises(AssertionError, match="batch of N vs N of 1"):
        test_batch_of_n_equals_n_batches_of_one(_PROBE)


def test_battery_fails_random_operator_that_ignores_the_seed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    unseeded = np.random.default_rng()
    _probe(monkeypatch, lambda ins, a, c: ins[0] + unseeded.integers(1 << 30), random=True)
    with pytest.raises(AssertionError, match="run twice"):
        test_same_seed_gives_same_output(_PROBE)


def test_battery_fails_invalid_example_that_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    _probe(monkeypatch, lambda ins, a, c: ins[0],
           examples=(Example(inputs=_PROBE_INPUT),
                     Example(args={"seed": 3}, inputs=_PROBE_INPUT, raises=ValueError,
                             match="must be")))
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        test_invalid_examples_raise_documented_error(_PROBE)
