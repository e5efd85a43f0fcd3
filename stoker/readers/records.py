"""Records in container files: where each one is, and reading a batch of them.

Every container reader (TFRecord, webdataset, RecordIO, and the numpy reader's files)
turns its dataset into a ``RecordIndex``: one row per sample, the file it is in, its byte
offset and size, as parallel numpy arrays (a million records cost 20 MB, no Python object
each). Sharding, shuffling, epochs and checkpoints then work on row numbers
(``stoker/operators/readers/base.py``), once for all readers.

``RecordStore`` reads rows. By default each file is memory-mapped copy-on-write and a
record is a view of the mapping: nothing is copied, no Python bytes object is made, and
the page faults happen in whichever thread first touches the bytes (the decoder's, GIL
released). DALI's loaders share mapped memory with their outputs the same way; with
``dont_use_mmap=True`` (DALI's argument) records are read with ``os.preadv`` into one
buffer per batch instead, one system call per run of adjacent records.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class RecordIndex:
    """Rows ``(file, offset, size)``; ``paths[file]`` names the file."""

    paths: list[str]
    file: np.ndarray  # int32
    offset: np.ndarray  # int64
    size: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.offset)

    @classmethod
    def concat(cls, paths: Sequence[str], spans: Sequence[tuple[np.ndarray, np.ndarray]]
               ) -> RecordIndex:
        """The records of each file (its ``(offsets, sizes)``), file after file, as DALI's
        container loaders concatenate their files' indices."""
        counts = [len(o) for o, _ in spans]
        file = np.repeat(np.arange(len(paths), dtype=np.int32), counts)
        offset = np.concatenate([np.asarray(o, np.int64) for o, _ in spans]) if spans \
            else np.zeros(0, np.int64)
        size = np.concatenate([np.asarray(s, np.int64) for _, s in spans]) if spans \
            else np.zeros(0, np.int64)
        return cls(list(paths), file, offset, size)

    def file_groups(self) -> np.ndarray:
        """Records per file, in file order."""
        return np.bincount(self.file, minlength=len(self.paths))

    def where(self, rows: np.ndarray) -> list[str]:
        """DALI's source_info of each row: ``"<file> at index <offset>"``."""
        paths = self.paths
        return [f"{paths[f]} at index {o}"
                for f, o in zip(self.file[rows].tolist(), self.offset[rows].tolist(),
                                strict=True)]


class RecordStore:
    """Open container files; ``segments`` gives a batch of records as byte ranges of a
    few buffers, ``views`` as one array per record."""

    # Descriptors kept open for preadv (least recently used closed first): datasets of
    # thousands of shards stay under the process's open-file limit. Mapped files keep no
    # descriptor (a mapping outlives it).
    MAX_OPEN = 64

    def __init__(self, paths: Sequence[str], use_mmap: bool = True,
                 fds: dict[int, int] | None = None):
        """``fds``: descriptors already opened for some files (decompressed copies); the
        store keeps them open and closes them at ``close()``."""
        self.paths = list(paths)
        self.use_mmap = use_mmap
        self._owned: dict[int, int] = dict(fds or {})
        self._open: dict[int, int] = {}
        self._sizes: dict[int, int] = {}
        self._maps: dict[int, np.ndarray] = {}

    def _fd(self, f: int) -> tuple[int, bool]:
        """A descriptor of file ``f`` and whether the caller must close it."""
        fd = self._owned.get(f)
        if fd is not None:
            return fd, False
        fd = self._open.pop(f, None)
        if fd is None:
            fd = os.open(self.paths[f], os.O_RDONLY)
        return fd, True

    def _keep(self, f: int, fd: int) -> None:
        self._open[f] = fd  # most recently used last
        while len(self._open) > self.MAX_OPEN:
            os.close(self._open.pop(next(iter(self._open))))

    def file_size(self, f: int) -> int:
        size = self._sizes.get(f)
        if size is None:
            fd, mine = self._fd(f)
            size = self._sizes[f] = os.fstat(fd).st_size
            if mine:
                self._keep(f, fd)
        return size

    def mapped(self, f: int) -> np.ndarray:
        """The whole file as a writable uint8 array (copy-on-write pages: a writer changes
        its own copy, never the file)."""
        arr = self._maps.get(f)
        if arr is None:
            size = self.file_size(f)
            if size == 0:  # mmap refuses empty files
                arr = np.zeros(0, np.uint8)
            else:
                fd, mine = self._fd(f)
                try:
                    arr = np.frombuffer(mmap.mmap(fd, size, access=mmap.ACCESS_COPY),
                                        np.uint8)
                finally:
                    if mine:
                        os.close(fd)
            self._maps[f] = arr
        return arr

    def outside(self, files: np.ndarray, offsets: np.ndarray, sizes: np.ndarray
                ) -> np.ndarray:
        """Which records lie (partly) outside their file: a wrong or stale index."""
        bad = (offsets < 0) | (sizes < 0)
        for f in np.unique(files).tolist():
            rows = files == f
            bad[rows] |= offsets[rows] + sizes[rows] > self.file_size(f)
        return bad

    def outside_message(self, f: int, offset: int, size: int) -> str:
        return (f"the record at offset {offset} ({size} bytes) lies outside "
                f"{self.paths[f]!r}, which has {self.file_size(f)} bytes: the index does "
                "not belong to this file (rebuild it)")

    def segments(self, files: np.ndarray, offsets: np.ndarray, sizes: np.ndarray
                 ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The records as ``(buffer, rows, starts)`` triples: record ``rows[j]`` is
        ``buffer[starts[j]:starts[j] + sizes[rows[j]]]``. Records must lie inside their
        files (``outside``)."""
        if self.use_mmap:
            out = []
            for f in np.unique(files).tolist():
                rows = np.flatnonzero(files == f)
                out.append((self.mapped(f), rows, offsets[rows]))
            return out
        return [self._read(files, offsets, sizes)]

    def _read(self, files: np.ndarray, offsets: np.ndarray, sizes: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reads the records into one buffer: adjacent ones (in file and offset order)
        with one ``preadv`` per run, so a sequential batch costs one system call."""
        n = len(offsets)
        order = np.lexsort((offsets, files))
        f, o, s = files[order], offsets[order], sizes[order]
        # A run continues while the next record starts where this one ends.
        new_run = np.ones(n, bool)
        new_run[1:] = (f[1:] != f[:-1]) | (o[1:] != o[:-1] + s[:-1])
        run_starts = np.flatnonzero(new_run)
        run_ends = np.append(run_starts[1:], n)
        buf = np.empty(int(s.sum()), np.uint8)
        starts_sorted = np.cumsum(s) - s
        view = memoryview(buf)
        for a, b in zip(run_starts.tolist(), run_ends.tolist(), strict=True):
            lo, hi = int(starts_sorted[a]), int(starts_sorted[b - 1] + s[b - 1])
            self._pread(int(f[a]), view[lo:hi], int(o[a]))
        starts = np.empty(n, np.int64)
        starts[order] = starts_sorted
        return buf, np.arange(n), starts

    def _pread(self, f: int, into: memoryview, offset: int) -> None:
        fd, mine = self._fd(f)
        try:
            done, want = 0, len(into)
            while done < want:  # preadv may return less than asked
                got = os.preadv(fd, [into[done:]], offset + done)
                if got == 0:
                    raise OSError(f"{self.paths[f]!r} ended at byte {offset + done} while "
                                  f"reading {want} bytes from offset {offset} (was it "
                                  "truncated?)")
                done += got
        finally:
            if mine:
                self._keep(f, fd)

    def views(self, files: np.ndarray, offsets: np.ndarray, sizes: np.ndarray
              ) -> list[np.ndarray]:
        """One uint8 array per record, in the order asked."""
        out: list = [None] * len(offsets)
        for buf, rows, starts in self.segments(files, offsets, sizes):
            ends = starts + sizes[rows]
            for r, a, b in zip(rows.tolist(), starts.tolist(), ends.tolist(), strict=True):
                out[r] = buf[a:b]
        return out

    def close(self) -> None:
        """Closes the descriptors; mapped records handed out stay valid (a mapping lives
        while any view of it does)."""
        self._maps.clear()
        for fd in [*self._open.values(), *self._owned.values()]:
            try:
                os.close(fd)
            except OSError:
                pass
        self._open.clear()
        self._owned.clear()
        self._sizes.clear()
