"""``fn.readers.mxnet``: MXNet RecordIO files (``.rec``), as DALI 2.4 reads them: the
image bytes (uint8, 1-D) and the float32 label(s) of each record.

The records of all files form one dataset (``readers/base.py`` shards, shuffles and
checkpoints it; ``shuffle_after_epoch`` permutes whole files); the format and the index
are in ``stoker/readers/recordio.py``. Images are views of the mapped files (split records
are joined into new arrays).

Where stoker differs from DALI 2.4 on purpose: ``index_path`` may be left out (or name a
file that does not exist): the files are then indexed at build() by walking their records,
with a warning (``stoker recordio-index`` writes the index once). A malformed index line
is an error naming the line (DALI stops reading the index there).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, IndexWarning
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers.index import DatasetError
from stoker.readers.order import SampleIds
from stoker.readers.recordio import decode, index_from_offsets, open_store, parse_index, walk
from stoker.readers.records import RecordIndex, RecordStore
from stoker.readers.samples import path as _sample

_FN = "fn.readers.mxnet"


class MXNetReader(IndexedReader):
    def __init__(self, op: Any, pipeline: Any):
        self.store: RecordStore | None = None
        self.bad: dict[int, str] = {}
        super().__init__(op, pipeline)

    def _build_index(self) -> RecordIndex:
        a, who = self.args, self._who()
        self.store = store = open_store(a["path"], not a["dont_use_mmap"], who)
        index_path = (a.get("index_path") or [None])[0]
        if index_path is not None and os.path.exists(index_path):
            try:
                with open(index_path, "rb") as f:
                    offsets = parse_index(f.read(), index_path)
            except OSError as e:
                raise DatasetError(f"{who}: cannot read index file {index_path!r}: "
                                   f"{e.strerror}") from None
            except DatasetError as e:
                raise DatasetError(f"{who}: {e}") from None
            return index_from_offsets(store, offsets, who)
        start = time.perf_counter()
        index, self.bad = walk(store, who)
        self.warn(f"no index file; stoker indexed {len(store.paths)} .rec file(s) by reading "
                  f"them ({time.perf_counter() - start:.2f} s). `stoker recordio-index "
                  "FILE.rec FILE.idx` writes the index once (DALI requires it)", IndexWarning)
        return index

    def _file_groups(self) -> np.ndarray:
        return self._prepare().file_groups()

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        from stoker.executor.context import FAILED

        index, rows = self.index, ids.index
        names = index.where(rows)
        images, labels, failures = decode(self.store, index, rows)
        for j, r in enumerate(rows.tolist()):
            if r in self.bad:
                failures[j] = self.bad[r]
        if failures:
            if bctx.failures is None:
                j = min(failures)
                raise self.sample_error(f"RecordIO record {names[j]}: {failures[j]}",
                                        names[j])
            for j, why in failures.items():
                bctx.fail(j, str(self.sample_error(f"RecordIO record {names[j]}: {why}",
                                                   names[j])))
                images[j] = labels[j] = FAILED
        return [images, labels], names

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def _check(args: dict) -> None:
    if not args["path"]:
        raise ArgumentError(f"{_FN}: argument 'path' must name at least one .rec file")
    index_path = args.get("index_path")
    if index_path is not None and len(index_path) != 1:
        raise ArgumentError(f"{_FN}: argument 'index_path' takes one index file for all the "
                            f"files in 'path', got {len(index_path)} (DALI: RecordIOReader "
                            "supports only a single index file)")
    check_reader_args(_FN, args, random_with_epoch_shuffle=True)


SCHEMA = register(OpSchema(
    name="readers.mxnet",
    doc="Reads MXNet RecordIO files: the image bytes (uint8, 1-D) and the label(s) "
        "(float32, 1-D) of each record.",
    args=(
        Arg("path", "strs", REQUIRED, "The .rec files, read as one dataset, file after file."),
        Arg("index_path", "strs", None, "One index file (key and offset per line, offsets "
            "across the .rec files laid end to end) for all the files; without it they "
            "are indexed at build()."),
        *reader_args(),
    ),
    num_outputs=2,
    stage="source",
    instance=MXNetReader,
    random=False,
    layout=lambda in_layouts, args: ["", ""],
    dtype=lambda in_dtypes, args: [np.dtype(np.uint8), np.dtype(np.float32)],
    check=_check,
    examples=(
        Example(args={"path": [_sample("mini.rec")], "index_path": [_sample("mini.idx")]}),
        Example(args={"path": [_sample("mini.rec")], "random_shuffle": True, "seed": 4}),
        Example(args={"path": [_sample("mini.rec")], "index_path": ["a.idx", "b.idx"]},
                raises=ArgumentError, match="takes one index file for all the files"),
    ),
))
