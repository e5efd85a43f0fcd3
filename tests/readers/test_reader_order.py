"""The read order (stoker/readers/order.py) against DALI 2.4's measured sequences and the
sharding formula, and the guarantees stoker adds: exact per-epoch permutations and
exactly-once epochs across shards.

tests/data/dali_file_reader_sequences.json holds what DALI 2.4.0 (CPU) returned: for
``fn.readers.file(files=[f] * N, labels=range(N), num_shards=S, shard_id=i,
pad_last_batch=P, stick_to_shard=K)`` in a pipeline of batch size B, the labels of each
``run()`` (key ``"N,S,i,B,P,K"``), for N in 1..13, S in 1..4, B in {1, 3, 4}: 720 runs
of 6 or more batches; the file's "note" says how they were measured.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from stoker.readers.order import Cursor, ReadOrder, permutation
from stoker.readers.sharding import epoch_size_padded, reader_meta, shard_bounds

DALI = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                   "dali_file_reader_sequences.json").read_text())["sequences"]


def batches(order: ReadOrder, count: int, batch: int) -> list[list[int]]:
    cursor = Cursor(order)
    return [cursor.take(batch).index.tolist() for _ in range(count)]


@pytest.mark.parametrize("key", sorted(DALI))
def test_unshuffled_sequences_equal_dali(key):
    n, shards, sid, batch, pad, stick = map(int, key.split(","))
    order = ReadOrder(n, shards, sid, bool(stick), bool(pad), batch)
    want = DALI[key]
    assert batches(order, len(want), batch) == want


def test_measured_table_of_the_notes():
    # /work/dali_notes.md section d (10 files, batch 4, 2 shards), spelled out.
    def seq(sid, pad, stick):
        return batches(ReadOrder(10, 2, sid, stick, pad, 4), 6, 4)

    assert seq(0, False, False) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5],
                                    [6, 7, 8, 9], [0, 1, 2, 3]]
    assert seq(0, False, True) == [[0, 1, 2, 3], [4, 0, 1, 2], [3, 4, 0, 1], [2, 3, 4, 0],
                                   [1, 2, 3, 4], [0, 1, 2, 3]]
    assert seq(0, True, False) == [[0, 1, 2, 3], [4, 4, 4, 4], [5, 6, 7, 8], [9, 9, 9, 9],
                                   [0, 1, 2, 3], [4, 4, 4, 4]]
    assert seq(1, True, True) == [[5, 6, 7, 8], [9, 9, 9, 9]] * 3
    # 9 files, 2 shards, padding: shard 0 (4 samples) is padded to ceil(9/2) = 5, then to
    # a whole batch, so a full batch of padding follows (measured).
    assert batches(ReadOrder(9, 2, 0, False, True, 4), 4, 4) == [
        [0, 1, 2, 3], [3, 3, 3, 3], [4, 5, 6, 7], [8, 8, 8, 8]]


@pytest.mark.parametrize("n,shards", [(n, s) for n in (1, 2, 3, 7, 10, 11, 100, 1001)
                                       for s in (1, 2, 3, 4, 7, 8, 16) if s <= n])
def test_shards_follow_dalis_formula_and_partition_the_dataset(n, shards):
    covered = []
    for i in range(shards):
        lo, hi = shard_bounds(n, shards, i)
        assert (lo, hi) == (i * n // shards, (i + 1) * n // shards)
        order = ReadOrder(n, shards, i, stick_to_shard=True)
        assert order.epoch_indices(0).tolist() == list(range(lo, hi))
        covered += list(range(lo, hi))
    assert covered == list(range(n))
    sizes = [np.diff(shard_bounds(n, shards, i))[0] for i in range(shards)]
    assert max(sizes) - min(sizes) <= 1


def test_reader_meta_values_as_dali_reports_them():
    # Measured: epoch_size is the whole dataset; epoch_size_padded = S * ceil(N / S) with
    # padding (N=10: S=3 -> 12, S=4 -> 12, S=2 -> 10; N=9, S=2 -> 10), N without; flags
    # are ints.
    assert reader_meta(10, 1, 0, False, False) == {
        "epoch_size": 10, "epoch_size_padded": 10, "number_of_shards": 1, "shard_id": 0,
        "pad_last_batch": 0, "stick_to_shard": 0}
    for n, s, want in ((10, 3, 12), (10, 4, 12), (10, 2, 10), (9, 2, 10)):
        assert epoch_size_padded(n, s, True) == want
        assert epoch_size_padded(n, s, False) == n
    # shuffle_after_epoch reports stick_to_shard=1 (measured: DALI forces it).
    assert ReadOrder(10, 2, 1, shuffle="dataset").meta()["stick_to_shard"] == 1


@pytest.mark.parametrize("n,shards", [(10, 1), (10, 3), (9, 2), (1000, 7)])
@pytest.mark.parametrize("stick", [False, True])
def test_random_shuffle_is_an_exact_permutation_of_the_shard_per_epoch(n, shards, stick):
    for sid in range(shards):
        order = ReadOrder(n, shards, sid, stick, shuffle="shard", seed=42)
        epochs = [order.epoch_indices(e) for e in range(shards + 1)]
        for e, idx in enumerate(epochs):
            members = ReadOrder(n, shards, sid, stick, shuffle="shard", seed=7).epoch_indices(e)
            # The shard's members do not depend on the seed; only their order does.
            assert sorted(idx.tolist()) == sorted(members.tolist())
            assert len(set(idx.tolist())) == len(idx)
        if n >= 100:
            assert not np.array_equal(epochs[0], epochs[shards]), "same order every epoch"


def test_random_shuffle_is_reproducible_from_the_seed():
    a = ReadOrder(1000, 2, 0, shuffle="shard", seed=1)
    b = ReadOrder(1000, 2, 0, shuffle="shard", seed=1)
    c = ReadOrder(1000, 2, 0, shuffle="shard", seed=2)
    assert np.array_equal(a.epoch_indices(3), b.epoch_indices(3))
    assert not np.array_equal(a.epoch_indices(3), c.epoch_indices(3))


def test_random_shuffle_mixes_classes_into_every_shard():
    # A class-sorted dataset: without the fixed dataset-wide permutation shard 0 of 2 would
    # hold only the first half of the classes.
    labels = np.repeat(np.arange(10), 100)
    shard0 = ReadOrder(1000, 2, 0, stick_to_shard=True, shuffle="shard").epoch_indices(0)
    assert len(set(labels[shard0].tolist())) == 10


# Sticking to a shard covers only that shard, by design, except with shuffle_after_epoch,
# whose readers each take their slice of one dataset-wide permutation.
@pytest.mark.parametrize("n,shards", [(10, 2), (9, 2), (13, 4), (100, 3), (7, 7)])
@pytest.mark.parametrize("shuffle,stick", [("none", False), ("shard", False),
                                           ("dataset", False), ("dataset", True)])
def test_every_epoch_covers_the_dataset_exactly_once_across_shards(n, shards, shuffle, stick):
    for epoch in range(2 * shards + 1):
        seen = []
        for sid in range(shards):
            # Different seeds per rank on purpose: coverage must not depend on them.
            order = ReadOrder(n, shards, sid, stick, shuffle=shuffle, seed=sid + 100)
            seen += order.epoch_indices(epoch).tolist()
        assert sorted(seen) == list(range(n)), f"epoch {epoch}"


def test_shards_rotate_between_epochs_unless_stick_to_shard():
    assert [ReadOrder(10, 3, 1).shard_at(e) for e in range(5)] == [1, 2, 0, 1, 2]
    assert [ReadOrder(10, 3, 1, stick_to_shard=True).shard_at(e) for e in range(5)] == [1] * 5


def test_shuffle_after_epoch_permutes_the_whole_dataset_and_slices_it():
    a = [ReadOrder(10, 2, s, shuffle="dataset").epoch_indices(0) for s in range(2)]
    whole = np.concatenate(a)
    assert sorted(whole.tolist()) == list(range(10))
    assert whole.tolist() != list(range(10)), "the first epoch is shuffled too (as in DALI)"
    e1 = np.concatenate([ReadOrder(10, 2, s, shuffle="dataset").epoch_indices(1)
                         for s in range(2)])
    assert not np.array_equal(whole, e1)
    seeded = ReadOrder(10, 1, 0, shuffle="dataset", dataset_seed=7).epoch_indices(0)
    assert not np.array_equal(seeded, ReadOrder(10, 1, 0, shuffle="dataset").epoch_indices(0))


def test_padding_repeats_the_last_sample_of_the_shuffled_epoch():
    order = ReadOrder(9, 2, 0, pad_last_batch=True, batch_size=4, shuffle="shard", seed=3)
    idx = order.epoch_indices(0)
    assert len(idx) == 8  # 4 samples, padded to ceil(9 / 2) = 5, then to 2 batches of 4
    assert len(set(idx[:4].tolist())) == 4
    assert (idx[4:] == idx[3]).all()


def test_cursor_identifies_each_sample_and_marks_padding():
    cursor = Cursor(ReadOrder(5, 2, 0, pad_last_batch=True, batch_size=2))
    ids = cursor.take(4)  # shard 0 = [0, 1], padded to 3 then to 4
    assert ids.index.tolist() == [0, 1, 1, 1]
    assert ids.epoch.tolist() == [0, 0, 0, 0]
    assert ids.position.tolist() == [0, 1, 2, 3]
    assert ids.padded.tolist() == [False, False, True, True]
    ids = cursor.take(3)  # shard 1 = [2, 3, 4]
    assert ids.index.tolist() == [2, 3, 4] and ids.epoch.tolist() == [1, 1, 1]
    assert not ids.padded.any()


def test_a_batch_runs_on_into_the_next_epoch_without_padding():
    cursor = Cursor(ReadOrder(5))
    cursor.take(4)
    ids = cursor.take(4)
    assert ids.index.tolist() == [4, 0, 1, 2]
    assert ids.epoch.tolist() == [0, 1, 1, 1]
    assert ids.position.tolist() == [4, 0, 1, 2]
    assert cursor.state() == {"epoch": 1, "position": 3}


def test_state_restores_the_stream_exactly():
    order = ReadOrder(50, 3, 2, shuffle="shard", seed=9, pad_last_batch=True, batch_size=8)
    a = Cursor(order)
    for _ in range(5):
        a.take(8)
    saved = a.state()
    expected = [a.take(8).index.tolist() for _ in range(6)]
    b = Cursor(order)
    b.restore(saved)
    assert [b.take(8).index.tolist() for _ in range(6)] == expected
    with pytest.raises(ValueError, match="outside the reader's stream"):
        b.restore({"epoch": 0, "position": 10_000})


def test_peek_then_take_gives_what_take_alone_gives():
    """A reader peeks at the next batch to read it ahead; the take that follows reuses that
    peek only from the same place, for the same count, in the same order."""
    order = ReadOrder(23, 2, 1, shuffle="shard", seed=4, batch_size=5)
    plain, peeking = Cursor(order), Cursor(order)
    for n in (5, 5, 7, 5, 6, 5, 5):
        ahead = peeking.peek(n)
        assert peeking.take(n).index.tolist() == ahead.index.tolist() == \
            plain.take(n).index.tolist()
        assert peeking.state() == plain.state()
    peeking.peek(5)
    assert peeking.take(4).index.tolist() == plain.take(4).index.tolist()  # (another count)
    saved = plain.state()
    peeking.peek(5)
    peeking.restore({"epoch": 0, "position": 2})
    plain.restore({"epoch": 0, "position": 2})
    assert peeking.take(5).index.tolist() == plain.take(5).index.tolist()
    assert saved != plain.state()
    peeking.peek(5)
    peeking.set_window(4)
    plain.set_window(4)
    ids, want = peeking.take(5), plain.take(5)
    assert ids.index.tolist() == want.index.tolist() and ids.epoch.tolist() == want.epoch.tolist()


def test_permutation_is_a_pure_function_of_its_key():
    assert np.array_equal(permutation(100, 1, 2, 3), permutation(100, 1, 2, 3))
    assert not np.array_equal(permutation(100, 1, 2, 3), permutation(100, 1, 2, 4))
    assert sorted(permutation(100, -5).tolist()) == list(range(100))


def test_consecutive_shuffled_epochs_are_uncorrelated():
    # Measured on DALI 2.4 (10,000 files, random_shuffle, initial_fill 1024): a sample's
    # positions in epochs 0 and 1 correlated at 0.90 (mean shift 937 places): its buffer
    # only moves samples locally. Exact permutations do not carry order over.
    n = 10_000
    order = ReadOrder(n, shuffle="shard", seed=5)
    positions = []
    for e in range(2):
        pos = np.empty(n, np.int64)
        pos[order.epoch_indices(e)] = np.arange(n)
        positions.append(pos)
    assert abs(np.corrcoef(*positions)[0, 1]) < 0.05
