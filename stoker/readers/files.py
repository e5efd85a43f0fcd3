"""Reading whole files into writable uint8 arrays, a batch at a time.

``os.readv`` straight into a fresh numpy array costs one copy (kernel to array) and no
Python bytes object. Reads release the GIL, so a batch of large files is split into a few
contiguous chunks read on a small thread pool. Measured on the 2-core development machine
(page cache warm, 256 files, ``benchmarks/reader_file_list.py --reads``), serial -> pool
of 2, in us per file: 3 KB 7.3 -> 8.1, 8 KB 9.8 -> 8.3, 16 KB 16.7 -> 10.8,
32 KB 27.7 -> 12.3, 60-160 KB 76.6 -> 30.4. So the pool is used once the files read so
far average at least 8 KB.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

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

    def _mean_size(self) -> float:
        return self._bytes / self._files if self._files else 0.0

    def _use_pool(self, n: int) -> bool:
        if self.threads < 2 or n < 2 * POOL_MIN_FILES_PER_THREAD:
            return False
        # Before any file was read there is nothing to go by: read the first batch serially.
        return self._mean_size() >= POOL_MIN_MEAN_BYTES

    def read(self, paths: Sequence[str]) -> list[np.ndarray]:
        """Reads every path. An OSError names the failing path (``error.filename``)."""
        n = len(paths)
        if not self._use_pool(n):
            out = [read_file(p) for p in paths]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="stoker-read")
            k = min(self.threads, n // POOL_MIN_FILES_PER_THREAD)
            bounds = [n * j // k for j in range(k + 1)]
            chunks = [paths[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            out = [a for part in self._pool.map(_read_all, chunks) for a in part]
        self._files += n
        self._bytes += sum(a.nbytes for a in out)
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _read_all(paths: Sequence[str]) -> list[np.ndarray]:
    return [read_file(p) for p in paths]
