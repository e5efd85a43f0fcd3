"""``fn.external_source``: batches from Python, as DALI defines it.

The source may be a callable (per batch, or per sample with ``batch=False`` and a
``SampleInfo``), an iterable, a generator function, or nothing: then data arrives through
``pipe.feed_input(name, data)``. ``cycle`` decides what the end of an iterable means.

With ``parallel=True`` callbacks run on ``py_num_workers`` threads, not processes (DALI
uses processes). Measured with benchmarks/external_source_parallel.py on 2 cores: for
callbacks that read files or do numpy work, threads took 97 and 330 us per sample against
511 and 938 us for forked processes, which must pickle every array back; only pure-Python
callbacks would gain from processes, and they gained nothing measurable here.
"""

from __future__ import annotations

import collections
import inspect
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError, ArgumentTypeError, SampleError
from stoker.executor.context import FAILED
from stoker.graph.node import OpNode
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema
from stoker.operators.sources.external_args import (
    CYCLE,
    check_args,
    declared_layouts,
    positional_params,
)
from stoker.operators.sources.external_data import (
    Converted,
    OutputLayout,
    check_layout_arg,
    convert,
    first_values,
    holds,
    layout_fits,
    per_output,
)


class ExternalSource:
    """The source instance: holds the iterator/callback and the epoch counters."""

    def __init__(self, op: OpNode, pipeline: Any):
        self.op = op
        a = op.args
        self.source = a.get("source")
        self.num_outputs = a.get("num_outputs")
        self.batch = a.get("batch", True)
        self.cycle = CYCLE[a.get("cycle")]
        layout = a.get("layout")
        n_out = self.num_outputs or 1
        declared = list(layout) if isinstance(layout, list | tuple) else [layout] * n_out
        self.layouts = [OutputLayout(d) for d in declared]
        # The layout of each output for the batch just made (the executor reads it).
        self.batch_layouts = [d or "" for d in declared]
        self.given: str | None = None  # the layout feed_input gave the batch being made
        dtype = a.get("dtype")
        self.dtype = ([types.to_dali(d) for d in dtype] if isinstance(dtype, list | tuple)
                      else None if dtype is None else types.to_dali(dtype))
        self.ndim = a.get("ndim")
        self.batch_info = a.get("batch_info", False)
        self.copy = not a.get("no_copy", False)
        self.parallel = a.get("parallel", False)
        self.workers = max(1, getattr(pipeline, "py_num_workers", 1) or 1)
        self.fed: collections.deque = collections.deque()
        self.epoch = 0
        self.iteration = 0  # batches in this epoch
        # on_error="skip": samples taken by top-ups this epoch (later batches start past
        # them), and the next per-sample index.
        self.skipped_ahead = 0
        self.next_index = self.batch_first = 0
        self.iterator: Any = None
        self.exhausted = False
        self._pool: ThreadPoolExecutor | None = None
        self._ahead: collections.deque = collections.deque()  # futures of later iterations
        self.kind = self._kind()
        self.n_params = positional_params(self.source) if self.kind == "callable" else 0
        self.batch_size = getattr(pipeline, "batch_size", None)
        if self.kind in ("iterable", "generator"):
            self._rewind()

    def _kind(self) -> str:
        src = self.source
        if src is None:
            return "feed"
        if inspect.isgeneratorfunction(src):
            return "generator"
        if callable(src):
            return "callable"
        return "iterable"

    def _rewind(self) -> None:
        self.iterator = self.source() if self.kind == "generator" else iter(self.source)
        self.exhausted = False

    def _callable_args(self) -> int:
        return positional_params(self.source)

    # -- producing -------------------------------------------------------------------------
    def feed(self, data: Any, layout: str | None) -> None:
        """Takes a batch from feed_input, on the caller's thread: converted (copied, unless
        no_copy) and checked now, as DALI does, so the caller may reuse its buffers."""
        if self.kind != "feed":
            raise ArgumentError(f"{self.op.describe()}: feed_input is only for an "
                                "external_source without a source")
        layout = check_layout_arg(layout, f"feed_input({self.op.name!r})")
        if self.num_outputs is None:
            data = self._convert(data)
            why = layout_fits(layout, data.ndim)
            if why is not None:
                raise self._error(f"feed_input: {why}")
        self.fed.append((data, layout))

    def _next_raw(self, bctx: Any) -> Any:
        kind = self.kind
        if kind == "feed":
            if not self.fed:
                raise ArgumentError(f"{self.op.describe()}: no data was fed; call "
                                    f"pipe.feed_input({self.op.name!r}, batch) before run()")
            data, self.given = self.fed.popleft()
            return data
        if kind == "callable":
            if not self.batch:
                return self._per_sample(bctx)
            if self.n_params == 0:
                return self.source()
            if self.parallel and self.workers > 1:
                return self._batch_ahead()
            return self.source(self._batch_arg(self.iteration))
        # iterable or generator
        if self.exhausted and self.cycle != "quiet":
            raise StopIteration
        try:
            return self._next_from_iterator(bctx)
        except StopIteration:
            if self.cycle == "quiet" and self.batch:
                self._rewind()
                return self._next_from_iterator(bctx)
            self.exhausted = True
            raise

    def _next_from_iterator(self, bctx: Any) -> Any:
        if self.batch:
            return next(self.iterator)
        samples = []
        while len(samples) < bctx.batch_size:
            try:
                samples.append(next(self.iterator))
            except StopIteration:
                if self.cycle != "quiet":
                    raise  # a partly filled batch is dropped, as in DALI
                self._rewind()
        return samples

    def _batch_arg(self, iteration: int) -> Any:
        return types.BatchInfo(iteration, self.epoch) if self.batch_info else iteration

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="stoker-es")
        return self._pool

    def _batch_ahead(self) -> Any:
        """parallel=True batch callbacks are pure functions of their iteration (DALI requires
        it), so the next py_num_workers iterations are computed ahead, concurrently."""
        while len(self._ahead) < self.workers:
            arg = self._batch_arg(self.iteration + len(self._ahead))
            self._ahead.append(self._workers().submit(self.source, arg))
        return self._ahead.popleft().result()

    def _per_sample(self, bctx: Any) -> list:
        n = bctx.batch_size
        # Sample indices run on from the last one given (on_error="skip" tops a batch up
        # with the next ones), which is iteration * batch_size when nothing was skipped.
        if bctx.topup:
            first = self.next_index
            self.skipped_ahead += n
        else:
            first = self.batch_first = self.iteration * n + self.skipped_ahead
        infos = [types.SampleInfo(first + i, first - self.batch_first + i, self.iteration,
                                  self.epoch) for i in range(n)]
        self.next_index = first + n
        call = self._call_one if bctx.failures is not None else (
            self.source if self.n_params else lambda _: self.source())
        if self.parallel and self.workers > 1:
            out = list(self._workers().map(call, infos))
        else:
            out = [call(info) for info in infos]
        if bctx.failures is not None:
            for row, value in enumerate(out):
                if isinstance(value, _Raised):
                    bctx.fail(row, f"{self.op.describe()}: the source raised on sample "
                                   f"{infos[row].idx_in_epoch}: {value}")
                    out[row] = FAILED
        return out

    def _call_one(self, info: Any) -> Any:
        """on_error="skip": one sample; an exception (other than StopIteration) comes back
        as a value so the other samples go on."""
        try:
            return self.source(info) if self.n_params else self.source()
        except StopIteration:
            raise
        except Exception as e:
            return _Raised(f"{type(e).__name__}: {e}")

    @property
    def can_top_up(self) -> bool:
        """Per-sample sources can give single samples to replace failed ones."""
        return self.kind == "callable" and not self.batch

    def next_batch(self, bctx: Any) -> tuple[list, None]:
        tries = 0
        while True:
            try:
                raw = self._next_raw(bctx)
                break
            except StopIteration:
                raise
            except (ArgumentError, SampleError):
                raise
            except Exception as e:
                err = SampleError(
                    f"{self.op.describe()}: the source raised {type(e).__name__}: {e}",
                    op="fn.external_source", where=self.op.where)
                # on_error="skip": a batch callback that raised loses that batch; the next
                # iteration's batch replaces it (a bounded number of times).
                tries += 1
                if bctx.dropped is None or not self.batch or self.kind != "callable" or \
                        tries > 100:
                    raise err from e
                bctx.dropped.append((f"batch {self.iteration} of epoch {self.epoch}", str(err)))
                self.iteration += 1
        if not bctx.topup:
            self.iteration += 1
        try:
            return self._outputs(raw)
        finally:
            self.given = None

    def _outputs(self, raw: Any) -> tuple[list, None]:
        n = self.num_outputs
        if n is None:
            return [self._batch(raw, 0)], None
        if self.batch:
            parts = first_values(raw, n)
            if parts is None:
                raise self._error(f"num_outputs={n}, so the source must return {n} batches "
                                  f"(a tuple or list, one per output), got {holds(raw)}")
        else:
            try:
                parts = per_output(raw, n)
            except TypeError as e:
                raise self._error(str(e)) from None
        batches = [self._batch(part, k) for k, part in enumerate(parts)]
        sizes = [len(b) for b in batches]
        if len(set(sizes)) > 1:  # DALI: a RuntimeError at run time too
            raise self._error(f"the outputs of one source must have as many samples each, got "
                              f"{sizes}")
        return batches, None

    def _error(self, message: str) -> SampleError:
        return SampleError(f"{self.op.describe()}: {message}", op="fn.external_source",
                           where=self.op.where)

    def _convert(self, raw: Any) -> Converted:
        try:
            data = convert(raw, self.copy)
        except (TypeError, ValueError) as e:
            raise self._error(f"bad batch from the source: {e}") from e
        if self.batch_size and len(data.value) > self.batch_size:
            raise self._error(f"the source returned {len(data.value)} samples, more than the "
                              f"pipeline's batch_size={self.batch_size}")
        return data

    def _batch(self, raw: Any, k: int) -> Any:
        data = raw if isinstance(raw, Converted) else self._convert(raw)
        given = self.given or data.layout
        layout, why = self.layouts[k].of_batch(given)
        why = why or layout_fits(layout, data.ndim)
        if why is not None:
            raise self._error(why)
        if data.dtype is not None:
            dtype = self.dtype[k] if isinstance(self.dtype, list) else self.dtype
            if dtype is not None and types.to_dali(data.dtype) != dtype:
                raise self._error(f"the source gave {types.to_dali(data.dtype).name} data, "
                                  f"but dtype={types.DALIDataType(dtype).name} was declared")
            ndim = self.ndim[k] if isinstance(self.ndim, list) else self.ndim
            if ndim is not None and data.ndim != ndim:
                raise self._error(f"the source gave {data.ndim}-dimensional samples, but "
                                  f"ndim={ndim} was declared")
        self.batch_layouts[k] = layout
        return data.value

    def reset(self) -> None:
        """A new epoch: counters restart. Only cycle='raise' rewinds an exhausted iterable;
        otherwise its iterator is asked again, as in DALI: a list's stays exhausted, an
        object that rewinds itself before raising StopIteration (seed 003's) goes on."""
        self.epoch += 1
        self.iteration = 0
        self.skipped_ahead = 0
        self._cancel_ahead()  # computed for the old epoch's iterations
        if self.exhausted:
            if self.cycle == "raise":
                self._rewind()
            else:  # as DALI: ask the same iterator again (a self-rewinding one goes on)
                self.exhausted = False

    # -- checkpoints (stoker/pipeline/checkpoint.py) ----------------------------------------
    def state(self) -> dict[str, int]:
        """The epoch and the iteration in it of the next batch: all a callback that takes
        SampleInfo/BatchInfo (or the iteration) needs to resume, as in DALI."""
        return {"epoch": self.epoch, "iteration": self.iteration,
                "skipped_ahead": self.skipped_ahead}

    def restore(self, state: dict[str, int]) -> None:
        epoch, iteration = int(state["epoch"]), int(state["iteration"])
        skipped = int(state.get("skipped_ahead", 0))
        if min(epoch, iteration, skipped) < 0:
            raise ValueError(f"external_source state {state} has a negative counter")
        self.epoch, self.iteration, self.skipped_ahead = epoch, iteration, skipped
        self._cancel_ahead()

    def _cancel_ahead(self) -> None:
        """Drops the callbacks started ahead (parallel mode): their iterations are stale."""
        for future in self._ahead:
            future.cancel()
        self._ahead.clear()

    def unsaved_state(self) -> str | None:
        """Why a checkpoint cannot hold this source's position (None when it can)."""
        if self.kind == "callable" and self.n_params == 0:
            return "its source is a callable without parameters"
        if self.kind == "generator":
            return "its source is a generator function"
        if self.kind == "iterable":
            return "its source is an iterable"
        return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


class _Raised(str):
    """A per-sample callback's exception, carried as a value (on_error="skip")."""


SCHEMA = register(OpSchema(
    name="external_source",
    positional=("source", "num_outputs"),
    doc="Brings batches from Python: a callable, an iterable, a generator function, or "
        "data fed with pipe.feed_input(name, batch).",
    args=(
        Arg("source", "any", None, "Where the data comes from; None means feed_input."),
        Arg("num_outputs", "int", None, "Number of outputs; the source then returns a tuple.",
            range=(1, None)),
        Arg("cycle", "any", None, "At the end of an iterable: False/'no' raise StopIteration, "
            "True/'quiet' start over silently, 'raise' raise StopIteration and start over "
            "on reset()."),
        Arg("layout", "any", None, "Layout of the samples (e.g. 'HWC'); a list with "
            "num_outputs."),
        Arg("dtype", "any", None, "Declared data type; data of another type is an error."),
        Arg("ndim", "any", None, "Declared number of dimensions per sample."),
        Arg("batch", "bool", True, "True: the source gives a batch per call; False: a sample."),
        Arg("batch_info", "bool", False, "Pass a BatchInfo instead of the iteration number."),
        Arg("parallel", "bool", False, "Run per-sample callbacks on py_num_workers threads."),
        Arg("no_copy", "bool", False, "Use the source's arrays without copying them."),
        Arg("prefetch_queue_depth", "int", 1, "Accepted for portability.", range=(1, None)),
        Arg("repeat_last", "bool", False, "Accepted for portability (feed_input mode)."),
        Arg("cuda_stream", "any", None, "Accepted for portability."),
        Arg("use_copy_kernel", "bool", False, "Accepted for portability."),
        Arg("blocking", "bool", False, "Accepted for portability (feed_input mode)."),
    ),
    num_outputs=lambda a: a.get("num_outputs") or 1,
    stage="source",
    instance=ExternalSource,
    layout=declared_layouts,
    check=check_args,
    examples=(
        Example(args={"source": lambda: [np.arange(6, dtype=np.uint8).reshape(2, 3)] * 2}),
        Example(args={"source": 5}, raises=ArgumentTypeError, match="argument 'source'"),
    ),
))
