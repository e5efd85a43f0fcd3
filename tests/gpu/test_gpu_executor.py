"""The two-step executor (CPU part on the producer thread, GPU part on a second thread) on
torch CPU tensors (STOKER_GPU_ON_CPU=1): order, prefetch depth, errors in place, end of
stream, reset, overlap of the two parts, the PyTorch iterators, and shutdown.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import CountingSource as Counter  # noqa: E402

from stoker import Pipeline, fn  # noqa: E402
from stoker.errors import PipelineError  # noqa: E402
from stoker.executor.gpu import GpuRunner  # noqa: E402
from stoker.plugin.pytorch import (  # noqa: E402
    DALIClassificationIterator,
    DALIGenericIterator,
    DALIRaggedIterator,
    LastBatchPolicy,
)
from stoker.tensors import TensorList, TensorListGPU  # noqa: E402


@pytest.fixture(autouse=True)
def gpu_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")


def counter_pipe(source, cycle=None, **kwargs) -> Pipeline:
    pipe = Pipeline(**{"batch_size": 2, "num_threads": 2, "device_id": 0, "seed": 1,
                       **kwargs})
    with pipe:
        x = fn.external_source(source=source, cycle=cycle)
        pipe.set_outputs(x.gpu(), x + 0)
    return pipe


def first(out) -> int:
    gpu, cpu = out
    assert isinstance(gpu, TensorListGPU) and isinstance(cpu, TensorList)
    value = int(gpu.as_cpu().as_array()[0, 0])
    assert value == int(cpu.as_array()[0, 0])  # both parts are of the same batch
    return value


@pytest.mark.parametrize("exec_pipelined", [False, True])
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_batches_come_in_order_with_any_prefetch_depth(exec_pipelined, depth) -> None:
    source = Counter()
    pipe = counter_pipe(source, exec_pipelined=exec_pipelined, prefetch_queue_depth=depth)
    try:
        assert [first(pipe.run()) for _ in range(7)] == list(range(7))
        # No more than the prefetch depth is ever made ahead of the consumer.
        assert source.calls <= 7 + (depth if exec_pipelined else 0)
    finally:
        pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_source_error_arrives_in_its_place_and_the_run_goes_on(exec_pipelined) -> None:
    pipe = counter_pipe(Counter(fail_at=2), exec_pipelined=exec_pipelined,
                        prefetch_queue_depth=3)
    try:
        assert [first(pipe.run()) for _ in range(2)] == [0, 1]
        with pytest.raises(Exception, match="source broke on batch 2"):
            pipe.run()
        assert first(pipe.run()) == 3
    finally:
        pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_gpu_part_error_arrives_in_its_place(exec_pipelined, monkeypatch) -> None:
    real = GpuRunner.run

    def run(self, part):
        if part.bctx.iteration == 1:
            raise RuntimeError("gpu part broke")
        return real(self, part)

    monkeypatch.setattr(GpuRunner, "run", run)
    pipe = counter_pipe(Counter(), exec_pipelined=exec_pipelined, prefetch_queue_depth=3)
    try:
        assert first(pipe.run()) == 0
        with pytest.raises(RuntimeError, match="gpu part broke"):
            pipe.run()
        assert [first(pipe.run()) for _ in range(2)] == [2, 3]
    finally:
        pipe.close()


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_stop_iteration_and_reset_with_a_gpu_part(exec_pipelined) -> None:
    batches = [[np.full(3, k, np.int32)] * 2 for k in range(3)]
    pipe = counter_pipe(batches, cycle="raise", exec_pipelined=exec_pipelined,
                        prefetch_queue_depth=2)
    try:
        for epoch in range(2):
            assert [first(pipe.run()) for _ in range(3)] == [0, 1, 2], f"epoch {epoch}"
            with pytest.raises(StopIteration):
                pipe.run()
            with pytest.raises(StopIteration):  # stays ended until reset()
                pipe.run()
            pipe.reset()
    finally:
        pipe.close()


def test_schedule_run_and_outputs_with_a_gpu_part() -> None:
    pipe = counter_pipe(Counter(), prefetch_queue_depth=2)
    try:
        pipe.build()
        with pytest.raises(PipelineError, match="no batch is scheduled"):
            pipe.outputs()
        pipe.schedule_run()
        assert first(pipe.outputs()) == 0
        pipe.schedule_run()
        assert first(pipe.share_outputs()) == 1
        assert first(pipe.run()) == 2
    finally:
        pipe.close()


def test_cpu_part_of_the_next_batch_overlaps_the_gpu_part(monkeypatch) -> None:
    """While the GPU part of batch 0 runs, the producer makes batch 1's CPU part."""
    events: list[tuple[str, int, float]] = []
    real = GpuRunner.run

    def slow_run(self, part):
        events.append(("gpu start", part.bctx.iteration, time.perf_counter()))
        time.sleep(0.2)
        out = real(self, part)
        events.append(("gpu end", part.bctx.iteration, time.perf_counter()))
        return out

    monkeypatch.setattr(GpuRunner, "run", slow_run)
    calls = []

    def source(info):
        calls.append((info.iteration, time.perf_counter()))
        return [np.full(3, info.iteration, np.int32)] * 2

    pipe = Pipeline(batch_size=2, num_threads=2, device_id=0, seed=1, prefetch_queue_depth=2)
    with pipe:
        x = fn.external_source(source=source, batch_info=True)
        pipe.set_outputs(x.gpu(), x + 0)
    try:
        assert [first(pipe.run()) for _ in range(2)] == [0, 1]
    finally:
        pipe.close()
    gpu0_end = next(t for what, it, t in events if what == "gpu end" and it == 0)
    cpu1 = next(t for it, t in calls if it == 1)
    assert cpu1 < gpu0_end


def test_pipeline_without_gpu_operators_has_no_second_thread() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=0, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source=Counter()) + 0)
    try:
        pipe.run()
        assert not pipe._plan.has_gpu and pipe._runtime.executor.gpu is None
        assert pipe._runtime.prefetcher._finisher is None
    finally:
        pipe.close()


def test_close_leaves_no_thread_behind() -> None:
    before = set(threading.enumerate())
    pipe = counter_pipe(Counter(), prefetch_queue_depth=3)
    for _ in range(3):
        pipe.run()
    pipe.close()
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert left == []


def test_dropped_pipeline_is_collected_and_its_threads_stop() -> None:
    """The finisher thread once kept its last batch, and through it the pipeline, alive:
    pipelines rebuilt every epoch without close() piled up three threads each."""
    import gc

    before = set(threading.enumerate())
    for _ in range(3):
        pipe = counter_pipe(Counter())
        for _ in range(3):
            pipe.run()
        del pipe
        gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        gc.collect()
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left:
            break
        time.sleep(0.05)
    assert left == []


# -- PyTorch iterators ------------------------------------------------------------------------

def test_iterator_hands_gpu_outputs_over_as_tensors_without_a_copy(monkeypatch) -> None:
    seen = []
    real = TensorListGPU.as_torch

    def spy(self):
        t = real(self)
        seen.append(t.data_ptr())
        return t

    monkeypatch.setattr(TensorListGPU, "as_torch", spy)
    pipe = counter_pipe(Counter())
    it = DALIGenericIterator(pipe, ["gpu", "cpu"], size=6)
    got = []
    for batch in it:
        gpu, cpu = batch[0]["gpu"], batch[0]["cpu"]
        assert isinstance(gpu, torch.Tensor) and gpu.device.type == "cpu"
        assert gpu.data_ptr() in seen  # the batch's own tensor, not a copy
        assert torch.equal(gpu, cpu)
        got.append(int(gpu[0, 0]))
    assert got == [0, 1, 2]
    pipe.close()


def test_iterator_trims_a_partial_last_gpu_batch() -> None:
    pipe = counter_pipe(Counter())
    it = DALIClassificationIterator(pipe, size=5, last_batch_policy=LastBatchPolicy.PARTIAL)
    sizes = [len(b[0]["data"]) for b in it]
    assert sizes == [2, 2, 1]
    pipe.close()


def test_ragged_iterator_gives_gpu_samples_as_tensors() -> None:
    samples = [np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32)]
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=0, seed=1)
    with pipe:
        x = fn.external_source(source=lambda: samples)
        pipe.set_outputs(x.gpu(), x.gpu())
    it = DALIRaggedIterator(pipe, ["list", "coo"], size=2,
                            output_types=[DALIRaggedIterator.SPARSE_LIST_TAG,
                                          DALIRaggedIterator.SPARSE_COO_TAG])
    (batch,) = list(it)
    assert [t.tolist() for t in batch[0]["list"]] == [s.tolist() for s in samples]
    dense = batch[0]["coo"].to_dense()
    assert dense.shape == (2, 5) and dense[1].tolist() == samples[1].tolist()
    pipe.close()
