"""What a pipeline makes of its outputs, as DALI 2.4 does: values that are not DataNodes
become constant outputs, a list of DataNodes is a TypeError at build(), and DataNodes
created outside any pipeline serve every pipeline that uses them. The types and shapes
DALI gives each kind of value are replayed in tests/test_tensor_api_vs_dali.py."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, fn, pipeline_def, types
from stoker.errors import GraphError


def _pipe(**kw) -> Pipeline:
    return Pipeline(batch_size=kw.pop("batch_size", 2), num_threads=1, device_id=None, **kw)


def _values(pipe: Pipeline) -> list:
    try:
        return [tl.as_array().tolist() for tl in pipe.run()]
    finally:
        pipe.close()


# -- constants ---------------------------------------------------------------------------------


def test_set_outputs_makes_constants_of_numbers_lists_and_arrays() -> None:
    pipe = _pipe()
    with pipe:
        pipe.set_outputs(fn.constant(idata=[1]), 1.5, [1, 2], np.array([[1, 2]], np.uint8),
                         types.Constant(4, dtype=types.INT16))
    outs = pipe.run()
    pipe.close()
    assert [o.dtype for o in outs[1:]] == [types.FLOAT, types.INT32, types.UINT8, types.INT16]
    assert [o.shape()[0] for o in outs[1:]] == [(), (2,), (1, 2), ()]
    assert [o.as_array().tolist() for o in outs[1:]] == \
        [[1.5, 1.5], [[1, 2], [1, 2]], [[[1, 2]], [[1, 2]]], [4, 4]]


def test_set_outputs_outside_the_pipeline_scope_owns_its_constants() -> None:
    pipe = _pipe()
    pipe.set_outputs(3)  # no `with pipe:` and no operator at all
    assert _values(pipe) == [[3, 3]]


def test_a_list_returned_by_pipeline_def_is_one_output() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def make():
        return [1.0, 2.0, 3.0]

    pipe = make()
    outs = pipe.run()
    pipe.close()
    assert len(outs) == 1 and outs[0].shape() == [(3,), (3,)]


def test_a_list_of_datanodes_is_a_type_error_at_build_as_in_dali() -> None:
    pipe = _pipe()
    with pipe:
        x = fn.constant(idata=[1])
        pipe.set_outputs([x, x])  # DALI accepts the call and refuses at build
    with pytest.raises(TypeError, match=r"pipeline output 0 is a list holding DataNodes; "
                                        r"pass each output separately \(unpack it with \*"):
        pipe.build()
    pipe.close()


def test_an_output_no_constant_can_hold_is_a_type_error_at_build() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def make():
        return fn.constant(idata=[1]), "abc"

    pipe = make()
    with pytest.raises(TypeError, match="pipeline output 1 must be a DataNode or a value "
                                        "types.Constant takes .* got str: 'abc'"):
        pipe.build()
    pipe.close()


def test_python_ints_beyond_int32_saturate_as_dali_constants_do() -> None:
    pipe = _pipe()
    pipe.set_outputs([2 ** 40, -(2 ** 40)])
    assert _values(pipe) == [[[2 ** 31 - 1, -(2 ** 31)]] * 2]


def test_int64_arrays_out_of_int32_range_raise_overflow_at_build() -> None:
    pipe = _pipe()
    pipe.set_outputs(np.array([2 ** 40]))
    with pytest.raises(OverflowError, match="out of range for int32"):
        pipe.build()
    pipe.close()


# -- DataNodes made outside any pipeline -------------------------------------------------------

COIN = fn.random.coin_flip(seed=123)  # at module level, as DALI users write it


def test_a_node_made_outside_serves_two_pipelines_alike() -> None:
    @pipeline_def(batch_size=8, num_threads=1, device_id=None, seed=5)
    def make(flip):
        return flip, flip + 1

    first, second = make(COIN), make(COIN)
    a, b = _values(first), _values(second)
    assert a == b and a[1] == [v + 1 for v in a[0]] and set(a[0]) <= {0, 1}


def test_each_pipeline_owns_its_copy_of_an_outside_node() -> None:
    node = fn.random.uniform(range=[0.0, 1.0], seed=9)
    first = _pipe()
    first.set_outputs(node)
    first.build()  # building fuses and compiles the first pipeline's own operators
    second = _pipe()
    with second:
        second.set_outputs(node * 2)
    assert node.op.pipeline is None  # the original stays free for further pipelines
    (a,) = _values(first)
    (b,) = _values(second)
    np.testing.assert_allclose(b, np.asarray(a) * 2, rtol=1e-6)


def test_an_external_source_made_outside_is_fed_per_pipeline_by_name() -> None:
    src = fn.external_source(name="shared")
    pipes = [_pipe(), _pipe()]
    for k, pipe in enumerate(pipes):
        pipe.set_outputs(src)
        pipe.build()
        pipe.feed_input(src, [np.full(2, k, np.int32)] * 2)
    assert [_values(p) for p in pipes] == [[[[0, 0], [0, 0]]], [[[1, 1], [1, 1]]]]


def test_a_node_of_another_pipeline_is_still_refused() -> None:
    first = _pipe()
    with first:
        x = fn.random.coin_flip()
        first.set_outputs(x)
    second = _pipe()
    with pytest.raises(GraphError, match="belongs to another pipeline"):
        second.set_outputs(x)
    first.close()
    second.close()
