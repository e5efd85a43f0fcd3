"""The Pipeline object and @pipeline_def: construction, tracing context, feeding, life cycle."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from stoker import (
    ArgumentError,
    ArgumentTypeError,
    Pipeline,
    PipelineError,
    fn,
    pipeline_def,
    types,
)


def _cpu(**kwargs) -> dict:
    return {"num_threads": 1, "device_id": None, **kwargs}


# -- Pipeline.current and the tracing context ------------------------------------------------


def test_current_is_the_pipeline_inside_with_and_none_outside() -> None:
    pipe = Pipeline(batch_size=1, **_cpu())
    assert Pipeline.current() is None
    with pipe:
        assert Pipeline.current() is pipe
    assert Pipeline.current() is None


def test_current_in_nested_with_is_the_innermost_pipeline() -> None:
    outer, inner = Pipeline(batch_size=1, **_cpu()), Pipeline(batch_size=1, **_cpu())
    with outer:
        with inner:
            assert Pipeline.current() is inner
            node = fn.random.uniform()
        assert Pipeline.current() is outer
    assert node.op.pipeline is inner


def test_current_inside_pipeline_def_function_gives_its_pipeline() -> None:
    seen = {}

    @pipeline_def(batch_size=3, **_cpu())
    def make():
        seen["pipe"] = Pipeline.current()
        seen["batch_size"] = Pipeline.current().batch_size
        return fn.random.uniform()

    pipe = make()
    assert seen == {"pipe": pipe, "batch_size": 3}


def test_with_exits_cleanly_when_definition_raises() -> None:
    pipe = Pipeline(batch_size=1, **_cpu())
    with pytest.raises(ArgumentTypeError), pipe:
        fn.random.uniform(bogus=1)
    assert Pipeline.current() is None


# -- pipeline_def ----------------------------------------------------------------------------


def test_pipeline_def_bare_takes_pipeline_args_at_call() -> None:
    @pipeline_def
    def make():
        return fn.random.uniform(shape=[2])

    pipe = make(batch_size=3, **_cpu())
    (out,) = pipe.run()
    pipe.close()
    assert len(out) == 3 and out.shape() == [(2,)] * 3


def test_pipeline_def_with_args_builds_configured_pipeline() -> None:
    @pipeline_def(batch_size=5, seed=11, prefetch_queue_depth=3, **_cpu())
    def make():
        return fn.random.uniform()

    pipe = make()
    assert (pipe.batch_size, pipe.seed, pipe.prefetch_queue_depth) == (5, 11, 3)
    assert len(pipe.run()[0]) == 5
    pipe.close()


def test_call_site_args_override_decorator_args() -> None:
    @pipeline_def(batch_size=2, seed=1, **_cpu())
    def make():
        return fn.random.uniform()

    pipe = make(batch_size=4, seed=2)
    assert (pipe.batch_size, pipe.seed) == (4, 2)
    assert len(pipe.run()[0]) == 4
    pipe.close()


def test_function_args_and_kwargs_pass_through() -> None:
    @pipeline_def(batch_size=2, **_cpu())
    def make(first, scale=1):
        return fn.constant(idata=[first * scale])

    pipe = make(3, scale=5)
    assert pipe.run()[0].at(1).tolist() == [15]
    pipe.close()


def test_pipeline_def_marks_the_factory() -> None:
    @pipeline_def
    def make():
        return fn.random.uniform()

    assert make._is_pipeline_def and make.__name__ == "make"


# -- construction ----------------------------------------------------------------------------


def test_properties_echo_constructor_arguments() -> None:
    pipe = Pipeline(batch_size=7, num_threads=3, device_id=None, seed=5, exec_pipelined=False,
                    prefetch_queue_depth=4)
    assert (pipe.batch_size, pipe.max_batch_size, pipe.num_threads, pipe.device_id,
            pipe.seed, pipe.prefetch_queue_depth) == (7, 7, 3, None, 5, 4)
    assert pipe.exec_pipelined is False and pipe.exec_async is False


def test_num_threads_unset_uses_every_core() -> None:
    assert Pipeline(batch_size=1, device_id=None).num_threads == (os.cpu_count() or 1)


def test_prefetch_queue_depth_dict_uses_cpu_size() -> None:
    pipe = Pipeline(batch_size=1, prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2}, **_cpu())
    assert pipe.prefetch_queue_depth == 3


def test_prefetch_queue_depth_below_one_raises_argument_error() -> None:
    with pytest.raises(ArgumentError, match="'prefetch_queue_depth' must be at least 1, got 0"):
        Pipeline(batch_size=1, prefetch_queue_depth=0, **_cpu())


def test_build_without_batch_size_raises_argument_error() -> None:
    pipe = Pipeline(**_cpu())
    with pipe:
        pipe.set_outputs(fn.random.uniform())
    with pytest.raises(ArgumentError, match="'batch_size' must be a positive integer"):
        pipe.build()


def test_build_twice_is_harmless_and_build_after_close_raises() -> None:
    pipe = Pipeline(batch_size=1, **_cpu())
    with pipe:
        pipe.set_outputs(fn.random.uniform())
    pipe.build()
    pipe.build()
    assert len(pipe.run()[0]) == 1
    pipe.close()
    with pytest.raises(PipelineError, match="the pipeline is closed"):
        pipe.build()


def test_set_outputs_after_build_raises_pipeline_error() -> None:
    pipe = Pipeline(batch_size=1, **_cpu())
    with pipe:
        x = fn.random.uniform()
        pipe.set_outputs(x)
    pipe.build()
    with pytest.raises(PipelineError, match="already built"):
        pipe.set_outputs(x)
    pipe.close()


def test_legacy_define_graph_subclass_runs() -> None:
    class Legacy(Pipeline):
        def define_graph(self):
            return fn.constant(fdata=[1.5, 2.5])

    pipe = Legacy(batch_size=2, **_cpu())
    (out,) = pipe.run()
    pipe.close()
    np.testing.assert_array_equal(out.as_array(), [[1.5, 2.5], [1.5, 2.5]])


# -- feeding ---------------------------------------------------------------------------------


def test_feed_input_by_name_gives_that_batch() -> None:
    pipe = Pipeline(batch_size=2, exec_pipelined=False, **_cpu())
    with pipe:
        pipe.set_outputs(fn.external_source(name="images", dtype=types.UINT8) * 2)
    batch = [np.array([1, 2], np.uint8), np.array([3], np.uint8)]
    pipe.feed_input("images", batch)
    (out,) = pipe.run()
    assert [np.asarray(s).tolist() for s in out] == [[2, 4], [6]]
    (out,) = pipe.run(images=[np.array([5], np.uint8)] * 2)
    assert np.asarray(out.at(1)).tolist() == [10]
    pipe.close()


def test_feed_input_unknown_name_raises_argument_error() -> None:
    pipe = Pipeline(batch_size=1, **_cpu())
    with pipe:
        pipe.set_outputs(fn.external_source(name="images"))
    with pytest.raises(ArgumentError, match="feed_input: no external_source named 'labels'"):
        pipe.feed_input("labels", [np.zeros(1)])
    pipe.close()


def test_run_without_fed_data_raises_argument_error() -> None:
    pipe = Pipeline(batch_size=1, exec_pipelined=False, **_cpu())
    with pipe:
        pipe.set_outputs(fn.external_source(name="images"))
    with pytest.raises(ArgumentError, match=re.escape("no data was fed; call "
                                                      "pipe.feed_input('images', batch)")):
        pipe.run()
    pipe.close()
