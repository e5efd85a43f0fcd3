"""Epoch bookkeeping shared by the framework iterators (PyTorch now; JAX and TF later).

``EpochBook`` decides, batch by batch, what a DALI-style iterator returns: how many
batches an epoch has (``len``), when StopIteration comes, which samples of the last batch
are kept (PARTIAL), whether the last pulled batch is thrown away (DROP), and how an epoch
boundary carries over (FILL). The rules are DALI 2.4's, measured by running it
(tests/data/dali_iterator_cases.json holds 340 recorded cases; the tests replay them).
"""

from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass

import numpy as np

log = logging.getLogger("stoker.plugin")


class LastBatchPolicy(enum.Enum):
    """What happens to the last batch of an epoch when the data does not fill it."""

    FILL = 0  # return a full batch; the missing samples come from the next epoch (or padding)
    DROP = 1  # drop the incomplete last batch
    PARTIAL = 2  # return only the samples that belong to the epoch


def parse_auto_reset(value: object) -> bool:
    if value in (True, "yes"):
        return True
    if value in (False, None, "no"):
        return False
    raise ValueError(f"Unsupported value for `auto_reset` {value!r}: use True/'yes' or "
                     "False/'no'")


@dataclass
class Shards:
    """The reader's view: dataset size, shard count, and the shards the iterator wraps."""

    size: int
    num_shards: int
    shard_ids: list[int]
    pad_last_batch: bool
    stick_to_shard: bool

    def length(self, shard: int) -> int:
        n, s = self.size, self.num_shards
        return (shard + 1) * n // s - shard * n // s


class EpochBook:
    """Counting for an iterator built with ``reader_name`` (one entry per wrapped pipeline)."""

    SAVED = ("counter", "size", "current", "ahead", "rot_len")  # what a checkpoint keeps

    def __init__(self, shards: Shards, batch_size: int, policy: LastBatchPolicy):
        self.bs = batch_size
        self.policy = policy
        self.pad = shards.pad_last_batch
        self.stick = shards.stick_to_shard
        self.num_shards = shards.num_shards
        self.shard_len = [shards.length(s) for s in range(shards.num_shards)]
        n, s = shards.size, shards.num_shards
        padded = math.ceil(math.ceil(n / s) / batch_size) * batch_size
        self.size = n // s if policy is LastBatchPolicy.DROP else padded
        self.current = list(shards.shard_ids)  # the shard each pipeline reads this epoch
        # FILL without padding: samples of each shard already read in an earlier epoch,
        # and the shard lengths in the rotated order the carry-over follows.
        self.ahead = [0] * s
        self.rot_len = list(self.shard_len)
        self.counter = 0
        # on_error="skip": the stream positions of the last batch taken that its epoch
        # holds (those from here on are the next epoch's, read again there).
        self.epoch_end_in_batch: int | None = None

    def __len__(self) -> int:
        if self.policy is LastBatchPolicy.DROP:
            return self.size // self.bs
        return math.ceil(self.size / self.bs)

    @property
    def exhausted(self) -> bool:
        return self.counter >= self.size

    def _drops(self, counter: int) -> bool:
        return any(a + counter > n for a, n in zip(self.ahead, self.rot_len, strict=True))

    def take(self, skipped: tuple[int, np.ndarray] | None = None) -> list[int] | None:
        """Counts one pulled batch: None means throw it away and stop (DROP); otherwise the
        number of samples to keep from each pipeline's batch.

        ``skipped`` (one pipeline, ``on_error="skip"``): the stream positions the batch
        consumed and where its samples sat among them. The epoch is counted in positions,
        so the samples that replaced failed ones never push the epoch's last good samples
        out, nor pull the next epoch's in."""
        before = self.counter
        self.counter += self.bs if skipped is None else skipped[0]
        if self.policy is LastBatchPolicy.DROP and self._drops(self.counter):
            return None
        if skipped is not None:
            offsets = skipped[1]
            keep = [len(offsets)]
            self.epoch_end_in_batch = None
            if self.policy is LastBatchPolicy.PARTIAL:
                end = self.shard_len[self.current[0]] - before
                keep = [int(np.searchsorted(offsets, end))]
                self.epoch_end_in_batch = end
            return keep
        keep = [self.bs] * len(self.current)
        if self.policy is LastBatchPolicy.PARTIAL:
            keep = [min(self.bs, max(0, self.bs - (self.counter - self.shard_len[c])))
                    for c in self.current]
        return keep

    def tail_to_discard(self) -> bool:
        """DROP stopped after len() batches: the never-returned tail must still be pulled."""
        return (self.policy is LastBatchPolicy.DROP and self.counter < self.size
                and self._drops(self.counter + self.bs))

    def next_epoch(self) -> bool:
        """Moves to the next epoch; False (and nothing changes) in the middle of one."""
        if self.counter < self.size:
            log.warning("reset() in the middle of an epoch is ignored; the epoch goes on")
            return False
        carry = self.policy is LastBatchPolicy.FILL and not self.pad
        if carry:
            read = self.counter - min(self.ahead)
            self.ahead = [a + read - n for a, n in zip(self.ahead, self.rot_len, strict=True)]
            self.counter = min(self.ahead)
        else:
            self.counter = 0
        if not self.stick:
            self.current = [(c + 1) % self.num_shards for c in self.current]
        if carry:
            if not self.stick:
                self.rot_len = self.rot_len[-1:] + self.rot_len[:-1]
            need = max(n - a for n, a in zip(self.rot_len, self.ahead, strict=True))
            self.size = math.ceil(need / self.bs) * self.bs
            if self.size == 0:  # everything was read ahead: the epoch is skipped
                self.ahead = [0] * self.num_shards
                self.counter = 0
                self.rot_len = self.rot_len[-1:] + self.rot_len[:-1]
                self.size = math.ceil(max(self.rot_len) / self.bs) * self.bs
        return True


class SizeBook:
    """Counting for an iterator built with ``size`` (the total over all pipelines)."""

    SAVED = ("counter",)  # what a checkpoint keeps

    def __init__(self, size: int, pipelines: int, batch_size: int, policy: LastBatchPolicy,
                 last_batch_padded: bool):
        self.size = size
        self.step = pipelines * batch_size
        self.bs = batch_size
        self.policy = policy
        self.last_batch_padded = last_batch_padded
        self.counter = 0

    def __len__(self) -> int:
        if self.size < 0:
            return 0
        if self.policy is LastBatchPolicy.DROP:
            return self.size // self.step
        return math.ceil(self.size / self.step)

    @property
    def exhausted(self) -> bool:
        return self.size >= 0 and self.counter >= self.size

    def take(self) -> list[int] | None:
        """None: throw the batch away and stop; else samples kept per pipeline (a shorter
        list than there are pipelines when the last step needs fewer of them)."""
        self.counter += self.step
        pipelines = self.step // self.bs
        if self.size < 0 or self.counter <= self.size:
            return [self.bs] * pipelines
        if self.policy is LastBatchPolicy.DROP:
            return None
        if self.policy is LastBatchPolicy.PARTIAL:
            want = self.step - (self.counter - self.size)
            used = math.ceil(want / self.bs)
            return [self.bs] * (used - 1) + [want % self.bs or self.bs]
        return [self.bs] * pipelines

    def tail_to_discard(self) -> bool:
        return (self.policy is LastBatchPolicy.DROP and 0 <= self.counter < self.size
                and self.counter + self.step > self.size)

    def next_epoch(self) -> bool:
        if self.size >= 0 and self.counter < self.size:
            log.warning("reset() in the middle of an epoch is ignored; the epoch goes on")
            return False
        if self.policy is LastBatchPolicy.FILL and not self.last_batch_padded and self.size > 0:
            self.counter %= self.size
        else:
            self.counter = 0
        return True


def book_state(book: EpochBook | SizeBook) -> dict:
    """An iterator's position in its epoch, for the pipelines' checkpoints."""
    return {"book": type(book).__name__, "policy": book.policy.name,
            **{name: getattr(book, name) for name in book.SAVED}}


def restore_book(book: EpochBook | SizeBook, pipes: list) -> None:
    """Puts back the position saved by ``book_state`` in the checkpoints the pipelines were
    restored from. As DALI, only warns when there is none or the pipelines disagree."""
    restored = [pipe for pipe in pipes if pipe.is_restored_from_checkpoint]
    if not restored:
        return
    saved = [pipe._tracker.iterator_data for pipe in restored]
    if len(restored) < len(pipes):
        log.warning("some, but not all, of the iterator's pipelines were restored from a "
                    "checkpoint; its batches may not go on where they stopped")
    elif any(data != saved[0] for data in saved):
        log.warning("the iterator's pipelines were restored from checkpoints that hold "
                    "different iterator positions; the first pipeline's is used")
    data = saved[0]
    if data is None:
        log.warning("the checkpoint holds no iterator position (it came from "
                    "pipe.checkpoint(), not from an iterator's checkpoints()); the iterator "
                    "counts its epoch from the start")
        return
    kind = type(book).__name__
    if data.get("book") != kind or data.get("policy") != book.policy.name:
        raise ValueError(f"the checkpoint was taken by an iterator counting with "
                         f"{data.get('book')} and last_batch_policy={data.get('policy')}, "
                         f"this one counts with {kind} and {book.policy.name}; build it with "
                         "the same reader_name/size and last_batch_policy")
    for name in book.SAVED:
        setattr(book, name, data[name])
