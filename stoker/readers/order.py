"""Which sample a reader delivers next: epochs, shard rotation, shuffling, padding.

A reader's stream is a sequence of *reader epochs*. Epoch ``e`` reads one shard: the
reader's own (``stick_to_shard``) or shard ``(shard_id + e) % num_shards``, so that across
all readers every epoch covers every sample exactly once, for any shard sizes. Inside the
epoch the shard's samples come:

* in dataset order (no shuffling): the stream is then exactly DALI's, which without padding
  runs straight on through the following shards and wraps at the end of the dataset;
* as a permutation of the shard drawn from ``(seed, epoch, shard)`` (``random_shuffle``).
  Shard membership comes from one fixed dataset-wide permutation that does not depend on
  any seed, so readers with different seeds still agree on it (DALI does the same; it
  then shuffles through a buffer of ``initial_fill`` samples, which moves samples only
  locally, so its epochs come in nearly the same order: this order is a fresh exact
  permutation each epoch instead);
* as slice ``shard_id`` of a dataset-wide permutation drawn from ``(dataset_seed, epoch)``
  (``shuffle_after_epoch``); this implies sticking to the shard, as in DALI. Container
  readers give ``groups`` (records per container file): the permutation then moves whole
  files and keeps each file's records in order, as DALI's container readers do;
* both (``"both"``: a container reader's ``shuffle_after_epoch`` with ``random_shuffle``,
  which DALI allows): this shard's slice of the file permutation, in an exact permutation.

With ``pad_last_batch`` the epoch is padded with its last sample to the largest shard's
size, then on to a whole number of batches, so no batch mixes two epochs (DALI's measured
behaviour). The state that a checkpoint needs is two integers: ``epoch`` and ``position``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from stoker.readers.sharding import padded_shard_size, reader_meta, shard_bounds

SHUFFLES = ("none", "shard", "dataset", "both")
# The seed of the dataset-wide orders when the user gives none. A constant, the same on
# every rank, so that readers on different machines agree on shard membership.
DATASET_SEED = 0x53544F4B4552  # "STOKER"
_MASK64 = (1 << 64) - 1


def permutation(n: int, *key: int) -> np.ndarray:
    """A permutation of ``range(n)`` that is a pure function of ``key`` (int64)."""
    seq = np.random.SeedSequence([k & _MASK64 for k in key])
    return np.random.Generator(np.random.PCG64(seq)).permutation(n).astype(np.int64)


@dataclass(frozen=True)
class ReadOrder:
    """The order of one reader's stream; a pure function of these settings."""

    size: int
    num_shards: int = 1
    shard_id: int = 0
    stick_to_shard: bool = False
    pad_last_batch: bool = False
    batch_size: int = 1
    shuffle: str = "none"  # one of SHUFFLES
    seed: int = 0  # within-shard permutations (shuffle="shard")
    dataset_seed: int = DATASET_SEED  # dataset-wide permutations
    # Set by an iterator whose policy ends every epoch at a batch boundary (PARTIAL, DROP):
    # each reader epoch then spans exactly the ``window`` samples the iterator pulls per
    # epoch, its shard's samples first and trimmed fillers after. See ``_window_indices``.
    window: int | None = None
    # Samples per container file, in dataset order, for shuffle="dataset" (see above).
    groups: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.shuffle not in SHUFFLES:
            raise ValueError(f"shuffle must be one of {SHUFFLES}, got {self.shuffle!r}")
        if self.size < 1 or not 0 <= self.shard_id < self.num_shards <= self.size:
            raise ValueError(f"bad sharding: size={self.size}, num_shards={self.num_shards}, "
                             f"shard_id={self.shard_id}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {self.batch_size}")
        if self.groups is not None and sum(self.groups) != self.size:
            raise ValueError(f"groups {self.groups} do not add up to size={self.size}")

    @property
    def sticks(self) -> bool:
        """Whether every epoch reads the same shard (shuffle_after_epoch implies it)."""
        return self.stick_to_shard or self.shuffle in ("dataset", "both")

    def shard_at(self, epoch: int) -> int:
        return self.shard_id if self.sticks else (self.shard_id + epoch) % self.num_shards

    def shard_size(self, epoch: int) -> int:
        lo, hi = shard_bounds(self.size, self.num_shards, self.shard_at(epoch))
        return hi - lo

    def epoch_length(self, epoch: int) -> int:
        """Samples delivered in ``epoch``, padding included."""
        if not self.pad_last_batch:
            return self.shard_size(epoch) if self.window is None else self.window
        padded = padded_shard_size(self.size, self.num_shards)
        return -(-padded // self.batch_size) * self.batch_size

    def epoch_indices(self, epoch: int) -> np.ndarray:
        """The dataset indices delivered in ``epoch``, in order, padding included."""
        if self.window is not None and not self.pad_last_batch:
            return self._window_indices(epoch)
        shard = self.shard_at(epoch)
        lo, hi = shard_bounds(self.size, self.num_shards, shard)
        if self.shuffle == "none":
            idx = np.arange(lo, hi, dtype=np.int64)
        elif self.shuffle == "shard":
            members = self._membership()[lo:hi]
            idx = members[permutation(hi - lo, self.seed, epoch, shard)]
        else:
            idx = self._dataset_permutation(epoch)[lo:hi]
            if self.shuffle == "both":
                idx = idx[permutation(hi - lo, self.seed, epoch, shard)]
        length = self.epoch_length(epoch)
        if length > len(idx):
            idx = np.concatenate([idx, np.full(length - len(idx), idx[-1], np.int64)])
        return idx

    def _window_indices(self, epoch: int) -> np.ndarray:
        """Epochs that every rank reads in step, ``window`` samples each.

        DALI's stream runs on from shard to shard, so when the shards differ in size its
        ranks overlap and lose samples from the second epoch on (measured). Here epoch ``e``
        of every rank starts ``e * (window - N // S)`` samples past its shard's start: the
        same offset on every rank, so together the ranks cover the dataset exactly once,
        and, when the shards are equal, exactly where DALI's stream is (so the batches
        equal DALI's). A sticky reader cycles in its own shard, as DALI's does. Positions
        past the shard's size are fillers the iterator trims (``SampleIds.padded``).
        """
        shard, w = self.shard_at(epoch), int(self.window)
        lo, hi = shard_bounds(self.size, self.num_shards, shard)
        n = hi - lo
        steps = np.arange(w, dtype=np.int64)
        if self.shuffle == "none":
            if self.sticks:
                return lo + (epoch * w + steps) % n
            drift = epoch * (w - self.size // self.num_shards)
            return (lo + drift + steps) % self.size
        saved = self.window
        object.__setattr__(self, "window", None)  # the shard's shuffled order, unwindowed
        try:
            members = self.epoch_indices(epoch)[:n]
        finally:
            object.__setattr__(self, "window", saved)
        return members[steps % n]

    def _dataset_permutation(self, epoch: int) -> np.ndarray:
        if self.groups is None:
            return permutation(self.size, self.dataset_seed, epoch)
        sizes = np.asarray(self.groups, np.int64)
        starts = np.cumsum(sizes) - sizes
        files = permutation(len(sizes), self.dataset_seed, epoch)
        # Each permuted file's records in order: a running count restarted per file.
        lengths = sizes[files]
        first = np.repeat(starts[files] - (np.cumsum(lengths) - lengths), lengths)
        return first + np.arange(self.size, dtype=np.int64)

    def _membership(self) -> np.ndarray:
        # Cached: a frozen dataclass holds it through object.__setattr__.
        cached = self.__dict__.get("_members")
        if cached is None:
            cached = permutation(self.size, self.dataset_seed)
            object.__setattr__(self, "_members", cached)
        return cached

    def meta(self) -> dict[str, Any]:
        """DALI's reader_meta for this reader."""
        return reader_meta(self.size, self.num_shards, self.shard_id, self.pad_last_batch,
                           self.sticks)


class SampleIds:
    """Who the samples of one batch are: dataset index, reader epoch, position in that
    epoch, and whether the sample only pads the epoch (a repeat, not a new sample).

    Only ``index`` is made up front: a batch is one or two runs of consecutive positions
    (``runs``: epoch, first position, the shard's real size, count), and the per-sample
    arrays are made from them when asked. Every batch takes its ids and peeks the next
    batch's on the producer thread, where three numpy arrays a batch cost 60-80 us on
    caches the decoding has just swept."""

    __slots__ = ("index", "runs")

    def __init__(self, index: np.ndarray, runs: tuple[tuple[int, int, int, int], ...]):
        self.index = index
        self.runs = runs

    def __len__(self) -> int:
        return len(self.index)

    @property
    def epoch(self) -> np.ndarray:
        return _joined([np.full(k, epoch, np.int64) for epoch, _, _, k in self.runs])

    @property
    def position(self) -> np.ndarray:
        return _joined([np.arange(start, start + k, dtype=np.int64)
                        for _, start, _, k in self.runs])

    @property
    def padded(self) -> np.ndarray:
        """Positions past the shard's real size (``ReadOrder._window_indices``)."""
        return self.position >= _joined([np.full(k, real, np.int64)
                                         for _, _, real, k in self.runs])


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@dataclass
class Cursor:
    """A position in a reader's stream; ``state()`` is all a checkpoint needs."""

    order: ReadOrder
    epoch: int = 0
    position: int = 0
    _cached: tuple[int, np.ndarray] | None = field(default=None, repr=False)
    # What the last ``peek`` gave, from where, and where ``take`` then ends: the next
    # batch's ``take`` is that peek (a reader reads the next batch's files ahead).
    _peeked: tuple | None = field(default=None, repr=False)

    def set_window(self, window: int | None) -> None:
        """Reader epochs of ``window`` samples from now on (``EpochOrder.window``)."""
        self.order = replace(self.order, window=window)
        self._cached = None

    def _indices(self, epoch: int) -> np.ndarray:
        if self._cached is None or self._cached[0] != epoch:
            self._cached = (epoch, self.order.epoch_indices(epoch))
        return self._cached[1]

    def take(self, n: int) -> SampleIds:
        """The next ``n`` samples; a batch runs on into the next epoch when one ends (DALI's
        readers never stop or shorten a batch at an epoch boundary)."""
        peeked, self._peeked = self._peeked, None
        if peeked is not None and peeked[0] is self.order and \
                peeked[1:4] == (self.epoch, self.position, n):
            self.epoch, self.position = peeked[4], peeked[5]
            return peeked[6]
        parts: list[np.ndarray] = []
        runs: list[tuple[int, int, int, int]] = []
        need = n
        while need > 0:
            idx = self._indices(self.epoch)
            k = min(need, len(idx) - self.position)
            part = idx[self.position:self.position + k]
            parts.append(part)
            runs.append((self.epoch, self.position, self.order.shard_size(self.epoch),
                         len(part)))
            self.position += k
            need -= k
            if self.position == len(idx):
                self.epoch += 1
                self.position = 0
        # (A batch within one epoch: no joining.)
        return SampleIds(parts[0] if len(parts) == 1 else _joined(parts), tuple(runs))

    def peek(self, n: int) -> SampleIds:
        """What ``take(n)`` would give, without moving."""
        ahead = Cursor(self.order, self.epoch, self.position, self._cached)  # (replace():
        # 20 us of field introspection a batch)
        ids = ahead.take(n)
        self._peeked = (self.order, self.epoch, self.position, n, ahead.epoch, ahead.position,
                        ids)
        self._cached = ahead._cached  # (the epoch the next peek starts in: drawn once)
        return ids

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def restore(self, state: dict[str, int]) -> None:
        epoch, position = int(state["epoch"]), int(state["position"])
        if epoch < 0 or not 0 <= position < self.order.epoch_length(epoch):
            raise ValueError(f"reader state {state} is outside the reader's stream (epoch "
                             f"{epoch} has {self.order.epoch_length(max(epoch, 0))} samples)")
        self.epoch, self.position = epoch, position
