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

import threading
import weakref
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, SampleError
from stoker.graph.node import OpNode
from stoker.operators.registry import register
from stoker.operators.schema import Arg, Example, OpSchema
from stoker.readers.files import FileBatchReader
from stoker.readers.index import (
    DEFAULT_FILE_FILTERS,
    SampleIndex,
    index_from_file_list,
    index_from_file_root,
    index_from_files,
)
from stoker.readers.order import DATASET_SEED, Cursor, ReadOrder
from stoker.readers.sharding import check_shards

_FN = "fn.readers.file"


class FileReader:
    """The source instance: the index, the read order and the cursor into it."""

    def __init__(self, op: OpNode, pipeline: Any):
        self.op = op
        self.args = op.args
        self._pipeline = weakref.ref(pipeline) if pipeline is not None else None
        self.batch_size = max(1, int(getattr(pipeline, "batch_size", 1) or 1))
        self._reader = FileBatchReader(getattr(pipeline, "num_threads", 1) or 1)
        self.index: SampleIndex | None = None
        self.cursor: Cursor | None = None
        # The producer thread and a caller of reader_meta() may both set up a lazy reader.
        self._lock = threading.Lock()
        if not self.args.get("lazy_init", False):
            self._prepare()

    # -- setting up ------------------------------------------------------------------------
    def _who(self) -> str:
        return self.op.describe()

    def _prepare(self) -> SampleIndex:
        """Builds the index (at build(), or on first use with lazy_init)."""
        with self._lock:
            if self.index is None:
                self.index = self._build_index()
        return self.index

    def _build_index(self) -> SampleIndex:
        a, who = self.args, self._who()
        if a.get("file_list") is not None:
            index = index_from_file_list(a["file_list"], a.get("file_root"), who)
        elif a.get("files") is not None:
            index = index_from_files(a["files"], a.get("labels"), a.get("file_root"), who)
        else:
            index = index_from_file_root(a["file_root"], a["file_filters"],
                                         a.get("dir_filters"),
                                         a["case_sensitive_filter"], who)
        check_shards(len(index), a["num_shards"], a["shard_id"], who)
        return index

    def _operator_seed(self) -> int:
        seed = self.args.get("seed", -1)
        if seed is not None and seed >= 0:
            return int(seed)
        # Derived from the pipeline's seed like every operator's (the compiled plan holds
        # it; it does not exist yet while build() creates this instance).
        pipe = self._pipeline() if self._pipeline is not None else None
        plan = getattr(pipe, "_plan", None)
        if plan is not None and self.op in plan.seeds:
            return int(plan.seeds[self.op])
        return 0

    def order(self) -> ReadOrder:
        a = self.args
        shuffle = ("shard" if a["random_shuffle"] else
                   "dataset" if a["shuffle_after_epoch"] else "none")
        dataset_seed = a.get("shuffle_after_epoch_seed")
        return ReadOrder(
            size=len(self._prepare()), num_shards=a["num_shards"], shard_id=a["shard_id"],
            stick_to_shard=a["stick_to_shard"], pad_last_batch=a["pad_last_batch"],
            batch_size=self.batch_size, shuffle=shuffle,
            seed=self._operator_seed() if shuffle == "shard" else 0,
            dataset_seed=DATASET_SEED if dataset_seed is None else int(dataset_seed))

    def _cursor(self) -> Cursor:
        if self.cursor is None:
            order = self.order()
            with self._lock:
                if self.cursor is None:
                    self.cursor = Cursor(order)
        return self.cursor

    # -- the source protocol ---------------------------------------------------------------
    # on_error="skip" may ask for single samples to replace failed ones.
    can_top_up = True

    def next_batch(self, bctx: Any) -> tuple[list, list[str]]:
        index = self._prepare()
        cursor = self._cursor()
        count = self.batch_count(bctx)
        ids = cursor.take(count)
        paths = index.paths
        names = [paths.name(i) for i in ids.index.tolist()]
        joined = paths.joined(names)
        ahead: list[str] = []
        if bctx.failures is None and self._reader.uses_pool(count):
            # The next batch's files, read while this one is decoded.
            ahead = paths.joined([paths.name(i) for i in cursor.peek(count).index.tolist()])
        try:
            data = self._reader.read(joined, ahead)
        except OSError as e:
            if bctx.failures is None:
                raise self._read_error(e) from e
            data = self._read_each(joined, bctx)
        labels = index.labels[ids.index].reshape(-1, 1)
        return [data, labels], names

    def batch_count(self, bctx: Any) -> int:
        """How many samples this batch takes from the cursor (readers sharing the reader
        contract call it too)."""
        cursor = self._cursor()
        count = bctx.batch_size
        if bctx.failures is not None:
            # on_error="skip" never tops a batch up from the next reader epoch, and where
            # epochs are cut to whole batches (an iterator's PARTIAL window, padding), a
            # batch that replacements shifted ends with its epoch: each epoch still holds
            # every good sample once. The batch comes out short instead.
            order, left = cursor.order, cursor.order.epoch_length(cursor.epoch) - cursor.position
            if bctx.topup:
                count = 0 if cursor.position == 0 else min(count, left)
            elif order.window is not None or order.pad_last_batch:
                count = min(count, left)
        return count

    def _read_error(self, e: OSError) -> SampleError:
        path = e.filename or "?"
        return SampleError(f"{self._who()}: cannot read file {path!r}: {e.strerror or e}",
                           op=_FN, source=str(path), where=self.op.where)

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

    def reset(self) -> None:
        """DALI's readers ignore pipe.reset(): the stream goes on (measured)."""

    def align_epochs(self, window: int | None) -> None:
        """Called by an iterator (PARTIAL/DROP) before the first batch: every reader epoch
        spans ``window`` samples, so epochs are exactly-once across shards (order.py)."""
        cursor = self._cursor()
        if cursor.order.window == window:  # already so (a reader restored from a checkpoint)
            return
        if cursor.position or cursor.epoch:
            raise RuntimeError(f"{self._who()}: an iterator must be created before the "
                               "pipeline's first run() to align the reader's epochs")
        cursor.set_window(window)

    def reader_meta(self) -> dict:
        return self._cursor().order.meta()

    def state(self) -> dict[str, Any]:
        """The reader's position: the next sample it will read is ``position`` in reader
        epoch ``epoch``. Batches made ahead count as read (the pipeline's checkpoint
        tracker records it at each batch's start). A checkpoint also keeps the dataset's
        size (to refuse another dataset) and the epoch window an iterator set
        (``align_epochs``)."""
        order = self._cursor().order
        return {**self._cursor().state(), "size": order.size, "window": order.window}

    def restore(self, state: dict[str, Any]) -> None:
        cursor = self._cursor()
        size = state.get("size", cursor.order.size)
        if size != cursor.order.size:
            raise ValueError(f"the checkpoint's reader read {size} samples, this one "
                             f"({self._who()}) reads {cursor.order.size}")
        window = state.get("window")
        if window != cursor.order.window:
            cursor.set_window(window)
        cursor.restore(state)

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
    if not args["shard_id"] < args["num_shards"]:
        raise ArgumentError(f"{_FN}: argument 'shard_id' must be less than num_shards="
                            f"{args['num_shards']}, got {args['shard_id']}")
    if args["random_shuffle"] and args["shuffle_after_epoch"]:
        raise ArgumentError(f"{_FN}: 'random_shuffle' and 'shuffle_after_epoch' cannot both "
                            "be True")
    if args["stick_to_shard"] and args["shuffle_after_epoch"]:
        raise ArgumentError(f"{_FN}: 'stick_to_shard' and 'shuffle_after_epoch' cannot both "
                            "be True (shuffle_after_epoch already keeps each reader on its "
                            "shard)")


def _example_files() -> list[str]:
    return [__file__, __file__.replace("readers.py", "schema.py")]


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
        Arg("random_shuffle", "bool", False, "Deliver each epoch's shard in a random order: "
            "an exact permutation per epoch, reproducible from 'seed'."),
        Arg("initial_fill", "int", 1024, "Accepted for portability: DALI's shuffle buffer "
            "size; stoker's shuffle is an exact permutation and needs no buffer.",
            range=(1, None)),
        Arg("shuffle_after_epoch", "bool", False, "Permute the whole dataset every epoch "
            "(the same way on every shard) and read this shard's slice of it."),
        Arg("shuffle_after_epoch_seed", "int", None, "Seed of shuffle_after_epoch's "
            "permutations; shared by all shards (default: a fixed constant)."),
        Arg("shard_id", "int", 0, "Which shard this reader reads.", range=(0, None)),
        Arg("num_shards", "int", 1, "Number of shards the dataset is split into.",
            range=(1, None)),
        Arg("stick_to_shard", "bool", False, "Read the same shard every epoch instead of "
            "moving on to the next one."),
        Arg("pad_last_batch", "bool", False, "Repeat the shard's last sample so every shard "
            "counts the same and no batch mixes two epochs."),
        Arg("lazy_init", "bool", False, "List the dataset on first use instead of at "
            "build()."),
        Arg("read_ahead", "bool", False, "Accepted for portability."),
        Arg("dont_use_mmap", "bool", False, "Accepted for portability: stoker always reads "
            "into memory."),
        Arg("prefetch_queue_depth", "int", 1, "Accepted for portability.", range=(1, None)),
        Arg("skip_cached_images", "bool", False, "Accepted for portability."),
        Arg("tensor_init_bytes", "int", 1048576, "Accepted for portability."),
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
