"""The GPU part of a batch: operators placed on the GPU, run on the pipeline's torch device.

The executor runs the CPU part of a batch (sources, per-sample and batch stages) on the
producer thread; what comes after (``Plan.gpu_from``) runs here, on the prefetcher's second
thread, while the producer makes the next batch's CPU part. Each pipeline has one CUDA
stream for this work (None on CPU tensors); when a batch is done an event is recorded on
it, and whoever uses the outputs waits for that event (``TensorListGPU``).

A CPU value that a GPU operator reads is uploaded once per batch: copied into pinned
memory and sent with a non-blocking copy on the stream (CUDA), or wrapped with
``torch.from_numpy`` (``STOKER_GPU_ON_CPU=1``). A value that a CPU node reads back
(``.cpu()``) is downloaded to numpy. Mixed operators (decoders) take their CPU inputs as
they are and make GPU outputs.
"""

from __future__ import annotations

import contextlib
from time import perf_counter
from typing import Any

from stoker.errors import DeviceError, StokerError
from stoker.executor.context import BatchContext, GpuContext, SampleFailure
from stoker.graph.node import DataNode, OpNode
from stoker.operators.machinery.base import as_outputs, batch_error, sample_error


def _common() -> Any:
    """kernels/gpu/common.py, imported with the first GPU stage: it imports torch (about
    200 MB and a second), which a CPU pipeline must not pay at build()."""
    from stoker.kernels.gpu import common

    return common

class PartialBatch:
    """A batch between its CPU part and its GPU part."""

    __slots__ = ("values", "infos", "n", "bctx", "skip")

    def __init__(self, values: dict, infos: dict, n: int, bctx: BatchContext):
        self.values = values
        self.infos = infos
        self.n = n
        self.bctx = bctx
        self.skip: Any = None  # on_error="skip": what the CPU part skipped (skipping.Batch)


class GpuOp:
    """The instance of an operator placed on the GPU: its schema's ``gpu_kernel`` applied
    to the whole batch."""

    def __init__(self, op: OpNode, pipeline: Any = None):
        if op.schema.gpu_kernel is None:
            raise DeviceError(f"{op.describe()}: device={op.device!r} has no GPU "
                              "implementation yet; use device='cpu'")
        self.op = op
        self.kernel = op.schema.gpu_kernel
        self.args = {**op.args, "_in_layouts": tuple(n.layout or "" for n in op.inputs),
                     "_per_sample": ()}
        self.n_out = len(op.outputs)
        self.vectorized = True

    def run(self, ins: list, argv: dict, ctx: GpuContext) -> tuple:
        # "_per_sample" names the arguments given as per-sample values (a kernel that
        # works sample by sample picks sample j's from them).
        args = {**self.args, **argv, "_per_sample": tuple(argv)} if argv else self.args
        return as_outputs(self.kernel(ins, args, ctx), self.n_out)


class GpuRunner:
    """Runs the stages of a plan's GPU part for one batch at a time (one thread)."""

    def __init__(self, executor: Any, device_id: int | None):
        import torch

        from stoker.kernels import gpu

        self.executor = executor
        self.plan = executor.plan
        self.device = gpu.torch_device(device_id)
        self.cuda = self.device.type == "cuda"
        self.stream = torch.cuda.Stream(self.device) if self.cuda else None

    def _scope(self) -> Any:
        if not self.cuda:
            return contextlib.nullcontext()
        import torch

        scope = contextlib.ExitStack()
        scope.enter_context(torch.cuda.device(self.device))
        scope.enter_context(torch.cuda.stream(self.stream))
        return scope

    def run(self, part: PartialBatch) -> tuple[dict, Any]:
        """Runs the GPU part; returns the values and the event that marks their completion
        on the stream (None on CPU tensors)."""
        values, infos, bctx = part.values, part.infos, part.bctx
        ex = self.executor
        uploaded: dict[DataNode, Any] = {}
        with self._scope():
            for stage in self.plan.stages[self.plan.gpu_from:]:
                if stage.kind == "gpu":
                    for op in stage.ops:
                        self._run_op(op, values, infos, bctx, part.n, uploaded)
                elif stage.kind == "batch":
                    ex._run_batch_stage(stage, values, infos, bctx)
                else:
                    ex._run_sample_stage(stage, values, infos, bctx, part.n)
            event = None
            if self.cuda:
                import torch

                event = torch.cuda.Event()
                event.record(self.stream)
        return values, event

    def _run_op(self, op: OpNode, values: dict, infos: dict, bctx: BatchContext, n: int,
                uploaded: dict) -> None:
        ex = self.executor
        ins = []
        for node in op.inputs:
            value = values[node]
            if op.device == "gpu" and not _common().is_gpu_value(value):
                if node not in uploaded:
                    uploaded[node] = _common().upload_batch(value, self.device)
                value = uploaded[node]
            ins.append(value)
        argv = {key: values[node] for key, node in op.arg_nodes.items()}
        info = infos.get(self.plan.info_from.get(op.outputs[0]))
        ctx = GpuContext(bctx, ex.seeds(bctx.epoch)[op], n, info, self.device, ex.pool,
                         self.stream)
        start = perf_counter()
        try:
            outs = bctx.variant.instances[op].run(ins, argv, ctx)
        except SampleFailure as e:
            raise sample_error(op, ctx.sample(e.index), e.cause) from e.cause
        except StokerError:
            raise
        except Exception as e:
            raise batch_error(op, bctx.iteration, e) from e
        if ex.profiler is not None:
            ex.profiler.record(op.schema.name, "gpu", bctx.iteration, start, perf_counter())
        for node, out in zip(op.outputs, outs, strict=True):
            moved = node.device == "cpu" and _common().is_gpu_value(out)
            values[node] = _common().download_batch(out) if moved else out
