"""The iterator every framework plugin shares: DALI's ``DALIGenericIterator`` less the
framework. It builds the pipelines, counts epochs with ``stoker.plugin.base``'s books,
prepares the first batch, trims the last one, saves and restores its position in the
pipelines' checkpoints and resets. A plugin (PyTorch, JAX) subclasses it and says only how
one output of one pipeline becomes the framework's array and how the per-pipeline dicts are
returned. No framework is imported here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from stoker.errors import ArgumentError, PipelineError
from stoker.executor.skipping import retract
from stoker.plugin.base import (
    EpochBook,
    LastBatchPolicy,
    Shards,
    SizeBook,
    book_state,
    parse_auto_reset,
    restore_book,
)
from stoker.tensors import TensorList, TensorListGPU


class BaseIterator:
    """DALI's iterator over one or more pipelines, without the framework: a subclass says
    how a batch becomes the framework's array (``_output``) and how the pipelines' dicts
    are handed out (``_combine``)."""

    def __init__(self, pipelines: Any, output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, auto_reset: bool | str = False,
                 fill_last_batch: bool | None = None, dynamic_shape: bool = False,
                 last_batch_padded: bool = False,
                 last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True):
        self._pipes = list(pipelines) if isinstance(pipelines, list | tuple) else [pipelines]
        if not self._pipes:
            raise ArgumentError("DALIGenericIterator: give at least one pipeline")
        if len(set(output_map)) != len(output_map):
            raise ArgumentError(f"DALIGenericIterator: output_map {list(output_map)} names an "
                                "output twice")
        self.output_map = list(output_map)
        self._auto_reset = parse_auto_reset(auto_reset)
        if fill_last_batch is not None:
            warnings.warn("fill_last_batch is deprecated; use last_batch_policy", stacklevel=2)
            last_batch_policy = LastBatchPolicy.FILL if fill_last_batch else \
                LastBatchPolicy.PARTIAL
        if not isinstance(last_batch_policy, LastBatchPolicy):
            raise ValueError(f"last_batch_policy must be a LastBatchPolicy, got "
                             f"{last_batch_policy!r}")
        self.last_batch_policy = last_batch_policy
        for pipe in self._pipes:
            pipe.build()
        if self._strict_outputs:
            self._check_output_count()
        self.batch_size = self._pipes[0].batch_size
        self._checkpointing = self._pipes[0]._enable_checkpointing
        if any(pipe._enable_checkpointing != self._checkpointing for pipe in self._pipes):
            raise ValueError(f"{type(self).__name__}: the pipelines must all have the same "
                             "enable_checkpointing")
        self._book = self._make_book(size, reader_name, last_batch_padded)
        if self._checkpointing:
            restore_book(self._book, self._pipes)
        self._pending: list | None = None
        if prepare_first_batch:
            if len(self._book) == 0 and self._book.size >= 0:  # size < 0: endless
                raise RuntimeError("DALIGenericIterator: there is no data in the pipeline for a "
                                   "whole batch in this epoch (DROP with fewer samples per shard "
                                   "than the batch size); use PARTIAL or a smaller batch")
            # An iterator restored at the end of an epoch has no first batch to prepare:
            # the next batch is pulled after reset(), as in the run it was saved from.
            if not self._book.exhausted:
                try:
                    self._pending = self._pull()
                except StopIteration:
                    # Restored after a finite source's end: next() raises it again (DALI).
                    if not any(pipe.is_restored_from_checkpoint for pipe in self._pipes):
                        raise

    # Whether a pipeline must have exactly as many outputs as output_map names, checked
    # when the iterator is made (JAX, TF); DALI's PyTorch iterator fails at the first batch.
    _strict_outputs = False

    # -- construction ----------------------------------------------------------------------
    def _check_output_count(self) -> None:
        for i, pipe in enumerate(self._pipes):
            n = len(pipe._outputs)
            if n != len(self.output_map):
                raise ArgumentError(f"{self._name}: pipeline {i} has {n} outputs but "
                                    f"output_map names {len(self.output_map)} "
                                    f"({self.output_map}); name every output once")

    def _make_book(self, size: int, reader_name: str | None, last_batch_padded: bool) -> Any:
        if reader_name is not None:
            if size > 0:
                raise ArgumentError("DALIGenericIterator: when reader_name is given, size must "
                                    "not be set")
            if last_batch_padded:
                raise ArgumentError("DALIGenericIterator: when reader_name is given, "
                                    "last_batch_padded must not be set (the reader's "
                                    "pad_last_batch says it)")
            if any(p._on_error == "skip" for p in self._pipes):
                if len(self._pipes) > 1:
                    raise PipelineError(f"{type(self).__name__}: on_error='skip' with "
                                        "reader_name works with one pipeline per iterator "
                                        "(one per rank): the pipelines' epochs would drift "
                                        "apart")
                if self.last_batch_policy is not LastBatchPolicy.PARTIAL:
                    raise PipelineError(
                        f"{type(self).__name__}: on_error='skip' with reader_name needs "
                        "last_batch_policy=LastBatchPolicy.PARTIAL, which keeps every good "
                        f"sample once per epoch; {self.last_batch_policy.name} pads or drops "
                        "samples by position, and skipping moves them")
            metas = [pipe.reader_meta(reader_name) for pipe in self._pipes]
            m = metas[0]
            shards = Shards(size=m["epoch_size"], num_shards=m["number_of_shards"],
                            shard_ids=[meta["shard_id"] for meta in metas],
                            pad_last_batch=bool(m["pad_last_batch"]),
                            stick_to_shard=bool(m["stick_to_shard"]))
            self._align_readers(reader_name, shards)
            return EpochBook(shards, self.batch_size, self.last_batch_policy)
        if size == 0:
            raise ArgumentError("DALIGenericIterator: size cannot be 0")
        if size < 0 and len(self._pipes) > 1:
            raise ArgumentError("DALIGenericIterator: a negative size (endless iteration) works "
                                "only with one pipeline; give reader_name or size")
        return SizeBook(size, len(self._pipes), self.batch_size, self.last_batch_policy
                        if size > 0 else LastBatchPolicy.FILL, last_batch_padded)

    def _align_readers(self, reader_name: str, shards: Shards) -> None:
        """PARTIAL without padding: the reader reads in step with the iterator's epochs.

        DALI's reader stream then overlaps ranks once shards differ in size (a sample twice,
        another lost, from the second epoch on). DROP needs nothing: each rank returns
        fewer samples than lie between two shard starts, so DALI's stream never overlaps.
        """
        if shards.pad_last_batch or self.last_batch_policy is not LastBatchPolicy.PARTIAL:
            return
        n, s, bs = shards.size, shards.num_shards, self.batch_size
        window = math.ceil(math.ceil(n / s) / bs) * bs
        for pipe in self._pipes:
            reader = pipe._readers().get(reader_name)
            if reader is not None and hasattr(reader, "align_epochs"):
                reader.align_epochs(window)

    # -- iteration -------------------------------------------------------------------------
    def _pull(self) -> list[tuple]:
        return [pipe.run() for pipe in self._pipes]

    def _convert(self, outputs: tuple, keep: int) -> dict[str, Any]:
        if len(outputs) != len(self.output_map):
            raise ArgumentError(f"{type(self).__name__}: the pipeline has {len(outputs)} "
                                f"outputs but output_map names {len(self.output_map)}")
        return {name: self._output(name, tl, keep)
                for name, tl in zip(self.output_map, outputs, strict=True)}

    @property
    def _name(self) -> str:
        return type(self).__name__

    def _output(self, name: str, tl: TensorList | TensorListGPU, keep: int) -> Any:
        raise NotImplementedError

    def _combine(self, per_pipeline: list[dict[str, Any]]) -> Any:
        """What ``next()`` returns: one dict per pipeline (DALI's PyTorch and TF form)."""
        return per_pipeline

    def __next__(self) -> Any:
        book = self._book
        if book.exhausted:
            self._stop()
        if self._pending is not None:
            outputs, self._pending = self._pending, None
        else:
            try:
                outputs = self._pull()
            except StopIteration:  # a finite source ended the epoch (size < 0, as in DALI)
                self._stop()
        skipped = self._skipped(outputs) if isinstance(book, EpochBook) else None
        keep = book.take(skipped) if skipped is not None else book.take()
        if skipped is not None and book.epoch_end_in_batch is not None:
            # The samples after the epoch's end are dropped: so are their failures from
            # the pipeline's skipped_samples() (the next epoch reads them again).
            retract(self._pipes[0], outputs[0], book.epoch_end_in_batch)
        if keep is None:  # DROP: the incomplete batch is thrown away
            self._stop()
        if skipped is not None and keep == [0]:  # every sample of it failed (on_error="skip")
            return self.__next__()
        return self._combine([self._convert(out, k)
                              for out, k in zip(outputs, keep, strict=False)])

    def _skipped(self, outputs: list) -> tuple | None:
        """What on_error="skip" did to a batch (stream positions consumed, delivered
        samples' positions), for the epoch count; None when nothing was skipped."""
        consumed = getattr(outputs[0], "consumed", None)
        return None if consumed is None else (consumed, outputs[0].offsets)

    def _stop(self) -> None:
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def __iter__(self) -> BaseIterator:
        # A new `for` loop after a finished epoch starts the next one (as DALI does).
        if self._book.exhausted and self._book.counter > 0:
            self.reset()
        return self

    def __len__(self) -> int:
        return len(self._book)

    def next(self) -> Any:
        return self.__next__()

    def checkpoints(self) -> list[str]:
        """One checkpoint per pipeline, as of the batches this iterator has returned: an
        iterator built like this one on pipelines created with ``checkpoint=`` these
        goes on with exactly the batches this one would return next."""
        if not self._checkpointing:
            raise ValueError(f"{type(self).__name__}.checkpoints(): checkpointing is not "
                             "enabled; create the pipelines with enable_checkpointing=True")
        # A prepared batch was taken from the pipelines but not returned: save the
        # pipelines' state from before it.
        back = 1 if self._pending is not None else 0
        data = book_state(self._book)
        return [pipe._checkpoint_text(back, data) for pipe in self._pipes]

    def reset(self) -> None:
        """Starts the next epoch; ignored (with a warning) in the middle of one."""
        book = self._book
        if book.tail_to_discard():  # DROP stopped after len() batches: pull the tail
            if self._pending is None:
                self._pull()
            self._pending = None
            book.take()
        if book.next_epoch():
            for pipe in self._pipes:
                pipe.reset()

    @property
    def size(self) -> int:
        return self._book.size
