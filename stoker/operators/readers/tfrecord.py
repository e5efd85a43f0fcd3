"""``fn.readers.tfrecord``: the features of ``tf.train.Example`` records in TFRecord files,
as DALI 2.4 reads them, returned as a dict by feature name (DALI's wrapper does the same).

The records of all files form one dataset, file after file, sharded and shuffled by
record (``readers/base.py``); ``shuffle_after_epoch`` permutes whole files. Feature rules
are in ``stoker/readers/tfexample.py``, index files and gzip in
``stoker/readers/tfrecord.py``.

Where stoker differs from DALI 2.4 on purpose:

* ``index_path`` may be left out, and an index file that does not exist is not an error:
  the files are indexed at build() by walking their records (a warning says how long it
  took and how to save the time: ``stoker tfrecord-index``).
* gzip-compressed TFRecord files are read (decompressed once, into a temporary file).
* A record that a FixedLenFeature lacks gives the feature's ``default_value``; a record
  with fewer values than the shape, or values of another type, is an error naming the
  file and the record's offset (DALI gives uninitialised memory in both cases).
* A malformed index file is an error naming the line (DALI ignores the rest of it).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, ArgumentTypeError, IndexWarning
from stoker.graph.node import OpNode
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers.order import SampleIds
from stoker.readers.samples import path as _sample
from stoker.readers.tfexample import ExampleDecoder
from stoker.readers.tfrecord import TFRecordSet, open_files
from stoker.tfrecord import Feature, string

_FN = "fn.readers.tfrecord"


class TFRecordReader(IndexedReader):
    def __init__(self, op: OpNode, pipeline: Any):
        self.decoder = ExampleDecoder(op.args["features"])
        self.files: TFRecordSet | None = None
        super().__init__(op, pipeline)

    def _build_index(self) -> Any:
        a = self.args
        start = time.perf_counter()
        files = open_files(a["path"], a.get("index_path"), not a["dont_use_mmap"], self._who())
        if files.walked:
            shown = ", ".join(repr(p) for p in files.walked[:3])
            more = f" and {len(files.walked) - 3} more" if len(files.walked) > 3 else ""
            self.warn(f"no index file for {shown}{more}; stoker indexed {len(files.walked)} "
                      f"file(s) by reading them ({time.perf_counter() - start:.2f} s). `stoker "
                      "tfrecord-index FILE INDEX` writes DALI's index files once (DALI "
                      "requires them)", IndexWarning)
        self.files = files
        return files.index

    def _file_groups(self) -> np.ndarray:
        return self._prepare().file_groups()

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        from stoker.kernels.cpu.compiled import loops

        files = self.files
        index, store = files.index, files.store
        rows = ids.index
        n = len(rows)
        f, offsets, sizes = index.file[rows], index.offset[rows], index.size[rows]
        failures: dict[int, str] = {}
        if files.bad:
            for j, r in enumerate(rows.tolist()):
                if r in files.bad:
                    failures[j] = files.bad[r]
        outside = store.outside(f, offsets, sizes)
        for j in np.flatnonzero(outside).tolist():
            failures.setdefault(j, store.outside_message(int(f[j]), int(offsets[j]),
                                                         int(sizes[j])))
        ok = np.ones(n, bool)
        ok[list(failures)] = False
        good = np.flatnonzero(ok)
        tf = loops("readers.tfrecord_loops")
        lengths = np.full(n, -1, np.int64)
        segments = []
        for buf, seg_rows, starts in store.segments(f[good], offsets[good], sizes[good]):
            batch_rows = good[seg_rows]
            seg_lengths = np.empty(len(batch_rows), np.int64)
            tf.frame_lengths(buf, starts, sizes[batch_rows], seg_lengths)
            lengths[batch_rows] = seg_lengths
            fine = seg_lengths >= 0
            for k in np.flatnonzero(~fine).tolist():
                j, at = int(batch_rows[k]), int(starts[k])
                claimed = int.from_bytes(buf[at:at + 8].tobytes(), "little")
                failures[j] = (f"the record header claims a payload of {claimed} bytes, but "
                               f"the index gives the record {int(sizes[j]) - 16} (a wrong or "
                               "stale index, or a damaged file)")
            segments.append((buf, batch_rows[fine], starts[fine] + 12))
        parsed = self.decoder.locate(n, segments, lengths, failures)
        outputs = self.decoder.outputs(parsed, failures)
        names = index.where(rows)
        if failures:
            outputs = self._fail(outputs, failures, names, bctx)
        return outputs, names

    def _fail(self, outputs: list, failures: dict[int, str], names: list[str],
              bctx: Any) -> list:
        """Raises for the first failed record, or (on_error="skip") reports each and puts
        FAILED in its place."""
        from stoker.executor.context import FAILED

        if bctx.failures is None:
            j = min(failures)
            raise self.sample_error(f"TFRecord record {names[j]}: {failures[j]}", names[j])
        out = []
        for value in outputs:
            value = list(value)
            for j in failures:
                value[j] = FAILED
            out.append(value)
        for j, reason in failures.items():
            bctx.fail(j, str(self.sample_error(f"TFRecord record {names[j]}: {reason}",
                                               names[j])))
        return out

    def close(self) -> None:
        if self.files is not None:
            self.files.store.close()


def _features(args: dict) -> dict[str, Feature]:
    features = args.get("features")
    if not isinstance(features, dict) or not features:
        raise ArgumentTypeError(f"{_FN}: argument 'features' must be a non-empty dict of "
                                "feature name -> stoker.tfrecord.FixedLenFeature / "
                                f"VarLenFeature, got {features!r}")
    for name, f in features.items():
        if not isinstance(name, str):
            raise ArgumentTypeError(f"{_FN}: feature names must be strings, got {name!r}")
        if not isinstance(f, Feature):
            raise ArgumentTypeError(
                f"{_FN}: expected a stoker.tfrecord Feature for {name!r}, got "
                f"{type(f).__name__}; use stoker.tfrecord.FixedLenFeature or VarLenFeature "
                "(DALI's words: Expected `nvidia.dali.tfrecord.Feature`)")
    return features


def _check(args: dict) -> None:
    features = _features(args)
    for name, f in features.items():
        if f.dtype == string and (not f.fixed or f.volume != 1):
            raise ArgumentError(f"{_FN}: feature {name!r} is {f!r}; a string feature must be "
                                "a FixedLenFeature of one value, [] or [1] (DALI: Tensors "
                                "of strings are not supported)")
    try:
        ExampleDecoder(features)
    except TypeError as e:
        raise ArgumentTypeError(f"{_FN}: {e}") from None
    paths, index_paths = args.get("path"), args.get("index_path")
    if not paths:
        raise ArgumentError(f"{_FN}: argument 'path' must name at least one TFRecord file")
    if index_paths is not None and len(index_paths) != len(paths):
        raise ArgumentError(f"{_FN}: argument 'index_path' has {len(index_paths)} entries "
                            f"for {len(paths)} files in 'path'; give one index per file (or "
                            "none: stoker then indexes the files itself)")
    if args.get("skip_cached_images"):
        raise ArgumentError(f"{_FN}: 'skip_cached_images' is not supported (DALI: "
                            "TFRecordReader doesn't support `skip_cached_images` option)")
    check_reader_args(_FN, args, random_with_epoch_shuffle=True)


def _num_outputs(args: dict) -> int:
    return len(args["features"])


def _dtypes(in_dtypes: list, args: dict) -> list[np.dtype]:
    return [f.numpy_dtype for f in args["features"].values()]


def _as_dict(out: Any) -> dict:
    outs = out if isinstance(out, list) else [out]
    return dict(zip(outs[0].op.args["features"], outs, strict=True))


def _example_features() -> dict[str, Feature]:
    from stoker import tfrecord as tfrec

    return {"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0)}


SCHEMA = register(OpSchema(
    name="readers.tfrecord",
    doc="Reads tf.train.Example records from TFRecord files and returns a dict of one "
        "output per feature (stoker.tfrecord.FixedLenFeature / VarLenFeature): int64, "
        "float32, or the bytes of a string feature (uint8, 1-D).",
    args=(
        Arg("path", "strs", REQUIRED, "TFRecord files (gzip-compressed ones too); their "
            "records are read as one dataset, file after file."),
        Arg("index_path", "strs", None, "One DALI index file per TFRecord file (stoker "
            "tfrecord-index writes them); without one, the file is indexed at build()."),
        Arg("features", "any", REQUIRED, "Dict of feature name -> FixedLenFeature or "
            "VarLenFeature (stoker.tfrecord); the outputs come in its order."),
        Arg("use_o_direct", "bool", False, "Accepted for portability (needs "
            "dont_use_mmap=True, as in DALI)."),
        *reader_args(),
    ),
    num_outputs=_num_outputs,
    stage="source",
    instance=TFRecordReader,
    random=False,
    layout=lambda in_layouts, args: [""] * len(args["features"]),
    dtype=_dtypes,
    check=_check,
    positional=("path", "index_path", "features"),
    result=_as_dict,
    examples=(
        Example(args={"path": [_sample("mini.tfrecord")],
                      "index_path": [_sample("mini.tfrecord.idx")],
                      "features": _example_features()}),
        Example(args={"path": [_sample("mini.tfrecord")], "features": _example_features(),
                      "random_shuffle": True, "seed": 3}),
        Example(args={"path": [_sample("mini.tfrecord")], "features": {"x": 3}},
                raises=ArgumentTypeError,
                match="expected a stoker.tfrecord Feature for 'x'"),
    ),
))
