"""What an operator sees of the run: the batch, the chunk or the sample it works on, and
the values that flow between operators (``merge`` joins a batch's chunks).

Random operators draw only through these contexts, keyed by (operator seed, epoch, sample
index in the epoch), so a sample's values never depend on thread count, chunking, batch
size or prefetching.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.random import rng


class _Failed:
    """Stands in for a sample that failed under on_error="skip": the operators after it pass
    it on untouched, and the executor drops its row from the batch."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<failed sample>"


FAILED: Any = _Failed()

# Values flowing between operators: a dense array (sample axis first) or a list of arrays.
Value = Any


def merge(parts: list[Value], blocks: dict | None = None) -> Value:
    """Joins chunk results into one batch value; dense when every part is dense and alike.
    Parts that are the rows of one of ``blocks`` (``ChunkContext.rows``), in order, are
    that block: no copy."""
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, np.ndarray) for p in parts):
        first = parts[0]
        if all(p.shape[1:] == first.shape[1:] and p.dtype == first.dtype for p in parts):
            return _tiled(parts, blocks) if blocks else np.concatenate(parts)
    out: list[np.ndarray] = []
    for p in parts:
        out.extend(p)
    return out


def _tiled(parts: list[np.ndarray], blocks: dict) -> np.ndarray:
    """The block whose rows ``parts`` are, one after the other; else the parts joined."""
    at = parts[0].ctypes.data
    for block in blocks.values():
        if block.ctypes.data == at and len(block) == sum(len(p) for p in parts):
            for p in parts:
                if p.ctypes.data != at or not p.flags.c_contiguous:
                    break
                at += p.nbytes
            else:
                return block
    return np.concatenate(parts)


class BatchContext:
    __slots__ = ("iteration", "first_index", "size", "batch_size", "pipeline", "epoch",
                 "failures", "dropped", "topup", "variant", "blocks", "_lock")

    def __init__(self, iteration: int, first_index: int, batch_size: int, pipeline: Any,
                 epoch: int = 0):
        self.iteration = iteration  # batches made since build
        self.first_index = first_index  # index in the epoch of the batch's first sample
        self.epoch = epoch  # reset() calls before this batch
        self.size = batch_size  # samples in this batch (sources may make fewer)
        self.batch_size = batch_size
        self.pipeline = pipeline
        # on_error="skip" only (None otherwise): failed rows (index in the batch -> reason),
        # failures that are not a row (a batch callback that raised: (what, reason)), and
        # whether this call tops up a batch that lost samples (sources count it as the
        # same iteration).
        self.failures: dict[int, str] | None = None
        self.dropped: list[tuple[str, str]] | None = None
        self.topup = False
        # The instances and layouts this batch runs with (executor/variants.py), set when
        # its sources have given their data.
        self.variant: Any = None
        # The batch's output blocks (``ChunkContext.rows``): (owner, n, shape, dtype) ->
        # one array whose rows the chunks fill.
        self.blocks: dict | None = None
        self._lock = threading.Lock()

    def block(self, key: tuple, n: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """The batch's (n, *shape) block of ``key``, made by the first chunk that asks."""
        blocks = self.blocks
        if blocks is None or key not in blocks:
            with self._lock:
                if self.blocks is None:
                    self.blocks = {}
                if key not in self.blocks:
                    self.blocks[key] = buffers.empty((n, *shape), dtype)
                blocks = self.blocks
        return blocks[key]

    def detached(self) -> BatchContext:
        """A copy without the pipeline, for work that may outlive the producer's hold."""
        copy = BatchContext(self.iteration, self.first_index, self.batch_size, None,
                            self.epoch)
        copy.size, copy.failures, copy.dropped, copy.topup, copy.variant = (
            self.size, self.failures, self.dropped, self.topup, self.variant)
        return copy

    def fail(self, row: int, reason: str) -> bool:
        """Records a failed row under on_error="skip"; False when errors must be raised."""
        if self.failures is None:
            return False
        self.failures[row] = reason
        return True


class ChunkContext:
    __slots__ = ("batch", "seed", "lo", "hi", "source_info", "total", "owner")

    def __init__(self, batch: BatchContext, seed: int, lo: int, hi: int,
                 source_info: list[str] | None, total: int | None = None,
                 owner: object = None):
        self.batch = batch
        self.seed = seed
        self.lo = lo
        self.hi = hi
        self.source_info = source_info
        # The stage's samples and the operator running (the executor sets them): the
        # chunks' outputs may then share one block of the batch (``rows``).
        self.total = total
        self.owner = owner

    def rows(self, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """An uninitialized (n, *shape) array for this chunk's outputs: its rows of one
        block of the whole batch when the executor runs the chunk (the chunks' outputs
        then join into the batch without a copy: ``merge``), else an array of its own."""
        if self.total is None:
            return buffers.empty((self.n, *shape), dtype)
        if type(shape) is not tuple:
            shape = tuple(shape)
        key = (id(self.owner), self.total, shape, dtype)
        return self.batch.block(key, self.total, shape, dtype)[self.lo:self.hi]

    @property
    def n(self) -> int:
        return self.hi - self.lo

    @property
    def indices(self) -> np.ndarray:
        start = self.batch.first_index
        return np.arange(start + self.lo, start + self.hi, dtype=np.int64)

    def uniform(self, count: int) -> np.ndarray:
        """(n, count) values in [0, 1), a row per sample of the chunk."""
        return rng.uniform01_from(self.seed, self.batch.first_index + self.lo, self.n, count)

    def sample(self, j: int) -> SampleContext:
        info = self.source_info[j] if self.source_info is not None else ""
        return SampleContext(self.seed, self.batch.first_index + self.lo + j, info, self.lo + j,
                             self.batch)


class SampleContext:
    __slots__ = ("seed", "index", "source_info", "idx_in_batch", "batch")

    def __init__(self, seed: int, index: int, source_info: str, idx_in_batch: int,
                 batch: BatchContext):
        self.seed = seed
        self.index = index
        self.source_info = source_info
        self.idx_in_batch = idx_in_batch
        self.batch = batch

    def uniform(self, count: int) -> np.ndarray:
        return rng.uniform01(self.seed, np.array([self.index]), count)[0]

    def generator(self) -> np.random.Generator:
        return rng.generator(self.seed, self.index)

    def describe(self) -> str:
        if self.source_info:
            return self.source_info
        return f"sample {self.idx_in_batch} of batch {self.batch.iteration}"


class GpuContext(ChunkContext):
    """A GPU operator's view: the whole batch (a chunk from 0 to n), its torch device and
    the pipeline's CUDA stream (``stream``; None on CPU tensors), which the runner makes
    current around the operator: an operator that works on another stream (a decoder's
    own) joins this one with an event, never with a host wait. Random draws are the CPU
    operators' draws: same seed, same sample indices."""

    __slots__ = ("device", "pool", "stream")

    def __init__(self, batch: BatchContext, seed: int, n: int, source_info: list[str] | None,
                 device: Any, pool: Any = None, stream: Any = None):
        super().__init__(batch, seed, 0, n, source_info)
        self.device = device
        self.pool = pool  # the pipeline's WorkerPool, for CPU work inside a GPU operator
        self.stream = stream

    def map(self, fn: Any, n: int) -> list:
        """``[fn(0), ..., fn(n-1)]`` on the pipeline's threads (here when there is no pool)."""
        if self.pool is None:
            return [fn(i) for i in range(n)]
        return self.pool.map(fn, n)


class SampleFailure(Exception):
    """Raised by a GPU operator's glue when sample ``index`` (in the batch) failed, so that
    the executor's error names that sample's source like a CPU operator's does."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.index = index
        self.cause = cause
