"""The executor at work: run-time errors, batch order, prefetch, shutdown and thread hygiene."""

from __future__ import annotations

import gc
import inspect
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from helpers import CountingSource as Counter

from stoker import Pipeline, PipelineError, SampleError, fn, pipeline_def


def _stoker_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("stoker")}


def _wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def _collected_and_stopped(threads: set[threading.Thread]) -> bool:
    """Runs the collector until the threads end: a pipeline lives in reference cycles, and
    the producer thread may hold it for the batch it is still making ahead."""

    def stopped() -> bool:
        gc.collect()
        return not any(t.is_alive() for t in threads)

    return _wait_until(stopped)


def _counter_pipe(source, cycle=None, **kwargs) -> Pipeline:
    pipe = Pipeline(**{"batch_size": 2, "num_threads": 2, "device_id": None, "seed": 1,
                       **kwargs})
    with pipe:
        pipe.set_outputs(fn.external_source(source=source, cycle=cycle) + 0)
    return pipe


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_sample_error_names_operator_user_line_and_sample(exec_pipelined: bool) -> None:
    # Sample 6 of 8 is empty: random.choice cannot pick from it. Ragged samples keep the
    # operator on its per-sample path, which the pool splits across threads.
    samples = [np.arange(k % 3 + 1) for k in range(8)]
    samples[6] = np.array([], np.int64)
    pipe = Pipeline(batch_size=8, num_threads=3, device_id=None, seed=1,
                    exec_pipelined=exec_pipelined)
    with pipe:
        data = fn.external_source(source=lambda: samples)
        line = inspect.currentframe().f_lineno + 1
        picked = fn.random.choice(data)
        pipe.set_outputs(picked)
    with pytest.raises(SampleError) as info:
        pipe.run()
    pipe.close()
    message = str(info.value)
    assert message.startswith(f"fn.random.choice (created at {__file__}:{line}) failed on "
                              "sample 6 of batch 0: ValueError:")
    assert "no elements to choose from" in message
    assert (info.value.op, info.value.where) == ("fn.random.choice", f"{__file__}:{line}")
    assert info.value.source == "sample 6 of batch 0"
    assert isinstance(info.value.__cause__, ValueError)


def test_source_error_names_source_and_user_line() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, exec_pipelined=False)
    with pipe:
        line = inspect.currentframe().f_lineno + 1
        data = fn.external_source(source=Counter(fail_at=0))
        pipe.set_outputs(data)
    with pytest.raises(SampleError, match=(
            rf"fn.external_source \(created at {__file__}:{line}\): the source raised "
            r"ValueError: source broke on batch 0")):
        pipe.run()
    pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_error_surfaces_at_its_own_batch_with_prefetch(exec_pipelined: bool) -> None:
    pipe = _counter_pipe(Counter(fail_at=2), prefetch_queue_depth=3,
                         exec_pipelined=exec_pipelined)
    try:
        assert pipe.run()[0].at(0)[0] == 0
        assert pipe.run()[0].at(0)[0] == 1
        with pytest.raises(SampleError, match="source broke on batch 2"):
            pipe.run()
    finally:
        pipe.close()


def test_sources_of_different_batch_sizes_raise_sample_error() -> None:
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=None, exec_pipelined=False)
    with pipe:
        a = fn.external_source(source=Counter(batch_size=3))
        b = fn.external_source(source=Counter(batch_size=2))
        pipe.set_outputs(a, b)
    with pytest.raises(SampleError, match="produced a batch of 2 samples, but other sources of "
                                          "this pipeline produced 3"):
        pipe.run()
    pipe.close()


def test_source_batch_larger_than_batch_size_raises_sample_error() -> None:
    # DALI 2.4: "The external source callback returned an unexpected batch size.
    # Expected batch_size <= 2, actual: 3".
    pipe = _counter_pipe(Counter(batch_size=3), exec_pipelined=False)
    with pytest.raises(SampleError, match="the source returned 3 samples, more than the "
                                          "pipeline's batch_size=2"):
        pipe.run()
    pipe.close()


def test_source_batch_smaller_than_batch_size_is_a_short_batch() -> None:
    pipe = _counter_pipe(Counter(batch_size=1), exec_pipelined=False)
    (out,) = pipe.run()
    pipe.close()
    assert len(out) == 1


# -- order and prefetch --------------------------------------------------------------------------


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_batches_come_out_in_order(exec_pipelined: bool) -> None:
    pipe = _counter_pipe(Counter(batch_size=40), batch_size=40, num_threads=4,
                         prefetch_queue_depth=3, exec_pipelined=exec_pipelined)
    try:
        got = [pipe.run()[0].as_array()[:, 0] for _ in range(12)]
    finally:
        pipe.close()
    for k, batch in enumerate(got):
        assert (batch == k).all(), f"run {k} returned batch {batch[0]}"


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_first_run_prefetches_queue_depth_batches(depth: int) -> None:
    source = Counter()
    pipe = _counter_pipe(source, prefetch_queue_depth=depth)
    try:
        pipe.run()
        assert _wait_until(lambda: source.calls == depth)
        time.sleep(0.05)  # and no further than that
        assert source.calls == depth
        pipe.run()
        assert _wait_until(lambda: source.calls == depth + 1)
    finally:
        pipe.close()


def test_unpipelined_run_calls_source_once_per_batch() -> None:
    source = Counter()
    pipe = _counter_pipe(source, prefetch_queue_depth=3, exec_pipelined=False)
    try:
        pipe.run()
        assert source.calls == 1
        pipe.run()
        assert source.calls == 2
    finally:
        pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_schedule_run_then_outputs_and_share_outputs(exec_pipelined: bool) -> None:
    pipe = _counter_pipe(Counter(), exec_pipelined=exec_pipelined)
    try:
        pipe.schedule_run()
        assert pipe.outputs()[0].at(0)[0] == 0
        pipe.schedule_run()
        shared = pipe.share_outputs()
        assert shared[0].at(0)[0] == 1
        pipe.release_outputs()
        pipe.schedule_run()
        assert pipe.run()[0].at(0)[0] == 2
    finally:
        pipe.close()


def test_outputs_without_schedule_raises_pipeline_error() -> None:
    pipe = _counter_pipe(Counter(), exec_pipelined=False)
    pipe.build()
    with pytest.raises(PipelineError, match="no batch is scheduled"):
        pipe.outputs()
    pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_reset_after_stop_iteration_restarts_source_with_cycle_raise(exec_pipelined: bool) -> None:
    batches = [[np.full(2, k, np.int32)] * 2 for k in range(3)]
    pipe = _counter_pipe(batches, cycle="raise", exec_pipelined=exec_pipelined,
                         prefetch_queue_depth=2)
    try:
        for epoch in range(2):
            got = [pipe.run()[0].at(0)[0] for _ in range(3)]
            assert got == [0, 1, 2], f"epoch {epoch}"
            with pytest.raises(StopIteration):
                pipe.run()
            with pytest.raises(StopIteration):  # stays ended until reset()
                pipe.run()
            pipe.reset()
    finally:
        pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_reset_keeps_exhausted_source_ended_with_default_cycle(exec_pipelined: bool) -> None:
    # DALI 2.4 does the same: without cycle="raise" a finite source ends for good.
    batches = [[np.full(2, k, np.int32)] * 2 for k in range(2)]
    pipe = _counter_pipe(batches, exec_pipelined=exec_pipelined)
    try:
        assert [pipe.run()[0].at(0)[0] for _ in range(2)] == [0, 1]
        with pytest.raises(StopIteration):
            pipe.run()
        pipe.reset()
        with pytest.raises(StopIteration):
            pipe.run()
    finally:
        pipe.close()


def test_reset_restarts_generator_function_source_with_cycle_raise() -> None:
    def batches():
        for k in range(2):
            yield [np.full(2, k, np.int32)] * 2

    pipe = _counter_pipe(batches, cycle="raise")
    try:
        for _ in range(2):
            assert [pipe.run()[0].at(0)[0] for _ in range(2)] == [0, 1]
            with pytest.raises(StopIteration):
                pipe.run()
            pipe.reset()
    finally:
        pipe.close()


def test_run_after_close_raises_pipeline_error() -> None:
    pipe = _counter_pipe(Counter())
    pipe.run()
    pipe.close()
    assert pipe.closed
    with pytest.raises(PipelineError, match="the pipeline is closed"):
        pipe.run()


# -- shutdown ----------------------------------------------------------------------------------


def test_close_leaves_no_stoker_thread_running() -> None:
    gc.collect()
    before = _stoker_threads()
    pipe = Pipeline(batch_size=8, num_threads=4, device_id=None, py_num_workers=3, seed=1)
    with pipe:
        data = fn.external_source(source=lambda info: np.full(3, info.idx_in_batch),
                                  batch=False, parallel=True)
        pipe.set_outputs(data * 2)
    for _ in range(3):
        pipe.run()
    assert _stoker_threads() - before, "the pipeline should run on stoker threads"
    pipe.close()
    left = sorted(t.name for t in _stoker_threads() - before)
    assert left == []


def test_garbage_collection_of_pipeline_closes_its_threads() -> None:
    gc.collect()
    before = _stoker_threads()
    pipe = _counter_pipe(Counter(), num_threads=3)
    pipe.run()
    ours = _stoker_threads() - before
    assert len(ours) >= 3  # two workers and the prefetch thread
    del pipe
    assert _collected_and_stopped(ours), sorted(t.name for t in ours if t.is_alive())


def test_pipeline_def_pipeline_dropped_without_close_releases_threads() -> None:
    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def make():
        return fn.random.uniform(shape=[4])

    gc.collect()
    before = _stoker_threads()
    make().run()  # the pipeline is unreachable as soon as run() returns
    assert _collected_and_stopped(_stoker_threads() - before)


def _run_script(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)


def test_interpreter_exits_with_running_pipeline_not_closed() -> None:
    result = _run_script("""
        import numpy as np, time
        from stoker import Pipeline, fn
        def slow(info):
            time.sleep(0.01)
            return np.full(4, info.idx_in_epoch, np.float32)
        pipe = Pipeline(batch_size=16, num_threads=4, device_id=None, prefetch_queue_depth=3,
                        py_num_workers=2)
        with pipe:
            x = fn.external_source(source=slow, batch=False, parallel=True)
            pipe.set_outputs(x * 2 + fn.random.uniform(shape=[4]))
        for _ in range(3):
            pipe.run()
        print("done", flush=True)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"


def test_interpreter_exits_after_error_mid_run() -> None:
    result = _run_script("""
        import numpy as np
        from stoker import Pipeline, fn
        calls = []
        def source():
            calls.append(1)
            if len(calls) == 3:
                raise RuntimeError("boom on batch 2")
            return [np.zeros(3, np.float32)] * 8
        pipe = Pipeline(batch_size=8, num_threads=4, device_id=None, prefetch_queue_depth=2)
        with pipe:
            pipe.set_outputs(fn.external_source(source=source) + 1)
        for _ in range(5):
            pipe.run()
    """)
    assert result.returncode == 1
    assert "SampleError" in result.stderr and "boom on batch 2" in result.stderr


def test_interpreter_exits_while_source_blocks_in_prefetch() -> None:
    result = _run_script("""
        import threading
        import numpy as np
        from stoker import Pipeline, fn
        calls = []
        never = threading.Event()
        def source():
            calls.append(1)
            if len(calls) > 1:
                never.wait()  # the prefetched batch never arrives
            return [np.zeros(3, np.float32)] * 4
        pipe = Pipeline(batch_size=4, num_threads=2, device_id=None, prefetch_queue_depth=2)
        with pipe:
            pipe.set_outputs(fn.external_source(source=source))
        pipe.run()
        print("first batch", flush=True)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "first batch\n"
