"""MXNet RecordIO (``.rec``) files: the ``.idx`` index, indexing by walking the records,
and a batch of records as (image bytes, labels).

The index (MXNet's ``im2rec``, DALI's ``rec2idx``) is text, ``<key> <offset>`` per line
(a tab in practice, any whitespace accepted); DALI reads one index for all the ``.rec``
files, takes the offsets as positions in the files laid end to end, sorts them, drops
repeats, and gives each record the bytes up to the next offset (or its file's end).

A record's data starts with MXNet's ``IRHeader``: ``uint32 flag, float32 label, uint64
id, uint64 id2`` (24 bytes); with ``flag == 0`` the label is the header's, with ``flag =
k > 0`` ``k`` float32 labels follow it. The image is the rest.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.readers.index import DatasetError
from stoker.readers.records import RecordIndex, RecordStore

HEADER = 24
_MAGIC = struct.pack("<I", 0xCED7230A)


def parse_index(text: bytes, path: str) -> np.ndarray:
    """The sorted, distinct offsets of an index file's ``<key> <offset>`` lines."""
    offsets = []
    for n, line in enumerate(text.split(b"\n"), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2 or not fields[1].isdigit():
            raise DatasetError(f"index file {path!r}, line {n}: expected '<key> <offset>' "
                               f"with a non-negative integer offset, got {line[:60]!r}")
        offsets.append(int(fields[1]))
    if not offsets:
        raise DatasetError(f"index file {path!r} lists no record (DALI: RecordIO index file "
                           "doesn't contain any indices)")
    return np.unique(np.array(offsets, np.int64))


def index_from_offsets(store: RecordStore, offsets: np.ndarray, who: str) -> RecordIndex:
    """Records at global ``offsets`` (the files laid end to end), each up to the next
    offset or its file's end."""
    sizes = np.array([store.file_size(f) for f in range(len(store.paths))], np.int64)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    if offsets[-1] >= ends[-1]:
        raise DatasetError(f"{who}: the index lists offset {int(offsets[-1])}, past the "
                           f"{int(ends[-1])} bytes of the .rec files")
    file = np.searchsorted(ends, offsets, side="right").astype(np.int32)
    nxt = np.minimum(np.append(offsets[1:], ends[-1]), ends[file])
    return RecordIndex(list(store.paths), file, offsets - starts[file], nxt - offsets)


def walk(store: RecordStore, who: str) -> tuple[RecordIndex, dict[int, str]]:
    """The records of every file, found by walking them; a file that goes bad gives its
    good records and a failing record for its damaged tail (as in ``tfrecord.scan``)."""
    rio = loops("readers.recordio_loops")
    spans, bad = [], {}
    row = 0
    for f, path in enumerate(store.paths):
        data = store.mapped(f)
        offsets = np.empty(1 << 12, np.int64)
        count, pos, status = 0, 0, 3
        while status == 3:
            if count == len(offsets):
                offsets = np.resize(offsets, 4 * len(offsets))
            count, pos, status = rio.walk(data, offsets, count)
        offsets = offsets[:count]
        if status and count == 0 and pos == 0:
            raise DatasetError(f"{who}: {path!r} is not a RecordIO file (no magic number at "
                               "offset 0)")
        if status:
            bad[row + count] = (f"no RecordIO magic number at offset {pos}" if status == 1 else
                                f"the record at offset {pos} runs past the end of the file "
                                "(the file is truncated)")
            offsets = np.append(offsets, pos)
        sizes = np.diff(np.append(offsets, len(data)))
        spans.append((offsets, sizes))
        row += len(offsets)
    return RecordIndex.concat(store.paths, spans), bad


def format_index(offsets: np.ndarray) -> bytes:
    """MXNet's index lines (``key\\toffset``; keys count from 0)."""
    out = np.empty(42 * len(offsets), np.uint8)
    n = loops("readers.text_loops").pairs(np.arange(len(offsets), dtype=np.int64),
                                          np.ascontiguousarray(offsets, np.int64), 9, out)
    return out[:n].tobytes()


def decode(store: RecordStore, index: RecordIndex, rows: np.ndarray
           ) -> tuple[list, list, dict[int, str]]:
    """(images, labels, failures) of records ``rows``: images are views of the files'
    bytes (split records are joined into new arrays), labels float32 arrays."""
    rio = loops("readers.recordio_loops")
    n = len(rows)
    files, offsets, sizes = index.file[rows], index.offset[rows], index.size[rows]
    images: list = [None] * n
    labels: list = [None] * n
    failures: dict[int, str] = {}
    outside = store.outside(files, offsets, sizes)
    for j in np.flatnonzero(outside).tolist():
        failures[j] = store.outside_message(int(files[j]), int(offsets[j]), int(sizes[j]))
    good = np.flatnonzero(~outside)
    for buf, seg_rows, starts in store.segments(files[good], offsets[good], sizes[good]):
        batch = good[seg_rows]
        m = len(batch)
        data_start, data_len = np.zeros(m, np.int64), np.zeros(m, np.int64)
        status = np.zeros(m, np.int64)
        rio.frame(buf, starts, sizes[batch], data_start, data_len, status)
        for k, j in enumerate(batch.tolist()):
            if status[k] == 0:
                data = buf[data_start[k]:data_start[k] + data_len[k]]
            elif status[k] == 1:
                data = _join(rio, buf, int(starts[k]), int(starts[k] + sizes[j]))
                if data is None:
                    failures[j] = "its parts (a record MXNet split) are malformed"
                    continue
            else:
                failures[j] = {-1: "no RecordIO magic number at its start (a wrong index?)",
                               -2: f"its length ({int(data_len[k])} bytes) runs past the "
                                   f"{int(sizes[j])} bytes the index gives it",
                               -3: "it is the middle or last part of a split record (a "
                                   "wrong index?)"}[int(status[k])]
                continue
            why = _split_header(data, j, images, labels)
            if why:
                failures[j] = why
    return images, labels, failures


def _join(rio, buf: np.ndarray, start: int, end: int) -> np.ndarray | None:  # noqa: ANN001
    """A split record's data: its parts joined with the magic number between them."""
    bounds = np.zeros((16, 2), np.int64)
    count = rio.parts(buf, start, end, bounds)
    while count == -2:
        bounds = np.zeros((8 * len(bounds), 2), np.int64)
        count = rio.parts(buf, start, end, bounds)
    if count < 0:
        return None
    pieces = [buf[a:a + n] for a, n in bounds[:count].tolist()]
    magic = np.frombuffer(_MAGIC, np.uint8)
    return np.concatenate([x for p in pieces for x in (p, magic)][:-1])


def _split_header(data: np.ndarray, j: int, images: list, labels: list) -> str | None:
    if len(data) < HEADER:
        return (f"its data has {len(data)} bytes, fewer than the 24 of MXNet's record "
                "header (DALI: record payload length ... minimum is 24 bytes)")
    flag = int.from_bytes(data[:4].tobytes(), "little")
    if flag == 0:
        labels[j] = data[4:8].view(np.float32).copy()
        images[j] = data[HEADER:]
        return None
    end = HEADER + 4 * flag
    if end > len(data):
        return f"its header announces {flag} labels, more than its {len(data)} bytes hold"
    labels[j] = data[HEADER:end].copy().view(np.float32)
    images[j] = data[end:]
    return None


def open_store(paths: Sequence[str], use_mmap: bool, who: str) -> RecordStore:
    import os

    for path in paths:
        if not os.path.isfile(path):
            raise DatasetError(f"{who}: RecordIO file {path!r} does not exist")
    return RecordStore(paths, use_mmap=use_mmap)
