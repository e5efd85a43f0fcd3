"""fn.python_function, fn.torch_python_function, fn.dl_tensor_python_function: what the
function sees, the defaults DALI 2.4 applies, the operator being kept for side effects,
determinism and checkpoints with a pure function (outputs against DALI's: test_python_vs_dali)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from stoker import Pipeline, fn, pipeline_def
from stoker.errors import ArgumentError, SampleError
from stoker.operators.machinery.registry import REGISTRY, all_args

RECORD = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                     "python_function.json").read_text())


def _source(info):
    return np.arange(info.idx_in_epoch, info.idx_in_epoch + 4, dtype=np.int32)


def _run(graph, batch_size=4, iterations=1, **kwargs):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, **kwargs)
    def pipe():
        return graph(fn.external_source(source=_source, batch=False))

    p = pipe()
    p.build()
    return p, [p.run() for _ in range(iterations)]


@pytest.mark.parametrize("name", sorted(RECORD["signatures"]))
def test_arguments_are_dalis(name):
    dali = RECORD["signatures"][name]
    ours = all_args(REGISTRY[name])
    for arg in ("function", "num_outputs", "batch_processing", "output_layouts", "preserve"):
        assert arg in dali and arg in ours
    assert ("synchronize_stream" in ours) == ("synchronize_stream" in dali)


def test_batch_processing_defaults_are_what_dali_does():
    # DALI's signatures say otherwise for two of them; what runs is recorded in the cases.
    assert RECORD["cases"]["per_sample_gets_array"]["outputs"][0][0]["values"] == [1]
    assert RECORD["cases"]["dl_default_gets_list"]["outputs"]
    defaults = {n: REGISTRY[n].arg("batch_processing").default for n in RECORD["signatures"]}
    assert defaults == {"python_function": False, "torch_python_function": False,
                        "dl_tensor_python_function": True}


def test_torch_function_gets_tensors_sharing_memory():
    torch = pytest.importorskip("torch")
    seen = []

    def f(t):
        seen.append(type(t))
        return (t.double() * 2).flip(0)

    _, [(out,)] = _run(lambda x: fn.torch_python_function(x, function=f))
    assert seen and all(s is torch.Tensor for s in seen)
    for j in range(4):
        np.testing.assert_array_equal(out.at(j), np.arange(j, j + 4)[::-1] * 2.0)
        assert out.at(j).dtype == np.float64


def test_torch_function_in_batches_and_pytorch_plugin_name():
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch.fn import torch_python_function

    _, [(out,)] = _run(lambda x: torch_python_function(
        x, function=lambda ts: torch.stack(ts) + 1, batch_processing=True))
    np.testing.assert_array_equal(np.stack([out.at(j) for j in range(4)]),
                                  np.arange(4)[:, None] + np.arange(4) + 1)


def test_torch_function_returning_numpy_is_refused_by_name():
    pytest.importorskip("torch")
    with pytest.raises(SampleError, match=r"fn\.torch_python_function.*must return torch "
                                          r"tensors, got ndarray"):
        _run(lambda x: fn.torch_python_function(x, function=lambda t: t.numpy()))


def test_function_may_change_its_input_in_place_without_changing_the_batch():
    # DALI hands over its batch's memory and functions change it in place (DALI's erase
    # test); stoker hands over a copy, so the other reader of x sees x unchanged.
    def f(a):
        a += 1
        return a

    _, [(a, b)] = _run(lambda x: (fn.python_function(x, function=f), x))
    for i in range(len(b)):
        np.testing.assert_array_equal(np.asarray(a.at(i)), np.asarray(b.at(i)) + 1)


def test_returned_input_is_not_shared_with_the_next_operator():
    _, [(a, b)] = _run(lambda x: (fn.python_function(x, function=lambda v: v), x))
    assert a.at(0).flags.writeable
    np.testing.assert_array_equal(a.at(3), b.at(3))


def test_current_pipeline_inside_the_function_is_the_running_one():
    seen = []

    def f(a):
        seen.append(Pipeline.current())
        return a

    p, _ = _run(lambda x: fn.python_function(x, function=f))
    assert seen and all(s is p for s in seen)
    assert Pipeline.current() is None


def test_unused_function_runs_for_its_side_effects():
    calls = []
    # (Synchronous: with batches made ahead, the third batch's calls may land before the
    # count is read.)
    _run(lambda x: (fn.python_function(x, function=lambda a: calls.append(1),
                                       num_outputs=0), x)[1], iterations=2,
         exec_async=False, exec_pipelined=False)
    assert len(calls) == 8


def test_outputs_are_deterministic_and_survive_checkpoints():
    graph = lambda x: fn.python_function(  # noqa: E731
        x, fn.random.uniform(shape=[4], seed=7), function=lambda a, r: a * r)
    p, batches = _run(graph, iterations=3, enable_checkpointing=True, seed=5)
    _, again = _run(graph, iterations=3, seed=5)
    for x, y in zip(batches, again, strict=True):
        for j in range(4):
            np.testing.assert_array_equal(x[0].at(j), y[0].at(j))

    p2, _ = _run(graph, iterations=1, enable_checkpointing=True, seed=5)
    saved = p2.checkpoint()
    restored, [rest] = _run(graph, iterations=1, enable_checkpointing=True, seed=5,
                            checkpoint=saved)
    for j in range(4):
        np.testing.assert_array_equal(rest[0].at(j), batches[1][0].at(j))


def test_bad_arguments_are_refused_at_the_call():
    with pytest.raises(ArgumentError, match=r"fn\.python_function: argument 'function' must "
                                            r"be callable, got int"):
        _run(lambda x: fn.python_function(x, function=3))
    with pytest.raises(ArgumentError, match="'output_layouts' must be a layout string"):
        _run(lambda x: fn.python_function(x, function=abs, output_layouts=3))
    with pytest.raises(TypeError, match="missing required argument 'function'"):
        _run(lambda x: fn.python_function(x))


def test_error_in_batch_function_names_the_batch():
    def f(xs):
        raise KeyError("boom")

    with pytest.raises(SampleError, match=r"fn\.python_function.*failed on batch 0: "
                                          r"KeyError: 'boom'"):
        _run(lambda x: fn.python_function(x, function=f, batch_processing=True))
