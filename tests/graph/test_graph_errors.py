"""Graph definition: what tracing accepts, and the errors it raises for malformed graphs."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from stoker import (
    ArgumentError,
    ArgumentTypeError,
    DeviceError,
    GraphError,
    Pipeline,
    fn,
    pipeline_def,
    types,
)
from stoker.errors import GpuFallbackWarning
from stoker.operators.machinery import registry


def _batch() -> list[np.ndarray]:
    return [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]


def _pipe(**kwargs) -> Pipeline:
    return Pipeline(**{"batch_size": 2, "num_threads": 1, "device_id": None,
                       "exec_pipelined": False, "seed": 7, **kwargs})


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets GPU nodes be traced on a machine without one (nothing here runs them)."""
    monkeypatch.setattr(registry, "gpu_backend_available", lambda: True)


# -- foreign nodes and outputs ---------------------------------------------------------------


def test_node_from_another_pipeline_raises_graph_error_at_call() -> None:
    first, second = _pipe(), _pipe()
    with first:
        x = fn.external_source(source=_batch)
    with second, pytest.raises(GraphError, match="fn.cast: input .* belongs to another pipeline"):
        fn.cast(x, dtype=types.INT32)


def test_node_from_another_pipeline_as_argument_raises_graph_error() -> None:
    first, second = _pipe(), _pipe()
    with first:
        probability = fn.random.uniform(range=[0.0, 1.0])
    with second, pytest.raises(GraphError, match="belongs to another pipeline"):
        fn.random.coin_flip(probability=probability)


def test_output_from_another_pipeline_raises_graph_error_at_set_outputs() -> None:
    first, second = _pipe(), _pipe()
    with first:
        x = fn.external_source(source=_batch)
    with second, pytest.raises(GraphError, match="belongs to another pipeline"):
        second.set_outputs(x)


def test_output_that_no_constant_can_hold_raises_type_error_at_build() -> None:
    # Numbers, lists of numbers and arrays become constant outputs (tests/pipeline/
    # test_outputs.py); anything else is DALI's TypeError, at build().
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def returns_a_string():
        fn.external_source(source=_batch)
        return "three"

    pipe = returns_a_string()
    with pytest.raises(TypeError, match="pipeline output 0 must be a DataNode .*got str"):
        pipe.build()


def test_output_list_of_datanodes_asks_to_unpack_it() -> None:
    pipe = _pipe()
    with pipe:
        x = fn.external_source(source=_batch)
        pipe.set_outputs([x, x])
    with pytest.raises(TypeError, match=re.escape("pass each output separately")):
        pipe.build()


def test_pipeline_def_returning_none_raises_graph_error() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def forgets_return():
        fn.external_source(source=_batch)

    with pytest.raises(GraphError, match="'forgets_return' returned None"):
        forgets_return()


def test_pipeline_without_outputs_raises_graph_error_at_build() -> None:
    with pytest.raises(GraphError, match=re.escape("call set_outputs()")):
        _pipe().build()


def test_datanode_has_no_truth_value() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(TypeError, match="a DataNode has no truth value"):
            bool(x > 0)


def test_datanode_is_not_iterable() -> None:
    """Unpacking one output (``a, b = fn.op(...)`` on a single-output operator) raises, as
    in DALI, instead of recording subscripts 0, 1, 2, ... forever."""
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(TypeError, match="not iterable"):
            a, b = x
        with pytest.raises(TypeError, match="not iterable"):
            list(x)


# -- devices ---------------------------------------------------------------------------------


def test_gpu_request_without_gpu_keeps_the_data_on_the_cpu() -> None:
    # tests/pipeline/test_gpu_fallback.py: GPU pipelines run on the CPU where no GPU is.
    if registry.gpu_backend_available():
        pytest.skip("this machine has a GPU")
    with _pipe(device_id=0):
        x = fn.external_source(source=_batch)
        with pytest.warns(GpuFallbackWarning):
            registry._warned_no_gpu = False
            assert x.gpu() is x


def test_gpu_device_for_cpu_only_operator_raises_device_error() -> None:
    with _pipe(), pytest.raises(DeviceError, match=re.escape(
            "fn.random.uniform: device='gpu' is not supported; this operator runs on 'cpu'")):
        fn.random.uniform(device="gpu")


def test_unknown_device_raises_argument_error() -> None:
    with _pipe(), pytest.raises(ArgumentError, match=re.escape(
            "fn.random.normal: argument 'device' must be one of 'cpu', 'gpu', 'mixed', "
            "got 'tpu'")):
        fn.random.normal(device="tpu")


def test_gpu_output_into_cpu_operator_raises_graph_error(fake_gpu: None) -> None:
    with _pipe():
        on_gpu = fn.external_source(source=_batch).gpu()
        assert on_gpu.device == "gpu"
        with pytest.raises(GraphError, match="fn.cast: input .* is on the GPU but the "
                                             "operator runs on the CPU"):
            fn.cast(on_gpu, dtype=types.INT32, device="cpu")


def test_gpu_node_as_cpu_argument_raises_graph_error(fake_gpu: None) -> None:
    with _pipe():
        probability = fn.random.uniform(range=[0.0, 1.0]).gpu()
        with pytest.raises(GraphError, match="argument 'probability' must be a CPU node"):
            fn.random.coin_flip(probability=probability)


def test_gpu_operator_in_cpu_only_pipeline_raises_graph_error_at_build(fake_gpu: None) -> None:
    pipe = _pipe(device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=_batch).gpu())
    with pytest.raises(GraphError, match="created with device_id=None"):
        pipe.build()


def test_cpu_method_on_cpu_node_returns_same_node() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        assert x.cpu() is x


# -- arguments -------------------------------------------------------------------------------


def test_missing_required_argument_raises_type_error() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(TypeError, match=re.escape("fn.cast: missing required argument "
                                                      "'dtype'")):
            fn.cast(x)


def test_unknown_argument_suggests_close_name() -> None:
    with _pipe(), pytest.raises(ArgumentTypeError, match=re.escape(
            "fn.random.uniform: unknown argument 'rnage'; did you mean 'range'?")):
        fn.random.uniform(rnage=[0.0, 1.0])


def test_unknown_argument_without_close_name_gives_no_suggestion() -> None:
    with _pipe(), pytest.raises(TypeError, match=r"unknown argument 'zzzz'$"):
        fn.random.uniform(zzzz=1)


def test_wrong_argument_type_names_operator_argument_value_and_rule() -> None:
    with _pipe(), pytest.raises(ArgumentTypeError, match=re.escape(
            "fn.random.uniform: argument 'range' must be a number or a list of numbers, "
            "got 'ab' of type str")):
        fn.random.uniform(range="ab")


def test_argument_out_of_range_names_operator_argument_value_and_rule() -> None:
    with _pipe(), pytest.raises(ArgumentError, match=re.escape(
            "fn.random.coin_flip: argument 'probability' must be in [0, 1], got 1.5")):
        fn.random.coin_flip(probability=1.5)


def test_argument_of_wrong_length_raises_argument_error() -> None:
    with _pipe(), pytest.raises(ValueError, match=re.escape(
            "fn.random.uniform: argument 'range' must have 2 elements, got [1.0]")):
        fn.random.uniform(range=[1.0])


def test_argument_outside_choices_lists_the_choices() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(ArgumentError, match=re.escape(
                "fn.get_property: argument 'key' must be one of 'source_info', 'layout', "
                "got 'size'")):
            fn.get_property(x, key="size")


def test_dtype_given_as_string_raises_type_error() -> None:
    # DALI refuses names too; "float" would mean float64 to numpy but FLOAT (float32) to DALI.
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(ArgumentTypeError, match="argument 'dtype' must be a data type"):
            fn.cast(x, dtype="float")


def test_dtype_accepts_dali_enum_numpy_type_and_enum_value() -> None:
    pipe = _pipe()
    with pipe:
        x = fn.external_source(source=_batch)
        pipe.set_outputs(fn.cast(x, dtype=types.INT16), fn.cast(x, dtype=np.uint8),
                         fn.cast(x, dtype=int(types.FLOAT64)))
    a, b, c = pipe.run()
    assert (a.dtype, b.dtype, c.dtype) == (types.INT16, types.UINT8, types.FLOAT64)


def test_datanode_for_constant_only_argument_raises_type_error() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(ArgumentTypeError, match="argument 'dtype' takes a constant, not a "
                                                    "per-sample DataNode"):
            fn.cast(x, dtype=fn.random.uniform())


def test_wrong_number_of_inputs_raises_type_error() -> None:
    with _pipe():
        x = fn.external_source(source=_batch)
        with pytest.raises(TypeError, match=re.escape("fn.cast: expects 1 input(s), got 2")):
            fn.cast(x, x, dtype=types.INT32)


def test_input_that_is_neither_datanode_nor_constant_raises_type_error() -> None:
    with _pipe(), pytest.raises(ArgumentTypeError, match=re.escape(
            "fn.copy: input 0 must be a DataNode (an output of another operator) or a "
            "constant, got str")):
        fn.copy("images")


def test_numeric_input_becomes_a_constant_node() -> None:
    pipe = _pipe()
    with pipe:
        pipe.set_outputs(fn.cast(np.array([1.5, 2.5]), dtype=types.INT32))
    (out,) = pipe.run()
    assert out.at(1).tolist() == [2, 3]  # DALI's cast rounds half away from zero


def test_too_many_positional_arguments_raises_type_error() -> None:
    with _pipe(), pytest.raises(TypeError, match="fn.external_source: too many positional"):
        fn.external_source(_batch, 1, "extra")


# -- graphs that must work -------------------------------------------------------------------


def test_operator_with_two_inputs_from_sources_runs() -> None:
    # Two source outputs read by one operator once broke the liveness pass (DataNode.__eq__).
    pipe = _pipe()
    with pipe:
        a = fn.external_source(source=_batch)
        b = fn.external_source(source=_batch)
        pipe.set_outputs(a + b, a * b)
    total, product = pipe.run()
    np.testing.assert_array_equal(total.at(0), 2 * _batch()[0])
    np.testing.assert_array_equal(product.at(1), _batch()[1])


def test_diamond_graph_computes_each_node_once_and_correctly() -> None:
    calls = []

    def source():
        calls.append(1)
        return _batch()

    pipe = _pipe()
    with pipe:
        x = fn.external_source(source=source)
        pipe.set_outputs((x * 2) + (x + 1), x)
    out, x_out = pipe.run()
    np.testing.assert_array_equal(out.at(0), 3 * _batch()[0] + 1)
    np.testing.assert_array_equal(x_out.at(0), _batch()[0])
    assert len(calls) == 1


def test_nodes_traced_outside_any_pipeline_are_copied_in_by_set_outputs() -> None:
    x = fn.external_source(source=_batch)
    y = fn.cast(x, dtype=types.INT32)
    pipe = _pipe()
    pipe.set_outputs(y)
    (out,) = pipe.run()
    # The pipeline runs its own copies; the originals stay free for other pipelines.
    assert out.dtype == types.INT32 and x.op.pipeline is None
    assert [op.name for op in pipe._ops] == [x.op.name, y.op.name]


def test_unused_operator_is_pruned_unless_preserved() -> None:
    calls = {"unused": 0, "preserved": 0}

    def counting(key):
        def source():
            calls[key] += 1
            return _batch()
        return source

    pipe = _pipe()
    with pipe:
        fn.external_source(source=counting("unused"))
        fn.external_source(source=counting("preserved"), preserve=True)
        pipe.set_outputs(fn.external_source(source=_batch))
    pipe.run()
    assert calls == {"unused": 0, "preserved": 1}


def test_same_node_may_be_two_outputs() -> None:
    pipe = _pipe()
    with pipe:
        x = fn.external_source(source=_batch)
        pipe.set_outputs(x, x)
    a, b = pipe.run()
    np.testing.assert_array_equal(a.as_array(), b.as_array())


def test_per_sample_argument_node_drives_operator() -> None:
    pipe = _pipe(batch_size=4)
    with pipe:
        probability = fn.external_source(
            source=lambda: np.array([0.0, 1.0, 0.0, 1.0], np.float32))
        pipe.set_outputs(fn.random.coin_flip(probability=probability, shape=[8]))
    (flips,) = pipe.run()
    assert flips.as_array().sum(axis=1).tolist() == [0, 8, 0, 8]


def test_op_records_the_user_line_that_created_it() -> None:
    with _pipe():
        line = inspect.currentframe().f_lineno + 1
        x = fn.external_source(source=_batch)
    assert x.op.where == f"{__file__}:{line}"
