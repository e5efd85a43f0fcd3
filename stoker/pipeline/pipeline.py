"""``Pipeline``: DALI's pipeline object: define, build, run ahead, reset, close.

A pipeline owns the operators traced while it is current (``with pipe:``). ``build()``
compiles them into a plan and starts the executor; ``run()`` returns one ``TensorList``
per output, made ``prefetch_queue_depth`` batches ahead on a producer thread unless
``exec_pipelined``/``exec_async`` is off. ``close()`` (also on garbage collection and at
interpreter exit) stops every thread the pipeline started.
"""

from __future__ import annotations

import atexit
import os
import weakref
from typing import Any

from stoker.errors import ArgumentError, GraphError, PipelineError
from stoker.executor.context import BatchContext
from stoker.executor.executor import Deferred, Executor
from stoker.executor.gpu import GpuOp
from stoker.executor.heap import release_free_memory, settle_allocator
from stoker.executor.prefetch import Prefetcher
from stoker.graph.compile import compile_plan
from stoker.graph.layouts import is_refused
from stoker.graph.node import DataNode, OpNode, current_pipeline, pipeline_stack
from stoker.operators.machinery.base import SampleOp
from stoker.pipeline.checkpoint import Tracker, check_graph, decode, encode, warn_unsaved_sources

# Built pipelines, closed at interpreter exit before the worker pools (atexit runs the
# latest registration first): no batch may still be computing while the interpreter and
# the native libraries tear down.
_live: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_live_pipelines() -> None:
    for pipe in list(_live):
        runtime = pipe._runtime
        if runtime is not None:
            # Bounded: a source blocked forever (a stuck callback) must not hang exit; its
            # daemon thread is then left to the interpreter.
            runtime.prefetcher.close(timeout=5.0)


class _Runtime:
    """Everything with threads, kept apart so a finalizer can close it without the pipeline."""

    def __init__(self, executor: Executor, prefetcher: Prefetcher):
        self.executor = executor
        self.prefetcher = prefetcher

    def close(self) -> None:
        self.prefetcher.close()
        self.executor.close()


class Pipeline:
    def __init__(self, batch_size: int | None = None, num_threads: int | None = None,
                 device_id: int | None = None, seed: int | None = None,
                 exec_pipelined: bool = True, prefetch_queue_depth: int | dict = 2,
                 exec_async: bool = True, bytes_per_sample: int = 0, set_affinity: bool = False,
                 max_streams: int | None = None, default_cuda_stream_priority: int | None = None,
                 *, enable_memory_stats: bool = False, enable_checkpointing: bool = False,
                 checkpoint: Any = None, py_num_workers: int = 1, py_start_method: str = "fork",
                 py_callback_pickler: Any = None, output_dtype: Any = None,
                 output_ndim: Any = None, output_layout: Any = None, exec_dynamic: Any = None,
                 experimental_exec_dynamic: Any = None, stream_policy: Any = None,
                 concurrency: Any = None, on_error: str = "raise"):
        # Same parameters and defaults as DALI 2.4. device_id=None means CPU only; a GPU id
        # on a machine without a GPU only matters to operators placed on the GPU.
        if num_threads is None or num_threads < 1:
            num_threads = os.cpu_count() or 1
        if isinstance(prefetch_queue_depth, dict):
            # DALI keeps separate CPU and GPU queues and fills the deeper one at the first
            # run (so many iter_setup() calls); stoker keeps one queue of that depth.
            depth = max(int(prefetch_queue_depth.get("cpu_size", 2)),
                        int(prefetch_queue_depth.get("gpu_size", 2)))
        else:
            depth = int(prefetch_queue_depth)
        if depth < 1:
            raise ArgumentError(f"Pipeline: argument 'prefetch_queue_depth' must be at least 1, "
                                f"got {prefetch_queue_depth!r}")
        if seed is None or seed < 0:
            seed = int.from_bytes(os.urandom(7), "little")
        # stoker's own: what a sample that fails (read, decode, any operator) does. "raise"
        # stops the run with an error naming the file, the operator and the cause; "skip"
        # drops it, fills the batch from the sources' next samples and logs it in
        # skipped_samples() (stoker/executor/skipping.py).
        if on_error not in ("raise", "skip"):
            raise ArgumentError(f"Pipeline: argument 'on_error' must be 'raise' or 'skip', "
                                f"got {on_error!r}")
        self._on_error = on_error
        self._skipped: list[tuple[str, str]] = []
        self._skip_state = {"in_a_row": 0}
        self._batch_size = int(batch_size) if batch_size is not None else -1
        self._num_threads = int(num_threads)
        self._device_id = device_id
        self._seed = int(seed)
        self._depth = depth
        self._async = bool(exec_pipelined and exec_async)
        self._exec_pipelined = bool(exec_pipelined)
        self._py_num_workers = py_num_workers
        self._py_start_method = py_start_method
        self._enable_checkpointing = bool(enable_checkpointing)
        self._checkpoint = checkpoint  # restored at build(), as in DALI
        self._tracker: Tracker | None = None
        self._declared = {"dtype": output_dtype, "ndim": output_ndim, "layout": output_layout}
        self._ops: list[OpNode] = []
        self._outputs: list[DataNode] | None = None
        self._output_error: Exception | None = None  # set_outputs' verdict, raised at build
        self._runtime: _Runtime | None = None
        self._instances: dict[OpNode, Any] = {}
        self._iteration = 0
        self._first_index = 0  # index in the epoch of the next batch's first sample
        self._epoch = 0  # reset() calls so far
        self._first_run = True
        # iter_setup() raised StopIteration: no more batches are scheduled until reset();
        # the ones in flight are still returned, then StopIteration (as in DALI).
        self._last_iter = False
        self._closed = False
        self._scopes: list[bool] = []  # per `with` level: does leaving it close the pipeline?

    # -- properties ------------------------------------------------------------------------
    batch_size = property(lambda self: self._batch_size)
    max_batch_size = batch_size
    num_threads = property(lambda self: self._num_threads)
    device_id = property(lambda self: self._device_id)
    seed = property(lambda self: self._seed)
    prefetch_queue_depth = property(lambda self: self._depth)
    exec_pipelined = property(lambda self: self._exec_pipelined)
    exec_async = property(lambda self: self._async)
    py_num_workers = property(lambda self: self._py_num_workers)

    # -- definition ------------------------------------------------------------------------
    def __enter__(self) -> Pipeline:
        """``with pipe:`` is DALI's graph-definition scope. On a pipeline that already has
        its outputs (one made by @pipeline_def), it is a run scope that closes on exit."""
        self._scopes.append(self._outputs is not None)
        pipeline_stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = pipeline_stack()
        if stack and stack[-1] is self:
            stack.pop()
        if self._scopes and self._scopes.pop():
            self.close()

    @staticmethod
    def current() -> Pipeline | None:
        return current_pipeline()

    def _adopt(self, op: OpNode) -> None:
        op.pipeline = self
        self._ops.append(op)

    def set_outputs(self, *outputs: Any) -> None:
        """The pipeline's outputs: DataNodes, or values that become constant outputs
        (numbers, flat lists of numbers, numpy arrays, ``types.Constant``), as in DALI. An
        output that can be neither is a TypeError at ``build()``, where DALI raises it."""
        if self._runtime is not None:
            raise PipelineError("set_outputs: the pipeline is already built")
        if not outputs:
            raise GraphError("set_outputs: a pipeline needs at least one output")
        from stoker.graph.compile import collect
        from stoker.pipeline.outputs import output_nodes, take_in

        nodes, self._output_error = output_nodes(self, outputs)
        for op in collect(nodes, []):
            if op.pipeline is not None and op.pipeline is not self:
                raise GraphError(f"{op.describe()} belongs to another pipeline; a DataNode can "
                                 "only be used in the pipeline that created it")
        # Operators made outside any pipeline are copied in: each pipeline has its own.
        self._outputs = take_in(self, nodes)

    def define_graph(self) -> Any:
        """Subclasses may override this (DALI's legacy style) instead of set_outputs."""
        raise GraphError("the pipeline has no outputs: call set_outputs() inside `with pipe:` "
                         "or use @pipeline_def")

    def iter_setup(self) -> None:
        """DALI's legacy hook, for subclasses: called before each iteration the pipeline
        schedules (``prefetch_queue_depth`` of them at the first ``run()``, then one per
        ``run()``), on the caller's thread, to ``feed_input()`` that iteration's data.
        Raising StopIteration ends the epoch: the batches in flight are still returned,
        then ``run()`` raises StopIteration until ``reset()``."""

    # -- build -----------------------------------------------------------------------------
    def build(self) -> None:
        if self._closed:
            raise PipelineError("the pipeline is closed")
        if self._runtime is not None:
            return
        if self._outputs is None:
            with self:
                outs = self.define_graph()
            outs = outs if isinstance(outs, list | tuple) else (outs,)
            self.set_outputs(*outs)
        if self._output_error is not None:
            raise self._output_error
        if self._batch_size < 1:
            raise ArgumentError(f"Pipeline: argument 'batch_size' must be a positive integer, "
                                f"got {self._batch_size}")
        restoring = self._read_checkpoint()
        settle_allocator()  # flat memory over epochs (executor/heap.py)
        plan = compile_plan(self._outputs, self._ops, self._seed, self)
        if self._on_error == "skip" and any(op.scope for op in plan.ops):
            # Skipping drops failed rows from whole-batch values, which a branch's
            # sub-batches would no longer line up with.
            raise PipelineError("Pipeline: on_error='skip' cannot be combined with "
                                "conditionals (enable_conditionals=True with an `if` on a "
                                "DataNode); use on_error='raise'")
        for op in plan.ops:
            if op.device in ("gpu", "mixed") and self._device_id is None:
                raise GraphError(f"{op.describe()}: device={op.device!r} needs a GPU, but the "
                                 "pipeline was created with device_id=None (CPU only)")
        instances = {}
        for op in plan.ops:
            try:
                instances[op] = _instance(op, self)
            except Exception:
                # An operator whose layout rule refused the empty stand-in of a layout its
                # source gives at run time is made again when the layout is known
                # (executor/variants.py): the fed one may suit it (DALI checks at run).
                if not is_refused(op):
                    raise
        self._instances = instances
        me = weakref.ref(self)  # (threads must not keep the pipeline alive)
        executor = Executor(plan, instances, self._num_threads, name=f"stoker-{id(self):x}",
                            device_id=self._device_id,
                            make_instance=lambda op: _instance(op, me()))
        executor.defer = self._async and not plan.has_gpu and self._on_error == "raise"
        # Threads must not keep the pipeline alive, or garbage collection could not close it.
        ref = weakref.ref(self)

        # With GPU operators a batch is made in two steps: its GPU part runs on the
        # prefetcher's second thread while the producer makes the next batch's CPU part.
        two_steps = plan.has_gpu

        def produce() -> Any:
            pipe = ref()
            if pipe is None:
                raise PipelineError("the pipeline was garbage-collected")
            return pipe._tracked(pipe._produce_cpu_part if two_steps else pipe._produce)

        finish = None
        if two_steps:
            def finish(part: Any) -> tuple:
                pipe = ref()
                if pipe is None:
                    raise PipelineError("the pipeline was garbage-collected")
                return pipe._finish_gpu_part(part)

        prefetcher = Prefetcher(produce, self._async, name=f"stoker-prefetch-{id(self):x}",
                                finish=finish)
        self._runtime = _Runtime(executor, prefetcher)
        self._plan = plan
        _live.add(self)
        if self._enable_checkpointing:
            warn_unsaved_sources(self)
            try:
                self._tracker = Tracker(self, restoring)
            except PipelineError:
                self.close()  # half restored: it must not run from the start instead
                raise

    def _produce(self) -> tuple:
        return self._next_batch(self._outputs_of)

    def _produce_cpu_part(self) -> Any:
        """With GPU operators: the CPU part of the next batch (``_finish_gpu_part`` ends it)."""
        return self._next_batch(self._runtime.executor.run_cpu_part)

    def _next_batch(self, make: Any) -> Any:
        """``make(bctx)`` for the next batch; the counters move on even when it fails."""
        bctx = BatchContext(self._iteration, self._first_index, self._batch_size, self,
                            self._epoch)
        if self._on_error == "skip":
            bctx.failures = {}
        try:
            return make(bctx)
        finally:
            self._iteration += 1
            self._first_index += bctx.size

    def _outputs_of(self, bctx: BatchContext) -> Any:
        outputs = self._runtime.executor.run_batch(bctx)
        if isinstance(outputs, Deferred):  # finishing on a worker (executor.py)
            made, declared = outputs, self._declared
            # Holds no pipeline: threads must not keep it alive.
            return Deferred(lambda: _checked(declared, made.result()))
        return _checked(self._declared, outputs)

    def _finish_gpu_part(self, part: Any) -> tuple:
        return _checked(self._declared, self._runtime.executor.run_gpu_part(part))

    def _rt(self) -> _Runtime:
        if self._closed:
            raise PipelineError("the pipeline is closed")
        if self._runtime is None:
            self.build()
        return self._runtime

    # -- running ---------------------------------------------------------------------------
    def schedule_run(self) -> None:
        self._rt()
        self._resume()
        first = self._first_run and self._async
        self._first_run = False
        self._schedule(self._depth if first else 1)

    def _schedule(self, n: int) -> None:
        """Schedules ``n`` batches, calling ``iter_setup()`` before each on this (the
        user's) thread, as DALI does; its StopIteration ends the epoch."""
        prefetcher = self._runtime.prefetcher
        for _ in range(n):
            if self._last_iter:
                return
            try:
                self.iter_setup()
            except StopIteration:
                self._last_iter = True
                return
            prefetcher.schedule(1)

    def outputs(self) -> tuple:
        batch = self._take()
        skipped = getattr(batch, "skipped", None)
        if skipped:
            self._skipped.extend(skipped)
        return batch

    share_outputs = outputs

    def skipped_samples(self) -> list[tuple[str, str]]:
        """With ``on_error="skip"``: ``(source_info, reason)`` for every sample left out of
        the batches returned so far (source_info is the file path for file readers)."""
        return list(self._skipped)

    def release_outputs(self) -> None:
        """Outputs are owned by the caller in stoker; there is nothing to give back."""

    def run(self, **feed: Any) -> tuple:
        """The next batch: one ``TensorList`` per output. Raises StopIteration at the end of
        a finite source; call ``reset()`` to start over."""
        rt = self._rt()
        if feed and self._async and self._depth > 1:
            raise PipelineError("run(name=data) feeds inputs only when prefetch_queue_depth=1 "
                                "or exec_pipelined=False; otherwise call feed_input() ahead")
        for name, data in feed.items():
            self.feed_input(name, data)
        self._resume()
        # Keep prefetch_queue_depth batches in flight (one in synchronous mode).
        depth = self._depth if self._async else 1
        pending = rt.prefetcher.pending
        self._first_run = False
        self._schedule(max(depth - pending, 1 if pending == 0 else 0))
        return self.outputs()

    def reset(self) -> None:
        """Starts the sources over (after StopIteration, or to begin a new pass)."""
        rt = self._rt()
        self._resume()

        def restart_sources() -> None:
            self._restart_sources()
            if self._tracker is not None:
                self._tracker.reset_applied(self._iteration)

        rt.prefetcher.restart(restart_sources)
        self._first_run = True
        self._last_iter = False
        release_free_memory()  # an epoch's freed buffers go back to the OS (executor/heap.py)

    def _restart_sources(self) -> None:
        for inst in self._instances.values():
            if hasattr(inst, "reset"):
                inst.reset()
        # Random draws are keyed by (epoch, index in epoch), so what an epoch draws does
        # not depend on how long the previous one was or how it ended.
        self._epoch += 1
        self._first_index = 0

    def feed_input(self, data_node: DataNode | str, data: Any, layout: str | None = None,
                   cuda_stream: Any = None, use_copy_kernel: bool = False) -> None:
        self._rt()
        name = data_node.op.name if isinstance(data_node, DataNode) else data_node
        for op, inst in self._instances.items():
            if op.name == name and hasattr(inst, "feed"):
                inst.feed(data, layout)
                return
        raise ArgumentError(f"feed_input: no external_source named {name!r} in this pipeline")

    # -- checkpoints (stoker/pipeline/checkpoint.py) ----------------------------------------
    def checkpoint(self, filename: str | None = None) -> str:
        """The pipeline's position after the batches returned so far (not the ones made
        ahead), as a string for ``Pipeline(..., checkpoint=...)``; also written to
        ``filename`` when given."""
        text = self._checkpoint_text()
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    def _checkpoint_text(self, back: int = 0, iterator: Any = None) -> str:
        """``back=1``: as of the last batch taken (one an iterator holds, unreturned);
        ``iterator``: the iterator's own position, saved alongside."""
        rt = self._rt()
        if not self._enable_checkpointing:
            raise PipelineError("checkpoint: checkpointing is not enabled; create the "
                                "pipeline with enable_checkpointing=True")
        pending = rt.prefetcher.pending + self._tracker.replay
        state, replay, resets = self._tracker.snapshot(self, pending, back)
        return encode(state, self, replay=replay, resets=resets, iterator=iterator)

    @property
    def is_restored_from_checkpoint(self) -> bool:
        """True once build() has restored the pipeline from ``checkpoint``."""
        return self._tracker is not None and self._tracker.restored

    def _read_checkpoint(self) -> dict | None:
        """At build(): the checkpoint to restore, checked against this pipeline's graph;
        its seed replaces the pipeline's, so every operator draws as it did."""
        if self._checkpoint is None:
            return None
        if not self._enable_checkpointing:
            raise PipelineError("Pipeline(checkpoint=...): checkpointing is not enabled; "
                                "create the pipeline with enable_checkpointing=True to restore "
                                "a checkpoint")
        doc = decode(self._checkpoint)
        check_graph(doc, self)
        self._seed = doc["seed"]
        return doc

    def _tracked(self, make: Any) -> Any:
        """Makes a batch (producer thread), telling the tracker where it starts and ends."""
        tracker = self._tracker
        if tracker is None:
            return make()
        index = self._iteration
        tracker.batch_starts(self, self._restart_sources)
        ended = False
        try:
            return make()
        except StopIteration:
            ended = True
            raise
        finally:
            tracker.batch_made(index, ended)

    def _take(self) -> Any:
        rt = self._rt()
        self._resume()
        if self._last_iter and rt.prefetcher.pending == 0:
            raise StopIteration  # iter_setup() ended the epoch and every batch was taken
        try:
            return rt.prefetcher.get()
        finally:
            if self._tracker is not None:
                self._tracker.batch_taken()

    def _resume(self) -> None:
        """A restored pipeline schedules the batches its checkpoint had in flight before
        anything else, so later resets land on the same batches as in the original run."""
        tracker = self._tracker
        if tracker is not None and tracker.replay:
            n, tracker.replay = tracker.replay, 0
            self._runtime.prefetcher.schedule(n)

    # -- readers ---------------------------------------------------------------------------
    def _readers(self) -> dict[str, Any]:
        self._rt()
        return {op.name: inst for op, inst in self._instances.items()
                if hasattr(inst, "reader_meta")}

    def reader_meta(self, name: str | None = None) -> dict:
        readers = self._readers()
        if name is None:
            return {n: r.reader_meta() for n, r in readers.items()}
        if name not in readers:
            raise ArgumentError(f"reader_meta: no reader named {name!r}; readers here: "
                                f"{sorted(readers) or 'none'}")
        return readers[name].reader_meta()

    def epoch_size(self, name: str | None = None) -> Any:
        if name is not None:
            return self.reader_meta(name)["epoch_size_padded"]
        return {n: m["epoch_size_padded"] for n, m in self.reader_meta().items()}

    # -- shutdown --------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the pipeline's threads and hands free memory back to the system (recycled
        output blocks, glibc's free pages); the pipeline cannot run afterwards."""
        if self._runtime is not None:
            self._runtime.close()
        self._closed = True
        release_free_memory()

    def __del__(self) -> None:
        runtime = getattr(self, "_runtime", None)
        if runtime is not None:
            runtime.close()

    @property
    def closed(self) -> bool:
        return self._closed


def _instance(op: OpNode, pipe: Pipeline | None) -> Any:
    """An operator's instance: its schema's, the GPU runner's, or the default one."""
    make = GpuOp if op.device in ("gpu", "mixed") else op.schema.instance or SampleOp
    return make(op, pipe)


def _checked(declarations: dict, outputs: Any) -> tuple:
    """The outputs as a tuple (a skipping.Batch is one already), checked against
    output_dtype / output_ndim / output_layout as DALI checks them."""
    if not isinstance(outputs, tuple):
        outputs = tuple(outputs)
    for key, declared in declarations.items():
        if declared is None:
            continue
        wanted = declared if isinstance(declared, list | tuple) else [declared] * len(outputs)
        for i, (tl, want) in enumerate(zip(outputs, wanted, strict=False)):
            if want is None or len(tl) == 0:
                continue
            got: Any = {"dtype": tl.dtype, "ndim": len(tl.shape()[0]),
                        "layout": tl.layout()}[key]
            if key == "dtype":
                from stoker.types import to_dali

                want = to_dali(want)
            elif key == "layout":
                want = str(want)
            if got != want:
                raise PipelineError(f"pipeline output {i} has {key} {got}, but "
                                    f"output_{key}={want} was declared")
    return outputs
