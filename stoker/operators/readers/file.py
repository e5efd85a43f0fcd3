"""``fn.readers.file``: encoded file bytes and an int32 label per sample, as DALI reads them.

The dataset comes from ``file_root`` (a folder of class folders), ``file_list`` (lines
``<path> <label>``) or ``files`` (+ ``labels``); ``stoker/readers`` holds the listing,
sharding, shuffling and epoch logic, this module the schema and the source instance.

Where stoker differs from DALI 2.4 on purpose:

* ``random_shuffle`` delivers an exact permutation of the shard every epoch, drawn from
  ``(seed, epoch, shard)``, instead of DALI's ``initial_fill`` buffer, which only moves
  samples locally: measured on 10,000 samples, a sample's positions in two consecutive
  DALI epochs correlate at 0.90 (``initial_fill`` is accepted and ignored).
  ``shuffle_after_epoch`` permutes the whole dataset every epoch, the first one included,
  as DALI does, but with stoker's generator, so the orders differ from DALI's. Without
  shuffling, orders are exactly DALI's.
* An empty file reads as an empty array (DALI fails to memory-map it unless
  ``dont_use_mmap=True``). A file_list label above int32's range is an error (DALI wraps).
* Bad argument combinations fail at the ``fn.readers.file`` call, not at build().

As in DALI, readers never stop at an epoch's end (a batch runs on into the next epoch
unless ``pad_last_batch``) and ``pipe.reset()`` leaves them where they are.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, SampleError
from stoker.graph.node import OpNode
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers.files import FileBatchReader
from stoker.readers.index import (
    DEFAULT_FILE_FILTERS,
    SampleIndex,
    index_from_file_list,
    index_from_file_root,
    index_from_files,
)
from stoker.readers.order import SampleIds

_FN = "fn.readers.file"


class FileReader(IndexedReader):
    """The source instance: the file index and whole-file reads (base.py does the rest)."""

    def __init__(self, op: OpNode, pipeline: Any):
        self._reader = FileBatchReader(getattr(pipeline, "num_threads", 1) or 1)
        super().__init__(op, pipeline)

    def _build_index(self) -> SampleIndex:
        a, who = self.args, self._who()
        if a.get("file_list") is not None:
            return index_from_file_list(a["file_list"], a.get("file_root"), who)
        if a.get("files") is not None:
            return index_from_files(a["files"], a.get("labels"), a.get("file_root"), who)
        return index_from_file_root(a["file_root"], a["file_filters"], a.get("dir_filters"),
                                    a["case_sensitive_filter"], who)

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        reader, count = self._reader, len(ids)
        # (names, bytes, labels) as read ahead on the reader's pool, when these ids were
        # the peek it was read for.
        made = reader.taken(ids)
        if made is None:
            made = self._named_read(ids, reader.read, bctx)
        if bctx.failures is None and reader.uses_pool(count):
            # The next batch, named and read there while this one is decoded.
            peek = self._cursor().peek(count)
            reader.ahead(peek, lambda: self._named_read(peek, reader.read_here))
        names, data, labels = made
        return [data, labels], names

    def _named_read(self, ids: SampleIds, read: Any, bctx: Any = None) -> tuple:
        """The samples' names, file bytes and labels; ``read(paths)`` reads the files."""
        index = self.index
        names = index.paths.names(ids.index.tolist())
        joined = index.paths.joined(names)
        try:
            data = read(joined)
        except OSError as e:
            if bctx is None or bctx.failures is None:
                raise self._read_error(e) from e
            data = self._read_each(joined, bctx)
        return names, data, index.labels[ids.index].reshape(-1, 1)

    def _read_error(self, e: OSError) -> SampleError:
        path = e.filename or "?"
        return self.sample_error(f"cannot read file {path!r}: {e.strerror or e}", str(path))

    def _read_each(self, paths: list[str], bctx: Any) -> list:
        """on_error="skip": the files one by one; an unreadable one becomes a failed row."""
        from stoker.executor.context import FAILED
        from stoker.readers.files import read_file

        out: list = []
        for row, path in enumerate(paths):
            try:
                out.append(read_file(path))
            except OSError as e:
                bctx.fail(row, str(self._read_error(e)))
                out.append(FAILED)
        return out

    def close(self) -> None:
        self._reader.close()


def _check(args: dict) -> None:
    sources = [k for k in ("file_root", "file_list", "files") if args.get(k) is not None]
    if not sources:
        raise ArgumentError(f"{_FN}: give the dataset as 'file_root' (a folder of class "
                            "folders), 'file_list' or 'files'")
    if args.get("files") is not None and args.get("file_list") is not None:
        raise ArgumentError(f"{_FN}: give file paths through 'files' or 'file_list', not both")
    if args.get("labels") is not None and args.get("files") is None:
        raise ArgumentError(f"{_FN}: argument 'labels' goes with 'files' only (file_list "
                            "lines carry their labels; file_root labels are folder indices)")
    files, labels = args.get("files"), args.get("labels")
    if files is not None and not files:
        raise ArgumentError(f"{_FN}: argument 'files' is an empty list")
    if files is not None and labels is not None and len(labels) != len(files):
        raise ArgumentError(f"{_FN}: argument 'labels' has {len(labels)} values for "
                            f"{len(files)} files; give one label per file")
    check_reader_args(_FN, args, random_with_epoch_shuffle=False)


def _example_files() -> list[str]:
    return [__file__, os.path.join(os.path.dirname(__file__), "__init__.py")]


SCHEMA = register(OpSchema(
    name="readers.file",
    doc="Reads whole files: outputs the encoded bytes (uint8, 1-D) and an int32 label of "
        "shape (1,) per sample, from file_root/<class>/<file>, a file_list or files.",
    args=(
        Arg("file_root", "str", None, "Folder of class folders; with file_list or files, "
            "the folder their relative paths start from."),
        Arg("file_list", "str", None, "Text file of '<path> <label>' lines."),
        Arg("files", "strs", None, "Paths of the files, in reading order."),
        Arg("labels", "ints", None, "A label per entry of 'files' (default: 0, 1, 2, ...)."),
        Arg("file_filters", "strs", list(DEFAULT_FILE_FILTERS), "Glob patterns of the file "
            "names to take under file_root."),
        Arg("dir_filters", "strs", None, "Glob patterns of the class folders to take under "
            "file_root."),
        Arg("case_sensitive_filter", "bool", False, "Match the filters case-sensitively."),
        *reader_args(containers=False),
    ),
    num_outputs=2,
    stage="source",
    instance=FileReader,
    random=False,
    layout=lambda in_layouts, args: ["", ""],
    dtype=lambda in_dtypes, args: [np.dtype(np.uint8), np.dtype(np.int32)],
    check=_check,
    examples=(
        Example(args={"files": _example_files(), "labels": [3, 4]}),
        Example(args={"files": _example_files(), "shard_id": 2, "num_shards": 2},
                raises=ArgumentError, match="'shard_id' must be less than num_shards=2"),
    ),
))
