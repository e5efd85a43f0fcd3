"""The source instance every reader shares: index, read order, cursor, checkpoints.

A reader is an index of ``n`` samples (files, records in container files, database
entries) plus a way to read a batch of them. Everything else is the same for all readers
and lives here once: sharding (``shard_id``/``num_shards``/``stick_to_shard``/
``pad_last_batch``), the exact-permutation ``random_shuffle``, ``shuffle_after_epoch``
(of samples for file readers, of whole container files for container readers, as DALI
does), ``lazy_init``, ``reader_meta``, the epoch window an iterator sets for exactly-once
epochs, checkpoint state, and how many samples a batch takes under ``on_error="skip"``.

A reader subclasses ``IndexedReader`` and gives ``_build_index`` (a sized index),
``_read`` (the outputs and source_info of the samples ``ids``) and, for container
readers, ``_file_groups`` (records per container file, in dataset order).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from stoker.errors import SampleError
from stoker.graph.node import OpNode
from stoker.readers.order import DATASET_SEED, Cursor, ReadOrder, SampleIds
from stoker.readers.sharding import check_shards

_STOKER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


class IndexedReader:
    """A reader's source instance (one per pipeline operator)."""

    # on_error="skip" may ask for single samples to replace failed ones.
    can_top_up = True

    def __init__(self, op: OpNode, pipeline: Any):
        self.op = op
        self.args = op.args
        self._pipeline = weakref.ref(pipeline) if pipeline is not None else None
        self.batch_size = max(1, int(getattr(pipeline, "batch_size", 1) or 1))
        self.num_threads = max(1, int(getattr(pipeline, "num_threads", 1) or 1))
        self.index: Any = None
        self.cursor: Cursor | None = None
        # The producer thread and a caller of reader_meta() may both set up a lazy reader.
        self._lock = threading.Lock()
        if not self.args.get("lazy_init", False):
            self._prepare()

    # -- what a reader gives -------------------------------------------------------------
    def _build_index(self) -> Any:
        """The dataset's index (anything with ``len``); DatasetError when unusable."""
        raise NotImplementedError

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str] | None]:
        """The outputs (one batch value each: a list of arrays or an array with a leading
        sample axis) and the source_info of the samples ``ids.index``. Under
        ``on_error="skip"`` (``bctx.failures`` is not None), a sample that cannot be read
        is reported with ``bctx.fail(row, reason)`` and given as ``FAILED`` (or any value
        in an array output: the row is dropped)."""
        raise NotImplementedError

    def _file_groups(self) -> np.ndarray | None:
        """Samples per container file, in dataset order: ``shuffle_after_epoch`` then
        permutes whole files (DALI's container readers); None permutes single samples."""
        return None

    # -- setting up ----------------------------------------------------------------------
    def _who(self) -> str:
        return self.op.describe()

    def _prepare(self) -> Any:
        """Builds the index (at build(), or on first use with lazy_init)."""
        with self._lock:
            if self.index is None:
                index = self._build_index()
                check_shards(len(index), self.args["num_shards"], self.args["shard_id"],
                             self._who())
                self.index = index
        return self.index

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
        shuffle = {(False, False): "none", (True, False): "shard", (False, True): "dataset",
                   (True, True): "both"}[bool(a.get("random_shuffle")),
                                         bool(a.get("shuffle_after_epoch"))]
        dataset_seed = a.get("shuffle_after_epoch_seed")
        size = len(self._prepare())
        groups = self._file_groups() if shuffle in ("dataset", "both") else None
        return ReadOrder(
            size=size, num_shards=a["num_shards"], shard_id=a["shard_id"],
            stick_to_shard=a.get("stick_to_shard", False),
            pad_last_batch=a.get("pad_last_batch", False), batch_size=self.batch_size,
            shuffle=shuffle, seed=self._operator_seed() if shuffle in ("shard", "both") else 0,
            dataset_seed=DATASET_SEED if dataset_seed is None else int(dataset_seed),
            groups=None if groups is None else tuple(int(g) for g in groups))

    def _cursor(self) -> Cursor:
        if self.cursor is None:
            order = self.order()
            with self._lock:
                if self.cursor is None:
                    self.cursor = Cursor(order)
        return self.cursor

    # -- the source protocol -------------------------------------------------------------
    def next_batch(self, bctx: Any) -> tuple[list, list[str] | None]:
        self._prepare()
        return self._read(self._cursor().take(self.batch_count(bctx)), bctx)

    def batch_count(self, bctx: Any) -> int:
        """How many samples this batch takes from the cursor."""
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

    def warn(self, message: str, category: type[Warning]) -> None:
        """A warning shown at the user's line that led here (build(), often), not inside
        stoker."""
        frame, level = sys._getframe(1), 2
        while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
                _STOKER_DIR):
            frame, level = frame.f_back, level + 1
        warnings.warn(f"{self._who()}: {message}", category, stacklevel=level)

    def sample_error(self, message: str, source: str) -> SampleError:
        """A run-time error about one sample, naming the operator and ``source``."""
        return SampleError(f"{self._who()}: {message}", op=self.op.schema.fn_name,
                           source=source, where=self.op.where)

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
        """Releases files, pools and mappings (subclasses extend it)."""
