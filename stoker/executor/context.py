"""What an operator sees of the run: the batch, the chunk or the sample it works on.

Random operators draw only through these contexts, keyed by (operator seed, epoch, sample
index in the epoch), so a sample's values never depend on thread count, chunking, batch
size or prefetching.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.kernels.cpu import rng


class BatchContext:
    __slots__ = ("iteration", "first_index", "size", "batch_size", "pipeline", "epoch")

    def __init__(self, iteration: int, first_index: int, batch_size: int, pipeline: Any,
                 epoch: int = 0):
        self.iteration = iteration  # batches made since build
        self.first_index = first_index  # index in the epoch of the batch's first sample
        self.epoch = epoch  # reset() calls before this batch
        self.size = batch_size  # samples in this batch (sources may make fewer)
        self.batch_size = batch_size
        self.pipeline = pipeline


class ChunkContext:
    __slots__ = ("batch", "seed", "lo", "hi", "source_info")

    def __init__(self, batch: BatchContext, seed: int, lo: int, hi: int,
                 source_info: list[str] | None):
        self.batch = batch
        self.seed = seed
        self.lo = lo
        self.hi = hi
        self.source_info = source_info

    @property
    def n(self) -> int:
        return self.hi - self.lo

    @property
    def indices(self) -> np.ndarray:
        start = self.batch.first_index
        return np.arange(start + self.lo, start + self.hi, dtype=np.int64)

    def uniform(self, count: int) -> np.ndarray:
        """(n, count) values in [0, 1), a row per sample of the chunk."""
        return rng.uniform01(self.seed, self.indices, count)

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
    the CUDA stream its work goes on (None on CPU tensors). Random draws are the CPU
    operators' draws: same seed, same sample indices."""

    __slots__ = ("device", "stream")

    def __init__(self, batch: BatchContext, seed: int, n: int, source_info: list[str] | None,
                 device: Any, stream: Any = None):
        super().__init__(batch, seed, 0, n, source_info)
        self.device = device
        self.stream = stream
