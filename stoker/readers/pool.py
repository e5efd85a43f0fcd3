"""Running a reader's per-sample reads on a few threads.

A reader runs on the pipeline's producer thread; the reads of files and database values
(open, pread, mmap, LMDB lookups, the copy out of LMDB's map) release the GIL, so a batch
split into contiguous chunks, one on the producer and the others on a small pool, reads
in parallel while the Python between the calls takes turns. Measured on the 2-core
machine (benchmarks/readers_containers.py): ``.npy`` files of 94 KB, 1 thread -> 2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# Below this many items per thread, splitting costs more than it saves.
MIN_PER_THREAD = 8


class ChunkPool:
    def __init__(self, threads: int, name: str):
        self.threads = max(1, min(int(threads), 4))
        self._name = name
        self._pool: ThreadPoolExecutor | None = None

    def map(self, func: Callable[[Sequence[Any]], list], items: Sequence[Any]) -> list:
        """``func`` over contiguous chunks of ``items`` (the first chunk on this thread),
        its results joined in order. An exception of any chunk is raised."""
        n = len(items)
        k = min(self.threads, n // MIN_PER_THREAD)
        if k < 2:
            return func(items)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix=self._name)
        bounds = [n * j // k for j in range(k + 1)]
        futures = [self._pool.submit(func, items[a:b])
                   for a, b in zip(bounds[1:-1], bounds[2:], strict=True)]
        out = func(items[:bounds[1]])
        for f in futures:
            out += f.result()
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
