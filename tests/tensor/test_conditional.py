"""Conditionals beyond DALI's recorded cases: each branch runs only on its samples, random
draws in branches, determinism and checkpoints, helpers the rewrite converts or leaves
alone, and the errors for what cannot be branched on (test_conditional_vs_dali compares
outputs with DALI)."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import GraphError, SampleError
from stoker.pipeline import do_not_convert


def _x(info):
    return np.array([info.idx_in_epoch], np.int32)


def _run(graph, batch_size=8, iterations=1, **kwargs):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None,
                  enable_conditionals=True, **kwargs)
    def pipe():
        return graph(fn.external_source(source=_x, batch=False))

    p = pipe()
    p.build()
    return p, [p.run() for _ in range(iterations)]


def _seen_by_branches(x):
    seen = {"true": [], "false": []}

    def record(label):
        def f(a):
            seen[label].append(int(a[0]))
            return a
        return f

    return seen, record


def test_each_branch_runs_only_on_its_samples():
    seen, record = _seen_by_branches(None)

    def graph(x):
        if x[0] % 3 == 0:
            y = fn.python_function(x, function=record("true"))
        else:
            y = fn.python_function(x, function=record("false")) * 10
        return y

    _, [(out,)] = _run(graph)
    # (The pipeline may have started the next batches: samples 8, 9, ...)
    assert seen["true"][:3] == [0, 3, 6] and all(v % 3 == 0 for v in seen["true"])
    assert seen["false"][:5] == [1, 2, 4, 5, 7] and all(v % 3 for v in seen["false"])
    assert [int(out.at(j)[0]) for j in range(8)] == [0, 10, 20, 3, 40, 50, 6, 70]


def test_empty_branch_runs_nothing_and_merges():
    calls = []

    def graph(x):
        if x[0] > 100:
            y = fn.python_function(x, function=lambda a: calls.append(a) or a)
        else:
            y = x + 1
        return y

    _, [(out,)] = _run(graph)
    assert calls == []
    assert [int(out.at(j)[0]) for j in range(8)] == list(range(1, 9))


def test_random_draws_in_branches_keep_their_ranges_and_are_deterministic():
    def graph(x):
        if x[0] % 2 == 0:
            y = fn.random.uniform(range=[0.0, 1.0], shape=[16])
        else:
            y = fn.random.uniform(range=[5.0, 6.0], shape=[16])
        return y

    _, batches = _run(graph, iterations=4, seed=11)
    _, again = _run(graph, iterations=4, seed=11)
    values = {0: [], 1: []}
    for (tl,), (tl2,) in zip(batches, again, strict=True):
        for j in range(8):
            values[j % 2].append(tl.at(j))
            np.testing.assert_array_equal(tl.at(j), tl2.at(j))
    even, odd = np.concatenate(values[0]), np.concatenate(values[1])
    assert even.min() >= 0 and even.max() < 1 and odd.min() >= 5 and odd.max() < 6
    # 256 uniform draws per branch: the mean is within 5 standard errors of the middle.
    assert abs(even.mean() - 0.5) < 5 * (1 / np.sqrt(12 * even.size))
    assert abs(odd.mean() - 5.5) < 5 * (1 / np.sqrt(12 * odd.size))


def test_thread_count_does_not_change_outputs():
    def graph(x):
        if x[0] > 3:
            y = fn.cast(x, dtype=types.FLOAT) * 0.5
        else:
            y = fn.cast(x + 1, dtype=types.FLOAT)
        return y

    outs = []
    for threads in (1, 3):
        @pipeline_def(batch_size=8, num_threads=threads, device_id=None,
                      enable_conditionals=True)
        def pipe():
            return graph(fn.external_source(source=_x, batch=False))

        p = pipe()
        p.build()
        outs.append([p.run()[0].at(j) for j in range(8)])
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_restores_a_pipeline_with_conditionals():
    def graph(x):
        if x[0] % 2 == 0:
            y = x * 2
        else:
            y = fn.random.uniform(range=[0, 100], shape=[1], dtype=types.INT32)
        return y

    _, batches = _run(graph, batch_size=4, iterations=3, seed=3, enable_checkpointing=True)
    p, _ = _run(graph, batch_size=4, iterations=2, seed=3, enable_checkpointing=True)
    _, [rest] = _run(graph, batch_size=4, iterations=1, seed=3, enable_checkpointing=True,
                     checkpoint=p.checkpoint())
    for j in range(4):
        np.testing.assert_array_equal(rest[0].at(j), batches[2][0].at(j))


def helper_converted(x):
    if x[0] > 1:
        return x + 1
    return x - 1


@do_not_convert
def helper_left_alone(x):
    if x[0] > 1:
        return x + 1
    return x - 1


def test_helpers_are_converted_unless_marked():
    _, [(out,)] = _run(lambda_free_graph)
    assert [int(out.at(j)[0]) for j in range(4)] == [-1, 0, 3, 4]
    with pytest.raises(TypeError, match="no truth value"):
        _run(marked_graph)


def lambda_free_graph(x):
    return helper_converted(x)


def marked_graph(x):
    return helper_left_alone(x)


def test_python_conditions_keep_python_semantics():
    def graph(x):
        out = x
        for k in range(3):
            if k == 1:
                continue  # a Python `if` may hold continue: it is left as Python's
            if k > 0 and k != 5:
                out = out + k
        return out

    _, [(out,)] = _run(graph)
    assert [int(out.at(j)[0]) for j in range(3)] == [2, 3, 4]


def test_break_inside_an_if_on_a_datanode_is_refused_by_line():
    def graph(x):
        y = x
        for _ in range(2):
            if x[0] > 1:
                y = y + 1
                break
        return y

    with pytest.raises(GraphError, match=r"the `if` at .*test_conditional\.py:\d+ tests a "
                                         r"DataNode, but it holds `break`"):
        _run(graph)


def test_source_inside_a_branch_is_refused():
    def graph(x):
        if x[0] > 1:
            y = fn.external_source(source=_x, batch=False)
        else:
            y = x
        return y

    with pytest.raises(GraphError, match="fn.external_source: a source cannot be used inside "
                                         "a branch"):
        _run(graph)


def test_value_made_in_one_branch_cannot_be_used_in_the_other():
    def graph(x):
        if x[0] > 1:
            y = x + 1
            z = y
        else:
            z = y * 2  # noqa: F821
        return z

    with pytest.raises(NameError, match="'y' has no value in the false branch of the `if` at "
                                        r".*test_conditional\.py:\d+"):
        _run(graph)


def test_error_inside_a_branch_names_the_operator_and_line():
    def boom(a):
        raise ValueError("bad sample")

    def graph(x):
        if x[0] > 5:
            y = fn.python_function(x, function=boom)
        else:
            y = x
        return y

    with pytest.raises(SampleError, match=r"fn\.python_function \(created at .*"
                                          r"test_conditional\.py:\d+\).*bad sample"):
        _run(graph)


def test_dense_and_ragged_branches_merge_in_order():
    def graph(x):
        if x[0] % 2 == 0:
            y = fn.cat(x, x)
        else:
            y = fn.cat(x, x, x)
        return y

    _, [(out,)] = _run(graph)
    for j in range(8):
        np.testing.assert_array_equal(out.at(j), [j] * (2 if j % 2 == 0 else 3))


def test_skipping_failed_samples_is_refused_with_conditionals():
    from stoker.errors import PipelineError

    def graph(x):
        if x[0] > 1:
            y = x + 1
        else:
            y = x
        return y

    with pytest.raises(PipelineError, match="on_error='skip' cannot be combined with "
                                            "conditionals"):
        _run(graph, on_error="skip")
