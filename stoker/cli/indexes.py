"""``stoker tfrecord-index``, ``webdataset-index``, ``recordio-index``: the index files
DALI's container readers take, written by walking the container files (no TensorFlow, no
MXNet, no tar).

``tfrecord-index FILE [INDEX]`` is DALI's ``tfrecord2idx FILE INDEX``: one line per record,
``<offset> <size>``; a gzip-compressed file gets the offsets of its decompressed stream
(what stoker's reader reads). A file that goes bad after some good records gets the index
of those, and the command exits with status 1 naming the offset.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from stoker.readers.index import DatasetError
from stoker.readers.records import RecordStore


def _write(path: str, text: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, path)  # a reader never sees half an index


def tfrecord_index(data_path: str, index_path: str) -> tuple[int, str | None]:
    """Writes the index of ``data_path``; (records, problem or None)."""
    from stoker.readers.tfrecord import decompressed, format_index, is_gzip, scan

    fd = os.open(data_path, os.O_RDONLY)
    try:
        fds = {0: decompressed(data_path, fd)} if is_gzip(fd) else {}
    finally:
        os.close(fd)
    store = RecordStore([data_path], fds=fds)
    try:
        offsets, sizes, problem = scan(store.mapped(0), data_path)
    finally:
        store.close()
    _write(index_path, format_index(offsets, sizes))
    return len(offsets), problem


def webdataset_index(data_path: str, index_path: str) -> tuple[int, str | None]:
    """Writes DALI's v1.2 index of a tar shard (what wds2idx writes); (samples, None)."""
    from stoker.readers.webdataset import format_index, walk

    store = RecordStore([data_path])
    try:
        members = walk(store.mapped(0), data_path)
    finally:
        store.close()
    if members.samples == 0:
        raise DatasetError(f"{data_path!r} holds no sample")
    _write(index_path, format_index(members))
    return members.samples, None


def recordio_index(data_path: str, index_path: str) -> tuple[int, str | None]:
    """Writes MXNet's index of a .rec file (``key\toffset`` lines, what im2rec and DALI's
    rec2idx write); (records, problem or None)."""
    from stoker.readers.recordio import format_index, walk

    store = RecordStore([data_path])
    try:
        index, bad = walk(store, "stoker recordio-index")
    finally:
        store.close()
    offsets = index.offset[:-1] if bad else index.offset
    _write(index_path, format_index(offsets))
    return len(offsets), next(iter(bad.values()), None)


def run_index(kind: str, args: Any) -> int:
    tools: dict[str, Callable[[str, str], tuple[int, str | None]]] = {
        "tfrecord": tfrecord_index, "webdataset": webdataset_index,
        "recordio": recordio_index}
    data = args.file
    index = args.index or f"{data}.idx"
    start = time.perf_counter()
    try:
        count, problem = tools[kind](data, index)
    except (OSError, DatasetError) as e:
        print(f"stoker {kind}-index: {e}", file=sys.stderr)
        return 1
    took = time.perf_counter() - start
    print(f"{index}: {count} {'samples' if kind == 'webdataset' else 'records'} of {data} "
          f"({took:.2f} s)")
    if problem is not None:
        print(f"stoker {kind}-index: {data!r}: {problem}; the index lists the {count} "
              "records before it", file=sys.stderr)
        return 1
    return 0
