"""Reading whole files into writable uint8 arrays, a batch at a time.

``os.readv`` straight into a fresh numpy array costs one copy (kernel to array) and no
Python bytes object. Reads release the GIL, so a batch of large files is split into a few
contiguous chunks read on a small thread pool. Measured on the 2-core development machine
(page cache warm, 256 files, ``benchmarks/reader_file_list.py --reads``), serial -> pool
of 2, in us per file: 3 KB 7.3 -> 8.1, 8 KB 9.8 -> 8.3, 16 KB 16.7 -> 10.8,
32 KB 27.7 -> 12.3, 60-160 KB 76.6 -> 30.4. So the pool is used once the files read so
far average at least 8 KB.

The pool also reads the next batch's files ahead while the current batch is decoded: a
64-image ImageNet-like batch took 2.6 ms to read on the pipeline's producer thread, a time
in which that thread (one of the pipeline's ``num_threads`` workers) decoded nothing.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

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
        # The paths being read ahead, and the pool's futures for them.
        self._ahead: tuple[list[str], list[Future]] | None = None

    def _mean_size(self) -> float:
        return self._bytes / self._files if self._files else 0.0

    def uses_pool(self, n: int) -> bool:
        """Whether a read of n files goes to the pool (and ``ahead`` paths are read then)."""
        if self.threads < 2 or n < 2 * POOL_MIN_FILES_PER_THREAD:
            return False
        # Before any file was read there is nothing to go by: read the first batch serially.
        return self._mean_size() >= POOL_MIN_MEAN_BYTES

    def read(self, paths: Sequence[str], ahead: Sequence[str] = ()) -> list[np.ndarray]:
        """Reads every path. An OSError names the failing path (``error.filename``).
        ``ahead``: the paths the next call will probably ask for, read meanwhile on the
        pool (that call takes them if it asks for exactly these, in this order; a file
        read ahead and not asked for again is dropped)."""
        n = len(paths)
        pending, self._ahead = self._ahead, None
        if pending is not None and pending[0] == paths:
            out = _joined(pending[1])
        elif not self.uses_pool(n):
            out = [read_file(p) for p in paths]
        else:
            out = _joined(self._submit(paths, self.threads))
        self._files += n
        self._bytes += sum(map(len, out))  # (1-D uint8 arrays: len is the byte count)
        if ahead and self.uses_pool(len(ahead)):
            # One task: it has a whole batch's decoding to finish in, and one thread
            # contends less with the decoding ones than several.
            self._ahead = (list(ahead), self._submit(ahead, 1))
        return out

    def _submit(self, paths: Sequence[str], parts: int) -> list[Future]:
        """The paths cut into at most ``parts`` contiguous chunks, one pool task each."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="stoker-read")
        n = len(paths)
        k = max(1, min(parts, n // POOL_MIN_FILES_PER_THREAD))
        bounds = [n * j // k for j in range(k + 1)]
        return [self._pool.submit(_read_all, paths[a:b])
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

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
