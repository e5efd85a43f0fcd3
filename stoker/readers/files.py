"""Reading whole files into writable uint8 arrays, a batch at a time.

``os.readv`` straight into a fresh numpy array costs one copy (kernel to array) and no
Python bytes object. Reads release the GIL, so a batch of large files is split into a few
contiguous chunks read on a small thread pool. Measured on the 2-core development machine
(page cache warm, 256 files, ``benchmarks/reader_file_list.py --reads``), serial -> pool
of 2, in us per file: 3 KB 7.3 -> 8.1, 8 KB 9.8 -> 8.3, 16 KB 16.7 -> 10.8,
32 KB 27.7 -> 12.3, 60-160 KB 76.6 -> 30.4. So the pool is used once the files read so
far average at least 8 KB.

The pool also reads the next batch's files ahead while the current batch is decoded
(``ahead``/``taken``): a 64-image ImageNet-like batch took 2.6 ms to read on the pipeline's
producer thread, a time in which that thread (one of the pipeline's ``num_threads``
workers) decoded nothing. The reader names that batch's files there too: what the producer
does for every batch is serial work that many threads wait on.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

# Use the pool when the files read so far average at least this many bytes...
POOL_MIN_MEAN_BYTES = 8 << 10
# ...and each thread gets at least this many files.
POOL_MIN_FILES_PER_THREAD = 4


def read_file(path: str) -> np.ndarray:
    """The bytes of ``path`` as a writable 1-D uint8 array. Raises OSError naming the path
    (``error.filename``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            out = np.empty(size, np.uint8)
            done = 0
            while done < size:  # readv may return less than asked (huge files, some FS)
                got = os.readv(fd, [memoryview(out)[done:]])
                if got == 0:  # the file shrank since fstat
                    return out[:done].copy()
                done += got
            return out
        finally:
            os.close(fd)
    except OSError as e:
        if e.filename is None:  # read errors (a folder, I/O errors) carry no path
            raise OSError(e.errno, e.strerror, path) from e
        raise


class FileBatchReader:
    """Reads batches of files, on a thread pool when that pays."""

    def __init__(self, max_threads: int):
        self.threads = max(1, min(int(max_threads), 8))
        self._pool: ThreadPoolExecutor | None = None
        self._files = 0
        self._bytes = 0
        # What is being read ahead (``ahead``): its key and the pool's future.
        self._ahead: tuple[Any, Future] | None = None

    def _mean_size(self) -> float:
        return self._bytes / self._files if self._files else 0.0

    def uses_pool(self, n: int) -> bool:
        """Whether a read of n files goes to the pool (and the next batch is read ahead)."""
        if self.threads < 2 or n < 2 * POOL_MIN_FILES_PER_THREAD:
            return False
        # Before any file was read there is nothing to go by: read the first batch serially.
        return self._mean_size() >= POOL_MIN_MEAN_BYTES

    def read(self, paths: Sequence[str]) -> list[np.ndarray]:
        """Reads every path, on the pool when that pays. An OSError names the failing path
        (``error.filename``)."""
        if not self.uses_pool(len(paths)):
            return self.read_here(paths)
        return self._counted(_joined(self._submit(paths)))

    def read_here(self, paths: Sequence[str]) -> list[np.ndarray]:
        """``read`` on the calling thread (a pool task's: it must not wait on the pool)."""
        return self._counted([read_file(p) for p in paths])

    def _counted(self, out: list[np.ndarray]) -> list[np.ndarray]:
        # (From two threads at times, the producer's and a read ahead: a count lost to the
        # race only moves the mean a little.)
        self._files += len(out)
        self._bytes += sum(map(len, out))  # (1-D uint8 arrays: len is the byte count)
        return out

    def ahead(self, key: Any, make: Callable[[], Any]) -> None:
        """Runs ``make()`` (the next batch's reads, with ``read_here``) as one pool task; the
        next ``taken(key)`` gives its result. One task: it has a whole batch's decoding to
        finish in, and one thread contends less with the decoding ones than several."""
        self._ahead = (key, self._executor().submit(make))

    def taken(self, key: Any) -> Any:
        """The result of the ``ahead`` call made for this very ``key`` (raising what it
        raised), or None; anything read ahead for another key is dropped."""
        pending, self._ahead = self._ahead, None
        if pending is None or pending[0] is not key:
            return None
        return pending[1].result()

    def _submit(self, paths: Sequence[str]) -> list[Future]:
        """The paths cut into a few contiguous chunks, one pool task each."""
        n = len(paths)
        k = max(1, min(self.threads, n // POOL_MIN_FILES_PER_THREAD))
        bounds = [n * j // k for j in range(k + 1)]
        pool = self._executor()
        return [pool.submit(_read_all, paths[a:b])
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="stoker-read")
        return self._pool

    def close(self) -> None:
        self._ahead = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _joined(futures: list[Future]) -> list[np.ndarray]:
    """The arrays the futures read, in order."""
    if len(futures) == 1:
        return futures[0].result()
    return list(itertools.chain.from_iterable(f.result() for f in futures))


def _read_all(paths: Sequence[str]) -> list[np.ndarray]:
    return [read_file(p) for p in paths]
