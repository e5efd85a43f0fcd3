"""Runs a compiled plan one batch at a time.

Sources make the batch on the calling thread. Each per-sample stage is cut into chunks of
samples; one pool task runs a chunk through every operator of the stage (no barrier
across the batch between operators). An operator with a batch kernel processes a dense
chunk in one call, which is what makes small uniform samples fast; otherwise it loops
over the chunk's samples. An operator able to share its batch (``shared``: the fused
decode-resize lane) is not cut: every thread makes one call that takes the batch's
samples one at a time, so a thread holds the GIL once a batch, where chunks held it once
a chunk (``_run_shared``); the stage's other operators then run in chunks. Errors name
the operator, the user's line and the sample.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from stoker.errors import SampleError, StokerError
from stoker.executor.context import BatchContext, ChunkContext, Value, merge
from stoker.executor.pool import WorkerPool
from stoker.executor.variants import Variants
from stoker.graph.compile import Plan, Stage
from stoker.graph.node import DataNode, OpNode
from stoker.kernels.cpu.random.rng import derive_seed
from stoker.operators.machinery.base import batch_error
from stoker.operators.machinery.layouts import run_layout
from stoker.operators.tensor.conditional import condition_mask
from stoker.tensors import TensorList, TensorListGPU


def batch_len(value: Value) -> int:
    return len(value)


_PENDING: Any = object()  # run_stages' key for a last stage still running on a worker
_UNSHARED: Any = object()  # _run_shared's answer where the operator declines


def _shareable(ops: list[OpNode], instances: dict) -> OpNode | None:
    """The one operator of ``ops`` whose instance can share a batch among the threads
    (``shared``), where it needs nothing the others make: it runs first, over the batch."""
    able = [op for op in ops if hasattr(instances[op], "shared")]
    if len(able) != 1:
        return None
    made = {node for op in ops if op is not able[0] for node in op.outputs}
    needs = {*able[0].inputs, *able[0].arg_nodes.values()}
    return None if needs & made else able[0]


class Deferred:
    """A batch an idle worker is still making; ``result()`` waits for its outputs (or
    raises what making it raised). The prefetcher delivers it in order like any batch."""

    __slots__ = ("_make",)

    def __init__(self, make: Any):
        self._make = make

    def result(self) -> Any:
        return self._make()


def scope_size(scope: tuple, values: dict) -> int:
    """How many samples a conditional branch has: those of the enclosing scope whose
    condition (graph/conditionals.py) chose it."""
    branching, taken = scope[-1]
    mask = condition_mask(values[branching.predicate], branching, "if")
    return int(mask.sum()) if taken else int(len(mask) - mask.sum())


class Executor:
    def __init__(self, plan: Plan, instances: dict[OpNode, Any], num_threads: int, name: str,
                 device_id: int | None = None, make_instance: Any = None):
        self.plan = plan
        self.instances = instances
        # Operators reading a layout that a source gives at run time get their instances
        # per batch layouts (variants.py; make_instance makes them).
        self.variants = Variants(plan.ops, instances, make_instance)
        self.gpu: Any = None  # runs the plan's GPU part (stoker/executor/gpu.py)
        if plan.has_gpu:  # first: a failure here must not leave the pool's threads behind
            from stoker.executor.gpu import GpuRunner

            self.gpu = GpuRunner(self, device_id)
        self.pool = WorkerPool(num_threads, name)
        for inst in instances.values():  # sources that spread their work (video readers)
            if hasattr(inst, "attach_pool"):
                inst.attach_pool(self.pool)
        self.num_threads = self.pool.num_threads
        self.profiler: Any = None  # a stoker.executor.profile.Profiler when profiling
        # Whether a batch's last stage (a cheap batch's whole, a costly one's last chunks)
        # may finish on a worker while the producer starts the next batch (the pipeline
        # sets it: asynchronous, CPU-only, "raise").
        self.defer = False
        self.deferred = 0  # batches finished that way (for tests and profiles)
        self._cost: dict[int, float] = {}  # stage -> seconds per sample (running average)
        self._epoch_seeds: tuple[int, dict[OpNode, int]] = (0, plan.seeds)

    def seeds(self, epoch: int) -> dict[OpNode, int]:
        """Each operator's seed for an epoch: a new stream per epoch, the same every run."""
        # One read of the cache: the GPU part's thread asks too, and must never get the
        # other thread's epoch between the check and the read.
        cached = self._epoch_seeds
        if cached[0] != epoch:
            cached = (epoch, {op: derive_seed(seed, epoch)
                              for op, seed in self.plan.seeds.items()})
            self._epoch_seeds = cached
        return cached[1]

    def close(self) -> None:
        self.pool.close()
        # Operator instances may own threads too (external_source with parallel=True).
        for inst in self.variants.all_instances():
            close = getattr(inst, "close", None)
            if close is not None:
                close()

    def run_batch(self, bctx: BatchContext) -> list[TensorList]:
        if self.profiler is None:
            return self._run_batch(bctx)
        start = perf_counter()
        try:
            return self._run_batch(bctx)
        finally:
            self.profiler.record("batch", "batch", bctx.iteration, start, perf_counter())

    def _run_batch(self, bctx: BatchContext) -> list[TensorList]:
        if self.gpu is not None:  # synchronous mode: both parts on this thread
            return self.run_gpu_part(self.run_cpu_part(bctx))
        if bctx.failures is not None:  # on_error="skip"
            from stoker.executor.skipping import run_skipping

            return run_skipping(self, bctx)
        values, infos = self.run_stages(bctx, defer=self.defer)
        finish = values.pop(_PENDING, None)
        variant = bctx.variant
        if finish is None:
            return self.tensor_lists(values, infos, variant=variant)

        def outputs() -> list[TensorList]:
            finish()
            return self.tensor_lists(values, infos, variant=variant)

        return Deferred(outputs)

    def tensor_lists(self, values: dict, infos: dict, event: Any = None,
                     variant: Any = None) -> list[TensorList]:
        """The outputs; ``variant`` (the batch's) holds the layouts its sources gave."""
        variant = variant or self.variants.base
        outputs = []
        for node in self.plan.outputs:
            src = self.plan.info_from.get(node)
            info = infos.get(src) if src is not None else None
            # Mostly the node's layout; some depend on the samples' rank (operators/layouts).
            layout = run_layout(variant.layout(node), values[node])
            if node.device == "gpu":
                outputs.append(TensorListGPU(values[node], layout=layout, source_info=info,
                                             event=event))
            else:
                outputs.append(TensorList.wrap(values[node], layout, info))
        return outputs

    # -- the GPU part (stoker/executor/gpu.py) -----------------------------------------------
    def run_cpu_part(self, bctx: BatchContext) -> Any:
        """The CPU stages of a batch, whose GPU part ``run_gpu_part`` runs later (maybe on
        another thread, while this one starts the next batch)."""
        from stoker.executor.gpu import PartialBatch

        if bctx.failures is not None:  # on_error="skip": failures of the CPU part
            from stoker.executor.skipping import run_skipping

            return run_skipping(self, bctx)
        start = perf_counter()
        values, infos = self.run_stages(bctx)
        if self.profiler is not None:
            self.profiler.record("(cpu part)", "batch", bctx.iteration, start, perf_counter())
        # Without the pipeline: a batch waiting for its GPU part must not keep it alive.
        return PartialBatch(values, infos, bctx.size, bctx.detached())

    def run_gpu_part(self, part: Any) -> list[TensorList]:
        start = perf_counter()
        values, event = self.gpu.run(part)
        if self.profiler is not None:
            self.profiler.record("(gpu part)", "batch", part.bctx.iteration, start,
                                 perf_counter())
        outputs = self.tensor_lists(values, part.infos, event, part.bctx.variant)
        if part.skip is not None:
            from stoker.executor.skipping import with_record

            return with_record(outputs, part.skip)
        return outputs

    def run_stages(self, bctx: BatchContext, before_batch_stage: Any = None,
                   defer: bool = False) -> tuple[dict, dict]:
        """Runs every stage of the plan for one batch: the values of every node, and the
        source_info lists. ``before_batch_stage(values, infos)`` runs before each stage
        that needs the whole batch (on_error="skip" drops failed rows there). With
        ``defer``, a last stage of one chunk may go to an idle worker: ``values[_PENDING]``
        then holds the function that waits for it."""
        values: dict[DataNode, Value] = {}
        infos: dict[DataNode, list[str] | None] = {}
        n = None
        instances = self.instances  # the sources' (the same in every variant)
        bctx.variant = self.variants.base
        # The GPU part, if any, is run_gpu_part's.
        for stage in self.plan.stages[:self.plan.gpu_from]:
            if stage.kind == "source":
                # A source that fails must not leave the others a batch behind: every source
                # still takes its part of this batch (fed inputs, reader position), so the
                # next batch pairs data of one iteration. The first error is raised after.
                failure: Exception | None = None
                ops = stage.ops
                if bctx.failures is not None:  # on_error="skip": readers may give fewer
                    ops = sorted(ops, key=lambda op: not hasattr(instances[op],
                                                                 "reader_meta"))
                for op in ops:
                    if bctx.failures is not None and n is not None:
                        bctx.batch_size = n  # the other sources give as many
                    start = perf_counter()
                    try:
                        outs, info = instances[op].next_batch(bctx)
                    except StopIteration:
                        raise
                    except Exception as e:
                        if failure is None:
                            failure = e
                        continue
                    if self.profiler is not None:
                        self.profiler.record(op.schema.name, "source", bctx.iteration, start,
                                             perf_counter())
                    for node, out in zip(op.outputs, outs, strict=True):
                        values[node] = out
                    infos[op.outputs[0]] = info
                    size = batch_len(outs[0])
                    if n is None:
                        n = size
                    elif size != n and failure is None:
                        failure = SampleError(
                            f"{op.describe()}: produced a batch of {size} samples, but other "
                            f"sources of this pipeline produced {n}; all sources must agree",
                            op=op.schema.fn_name, where=op.where)
                if failure is not None:
                    raise failure
                bctx.size = bctx.batch_size if n is None else n
                bctx.variant = self.variants.select(instances)
                continue
            if n is None:
                n = bctx.batch_size
            bctx.size = n
            if stage.kind == "batch":
                if before_batch_stage is not None:
                    n = before_batch_stage(values, infos)
                if stage.scope:  # inside a conditional branch: the branch's samples
                    bctx.size = scope_size(stage.scope, values)
                self._run_batch_stage(stage, values, infos, bctx)
                bctx.size = n
            else:
                last = defer and stage is self.plan.stages[-1]
                size = scope_size(stage.scope, values) if stage.scope else n
                pending = self._run_sample_stage(stage, values, infos, bctx, size, last)
                if pending is not None:
                    values[_PENDING] = pending
        if n is None:
            bctx.size = bctx.batch_size
        return values, infos

    # -- stages ----------------------------------------------------------------------------
    def _run_batch_stage(self, stage: Stage, values: dict, infos: dict,
                         bctx: BatchContext) -> None:
        seeds = self.seeds(bctx.epoch)
        for op in stage.ops:
            inst = bctx.variant.instances[op]
            ins = [values[x] for x in op.inputs]
            argv = {k: values[x] for k, x in op.arg_nodes.items()}
            start = perf_counter()
            try:
                # A random batch stage (batch_permutation) draws from its operator's seed
                # for the epoch, as sample stages do through their chunk contexts.
                outs = (inst.run_batch(ins, argv, bctx, seeds[op]) if op.schema.random
                        else inst.run_batch(ins, argv, bctx))
            except StokerError:
                raise
            except Exception as e:
                raise batch_error(op, bctx.iteration, e) from e
            if self.profiler is not None:
                self.profiler.record(op.schema.name, "stage", bctx.iteration, start,
                                     perf_counter())
            for node, out in zip(op.outputs, outs, strict=True):
                values[node] = out

    # A chunk handed to another thread should carry at least this much work: below it,
    # the hand-off and the GIL cost more than the second core gives (measured: CIFAR
    # batches of 64 ran at 136K images/s in one chunk, 60K split over two threads).
    MIN_CHUNK_SECONDS = 0.5e-3

    # A batch whose last stage costs less than this runs whole on one thread when it can
    # finish on a worker while the producer starts the next one (two batches in flight
    # instead of two half-batches: no hand-off inside the batch).
    WHOLE_BATCH_SECONDS = 4e-3

    # A costlier last stage: the producer leaves this many of its chunks (the guided
    # schedule's smallest) to the workers and starts the next batch, whose source stage
    # they overlap. Waiting for them, the workers sat idle 2.4 ms of each 40 ms train batch
    # at two threads (the producer's last chunk, then the next batch's reading and draws).
    LEFT_TO_WORKERS = 2

    def _chunks(self, stage: Stage, n: int, deferrable: bool = False,
                instances: dict | None = None) -> list[tuple[int, int]]:
        instances = instances or self.instances
        dense = all(instances[op].vectorized for op in stage.ops)
        most = self.num_threads if dense else 4 * self.num_threads
        per_sample = self._cost.get(id(stage))
        if deferrable and per_sample is not None and per_sample * n < self.WHOLE_BATCH_SECONDS:
            return [(0, n)]
        if per_sample is None:  # first batch: no measurement yet
            count = max(1, min(most, n // 16)) if dense else min(n, most)
        else:
            per_chunk = max(1, int(self.MIN_CHUNK_SECONDS / max(per_sample, 1e-9)))
            if not dense and self.num_threads > 1 and n > per_chunk * most:
                return self._guided(n, per_chunk)
            count = max(1, min(most, n, -(-n // per_chunk)))
        bounds = [n * i // count for i in range(count + 1)]  # (linspace: 20 us a batch)
        return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]

    def _guided(self, n: int, smallest: int) -> list[tuple[int, int]]:
        """Chunks that shrink towards the batch's end (each a share of what is left): the
        threads finish together. With equal chunks of costly samples (image decoding, ~1
        ms each), the last chunk ran alone on one thread while the others waited, and two
        threads stayed ~10% idle."""
        chunks, lo = [], 0
        while lo < n:
            size = max(smallest, -(-(n - lo) // (2 * self.num_threads)))
            chunks.append((lo, min(n, lo + size)))
            lo += size
        return chunks

    def _measure(self, stage: Stage, seconds: float, n: int) -> None:
        """Running average of the stage's cost per sample, which sizes its chunks."""
        sample = seconds / max(n, 1)
        old = self._cost.get(id(stage))
        self._cost[id(stage)] = sample if old is None else 0.8 * old + 0.2 * sample

    def _run_sample_stage(self, stage: Stage, values: dict, infos: dict, bctx: BatchContext,
                          n: int, defer: bool = False) -> Any:
        if n == 0:
            for node in stage.live_out:
                values[node] = []
            return None
        instances = bctx.variant.instances
        plan = self.plan
        seeds = self.seeds(bctx.epoch)
        infos_by_node = {
            op: infos.get(plan.info_from.get(op.outputs[0])) for op in stage.ops
        }

        # What each chunk needs of an operator, looked up once a batch (every chunk's
        # lookups hold the GIL).
        steps = {op: (instances[op].run_chunk, seeds[op], infos_by_node[op], op.inputs,
                      tuple(op.arg_nodes.items()), op.outputs) for op in stage.ops}

        def run_ops(ops: list[OpNode], lo: int, hi: int) -> dict[DataNode, Value]:
            local: dict[DataNode, Value] = {}
            for op in ops:
                run, seed, info, inputs, arg_nodes, outputs = steps[op]
                ins = [local[x] if x in local else values[x][lo:hi] for x in inputs]
                argv = {key: local[x] if x in local else values[x][lo:hi]
                        for key, x in arg_nodes}
                ctx = ChunkContext(bctx, seed, lo, hi,
                                   info[lo:hi] if info is not None else None, n, op)
                if profiler is None:
                    outs = run(ins, argv, ctx)
                else:
                    start = perf_counter()
                    outs = run(ins, argv, ctx)
                    profiler.record(op.schema.name, "sample", bctx.iteration, start,
                                    perf_counter())
                for node, out in zip(outputs, outs, strict=True):
                    local[node] = out
            return local

        def run_chunk(k: int) -> dict[DataNode, Value]:
            chunk_start = perf_counter()
            local = run_ops(ops, *chunks[k])
            spent[k] = perf_counter() - chunk_start
            return {node: local[node] for node in live_out}

        def finish(results: list[dict[DataNode, Value]]) -> None:
            self._measure(stage, sum(spent), n)
            start = perf_counter()
            for node in live_out:
                values[node] = merge([r[node] for r in results], bctx.blocks)
            bctx.blocks = None  # (the batch's values hold the blocks they are)
            if profiler is not None:
                profiler.record("(merge chunks)", "sample", bctx.iteration, start,
                                perf_counter())

        profiler = self.profiler
        ops, live_out = stage.ops, stage.live_out
        rest = [op for op in ops if op not in stage.early]
        # An operator that the stage's threads can work on together (after the draws):
        # each thread's one call takes samples one at a time (_run_shared); the stage's
        # other operators (a cast of its output, of the labels) then run in chunks.
        shared_op = _shareable(rest, instances)
        chunks = [] if shared_op is not None else self._chunks(
            stage, n, defer and self.num_threads > 1, instances)
        if stage.early and (shared_op is not None or len(chunks) > 1):
            # The batch's draws (compile._mark_draws) once, here; the chunks read them.
            drawn = run_ops(stage.early, 0, n)
            values.update(drawn)
            ops = rest
            live_out = [node for node in live_out if node not in drawn]
        if defer:
            # The worker and the queued batch must not hold the pipeline (garbage
            # collection closes it): a copy of the batch context without it.
            bctx = bctx.detached()
        if shared_op is not None:
            after = [op for op in rest if op is not shared_op]
            pending = self._run_shared(stage, shared_op, steps[shared_op], values, bctx, n,
                                       defer and not after, whole=not after)
            if pending is not _UNSHARED:
                if not after:
                    return pending
                ops = after  # (they read its outputs from the batch's values)
                made = set(shared_op.outputs)  # (a set: == on DataNodes builds a node)
                live_out = [node for node in live_out if node not in made]
            chunks = self._chunks(stage, n, defer and self.num_threads > 1, instances)
        spent = [0.0] * len(chunks)
        if defer:
            if len(chunks) == 1:
                # A batch too cheap to split: an idle worker makes it while this thread
                # goes on to the next batch, so small batches keep every core busy (two
                # in flight).
                job = self.pool.try_submit(run_chunk)
                if job is not None:
                    self.deferred += 1
                    return lambda: finish([self.pool.wait(job)])
            elif self.num_threads > 1:
                job = self.pool.start(run_chunk, len(chunks), self.LEFT_TO_WORKERS)
                self.deferred += 1
                return lambda: finish(self.pool.collect(job))
        finish(self.pool.map(run_chunk, len(chunks)))
        return None

    def _run_shared(self, stage: Stage, op: OpNode, step: tuple, values: dict,
                    bctx: BatchContext, n: int, defer: bool, whole: bool = True) -> Any:
        """One operator of the stage over the whole batch, every thread on the same samples
        (``instance.shared``: each thread's one call takes them one at a time), so the
        threads take the GIL once a batch each, where chunks took it once a chunk (per
        chunk, the Python between compiled calls costs 100-200 us of cold caches). As
        ``_run_sample_stage`` returns; ``_UNSHARED`` where the operator declines.
        Its outputs go into ``values`` (the stage's other operators read them there).
        ``whole``: the operator is all the stage runs here."""
        _, seed, info, inputs, arg_nodes, outputs = step
        inst = bctx.variant.instances[op]
        ctx = ChunkContext(bctx, seed, 0, n, info, n, op)
        shared = inst.shared([values[x] for x in inputs],
                             {key: values[x] for key, x in arg_nodes}, ctx)
        if shared is None:
            return _UNSHARED
        workers = min(self.num_threads, n) - 1
        spent = [0.0] * (workers + 1)
        profiler = self.profiler

        def work(i: int, leave: int = 0) -> None:
            start = perf_counter()
            shared.work(leave)
            end = perf_counter()
            spent[i] = end - start
            if profiler is not None:
                profiler.record(op.schema.name, "sample", bctx.iteration, start, end)

        job = self.pool.post(work, workers) if workers else None
        # Deferred, this thread leaves the last samples to the workers, about one each, and
        # goes on to the next batch's reading and draws while they finish them.
        work(workers, max(self.LEFT_TO_WORKERS, workers) if defer and workers else 0)

        def finish() -> None:
            if job is not None:
                self.pool.collect(job)
            if whole:  # (else the chunks of the stage's other operators measure theirs)
                self._measure(stage, sum(spent), n)
            values.update(zip(outputs, shared.outputs(self.pool.map), strict=True))
            bctx.blocks = None  # (the batch's values hold the blocks they are)

        if defer and job is not None:
            self.deferred += 1
            return finish
        finish()
        return None
