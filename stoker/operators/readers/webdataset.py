"""``fn.readers.webdataset``: samples of webdataset tar shards, one output per ``ext``
entry, as DALI 2.4 reads them.

Each output is the raw bytes of the sample's first member whose extension is in that
output's set (``"jpg;jpeg"``), 1-D, reinterpreted as that output's ``dtypes`` entry
(uint8 by default); nothing is decoded. The samples of all shards form one dataset, shard
after shard (``readers/base.py`` shards, shuffles and checkpoints it; ``shuffle_after_epoch``
permutes whole shards). Shards are indexed by walking their headers when no index file
is given (GNU, PAX and ustar archives), as DALI does.

Where stoker differs from DALI 2.4 on purpose:

* A member whose base name starts with a dot belongs to no sample, with or without an
  index (DALI's wds2idx skips it, but DALI's own walk makes it a sample of its own).
* source_info is one per sample, the first output's member (or the first member found),
  for every output (DALI gives each output its own member's, and "" for a missing one).
* A shard with no sample is an error (DALI makes one empty sample of it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers.index import DatasetError
from stoker.readers.order import SampleIds
from stoker.readers.records import RecordStore
from stoker.readers.samples import path as _sample
from stoker.readers.webdataset import Members, parse_index, pick, walk

_FN = "fn.readers.webdataset"
BEHAVIORS = ("", "empty", "skip", "error")


@dataclass
class WdsIndex:
    """Samples of all shards: the shard, each output's member offset and size (-1: the
    sample has none), and the member whose name source_info shows."""

    paths: list[str]
    members: list[Members]
    file: np.ndarray
    offset: np.ndarray  # (samples, outputs)
    size: np.ndarray
    info_member: np.ndarray

    def __len__(self) -> int:
        return len(self.file)

    def file_groups(self) -> np.ndarray:
        return np.bincount(self.file, minlength=len(self.paths))

    def where(self, rows: np.ndarray) -> list[str]:
        out = []
        for f, m in zip(self.file[rows].tolist(), self.info_member[rows].tolist(),
                        strict=True):
            if m < 0:
                out.append(self.paths[f])
                continue
            members = self.members[f]
            out.append(f"{self.paths[f]}:{int(members.offset[m])}:{members.name(m)}")
        return out


class WebdatasetReader(IndexedReader):
    def __init__(self, op: Any, pipeline: Any):
        self.store: RecordStore | None = None
        dtypes = op.args.get("dtypes") or [types.UINT8] * len(op.args["ext"])
        self.dtypes = [types.to_numpy(d) for d in dtypes]
        super().__init__(op, pipeline)

    def _build_index(self) -> WdsIndex:
        a, who = self.args, self._who()
        paths, index_paths = list(a["paths"]), a.get("index_paths")
        self.store = store = RecordStore(paths, use_mmap=not a["dont_use_mmap"])
        behavior = a["missing_component_behavior"].lower()
        files, offsets, sizes, infos, members = [], [], [], [], []
        doubles = 0
        for f, path in enumerate(paths):
            if not os.path.isfile(path):
                raise DatasetError(f"{who}: tar file {path!r} does not exist")
            if index_paths is not None:
                try:
                    with open(index_paths[f], "rb") as fh:
                        m = parse_index(fh.read(), index_paths[f])
                except OSError as e:
                    raise DatasetError(f"{who}: cannot read index file {index_paths[f]!r}: "
                                       f"{e.strerror}") from None
                except DatasetError as e:
                    raise DatasetError(f"{who}: {e}") from None
                outside = m.offset >= store.file_size(f)
                if outside.any():
                    k = int(np.argmax(outside))
                    raise DatasetError(f"{who}: index file {index_paths[f]!r}: offset "
                                       f"{int(m.offset[k])} is outside {path!r} "
                                       f"({store.file_size(f)} bytes)")
            else:
                try:
                    m = walk(store.mapped(f), path)
                except DatasetError as e:
                    raise DatasetError(f"{who}: {e}") from None
            if m.samples == 0:
                raise DatasetError(f"{who}: tar file {path!r} holds no sample (no regular "
                                   "file with a name and an extension)")
            out = pick(m, a["ext"], a["case_sensitive_extensions"])
            doubles += out.doubles
            comp = out.component
            keep = np.ones(m.samples, bool)
            missing = (comp < 0).any(axis=1)
            if missing.any() and behavior == "error":
                s = int(np.argmax(missing))
                first = int(np.flatnonzero(m.sample == s)[0])
                raise DatasetError(f"{who}: the sample of {m.name(first)!r} (offset "
                                   f"{int(m.offset[first])}) in {path!r} has no member for "
                                   f"output(s) {np.flatnonzero(comp[s] < 0).tolist()} "
                                   f"(ext={list(a['ext'])}); missing_component_behavior="
                                   "'error' (DALI: Underful sample detected)")
            if behavior == "skip":
                keep = ~missing
            comp = comp[keep]
            safe = np.maximum(comp, 0)
            offsets.append(np.where(comp >= 0, m.offset[safe], -1))
            sizes.append(np.where(comp >= 0, m.size[safe], -1))
            first_member = np.where(comp >= 0, comp, np.iinfo(np.int64).max).min(axis=1)
            infos.append(np.where(comp[:, 0] >= 0, comp[:, 0],
                                  np.where(first_member == np.iinfo(np.int64).max, -1,
                                           first_member)))
            files.append(np.full(len(comp), f, np.int32))
            members.append(m)
        if doubles:
            self.warn(f"{doubles} sample(s) have several members for one output; each "
                      "output takes the first (DALI: Multiple components matching output)",
                      UserWarning)
        index = WdsIndex(paths, members, np.concatenate(files), np.concatenate(offsets),
                         np.concatenate(sizes), np.concatenate(infos))
        self._check_dtypes(index)
        if len(index) == 0:
            raise DatasetError(f"{who}: no sample has every output's member "
                               "(missing_component_behavior='skip' dropped them all)")
        return index

    def _check_dtypes(self, index: WdsIndex) -> None:
        """As DALI, at build: every member's size must be a whole number of its output's
        elements."""
        for o, dtype in enumerate(self.dtypes):
            size = index.size[:, o]
            bad = (size > 0) & (size % dtype.itemsize != 0)
            if bad.any():
                s = int(np.argmax(bad))
                where = index.where(np.array([s]))[0]
                raise DatasetError(f"{self._who()}: output {o} has dtype {dtype}, but the "
                                   f"member for sample {where!r} has {int(size[s])} bytes, "
                                   f"not a multiple of {dtype.itemsize}")

    def _file_groups(self) -> np.ndarray:
        return self._prepare().file_groups()

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        from stoker.executor.context import FAILED

        index, store = self.index, self.store
        rows = ids.index
        files = index.file[rows]
        names = index.where(rows)
        outputs, failed = [], {}
        for o, dtype in enumerate(self.dtypes):
            offsets, sizes = index.offset[rows, o], index.size[rows, o]
            present = offsets >= 0
            out: list = [np.zeros(0, dtype)] * len(rows)
            have = np.flatnonzero(present)
            outside = store.outside(files[have], offsets[have], sizes[have])
            for k in np.flatnonzero(outside).tolist():
                j = int(have[k])
                failed.setdefault(j, f"the member at offset {int(offsets[j])} "
                                     f"({int(sizes[j])} bytes) runs past the end of "
                                     f"{index.paths[int(files[j])]!r} (is the tar truncated, "
                                     "or the index stale?)")
            have = have[~outside]
            views = store.views(files[have], offsets[have], sizes[have])
            if dtype.itemsize == 1 and dtype == np.uint8:
                for j, v in zip(have.tolist(), views, strict=True):
                    out[j] = v
            else:
                for j, v in zip(have.tolist(), views, strict=True):
                    out[j] = v.view(dtype)
            outputs.append(out)
        if failed:
            if bctx.failures is None:
                j = min(failed)
                raise self.sample_error(f"webdataset sample {names[j]}: {failed[j]}", names[j])
            for j, reason in failed.items():
                bctx.fail(j, str(self.sample_error(f"webdataset sample {names[j]}: {reason}",
                                                   names[j])))
                for out in outputs:
                    out[j] = FAILED
        return outputs, names

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def _check(args: dict) -> None:
    ext, paths = args["ext"], args["paths"]
    if not paths:
        raise ArgumentError(f"{_FN}: argument 'paths' must name at least one tar file")
    if not ext:
        raise ArgumentError(f"{_FN}: argument 'ext' needs one entry per output")
    index_paths, dtypes = args.get("index_paths"), args.get("dtypes")
    if index_paths is not None and len(index_paths) != len(paths):
        raise ArgumentError(f"{_FN}: argument 'index_paths' has {len(index_paths)} entries "
                            f"for {len(paths)} tar files; give one per file, or none")
    if dtypes is not None and len(dtypes) != len(ext):
        raise ArgumentError(f"{_FN}: argument 'dtypes' has {len(dtypes)} entries for "
                            f"{len(ext)} outputs (ext); give one per output")
    behavior = args["missing_component_behavior"]
    if behavior.lower() not in BEHAVIORS:
        raise ArgumentError(f"{_FN}: argument 'missing_component_behavior' must be one of "
                            f"'empty' (or ''), 'skip', 'error', got {behavior!r}")
    check_reader_args(_FN, args, random_with_epoch_shuffle=True)


def _dtypes(in_dtypes: list, args: dict) -> list[np.dtype]:
    dtypes = args.get("dtypes") or [types.UINT8] * len(args["ext"])
    return [types.to_numpy(d) for d in dtypes]


SCHEMA = register(OpSchema(
    name="readers.webdataset",
    doc="Reads webdataset tar shards: one output per 'ext' entry, each sample's member "
        "with one of that entry's extensions (';'-separated), as raw 1-D bytes of the "
        "output's dtype.",
    args=(
        Arg("paths", "strs", REQUIRED, "The tar shards; their samples are read as one "
            "dataset, shard after shard."),
        Arg("ext", "strs", REQUIRED, "One entry per output: the extensions that feed it, "
            "separated by ';' (\"jpg;jpeg\")."),
        Arg("index_paths", "strs", None, "One DALI index file (v1.1 or v1.2, wds2idx) per "
            "shard; without them the shards' headers are walked at build()."),
        Arg("dtypes", "dtypes", None, "One data type per output (default: UINT8); a member's "
            "size must be a multiple of its type's size."),
        Arg("missing_component_behavior", "str", "", "A sample without a member for some "
            "output: '' or 'empty' gives an empty array, 'skip' drops the sample, 'error' "
            "fails at build()."),
        Arg("case_sensitive_extensions", "bool", True, "Match extensions case-sensitively."),
        *reader_args(),
    ),
    num_outputs=lambda args: len(args["ext"]),
    stage="source",
    instance=WebdatasetReader,
    random=False,
    layout=lambda in_layouts, args: [""] * len(args["ext"]),
    dtype=_dtypes,
    check=_check,
    examples=(
        Example(args={"paths": [_sample("mini.tar")], "ext": ["jpg;jpeg", "cls"]}),
        Example(args={"paths": [_sample("mini.tar")], "index_paths": [_sample("mini.tar.idx")],
                      "ext": ["cls", "f4"], "dtypes": [types.UINT8, types.FLOAT],
                      "random_shuffle": True, "seed": 1}),
        Example(args={"paths": [_sample("mini.tar")], "ext": ["jpg"],
                      "missing_component_behavior": "drop"}, raises=ArgumentError,
                match="'missing_component_behavior' must be one of"),
    ),
))
