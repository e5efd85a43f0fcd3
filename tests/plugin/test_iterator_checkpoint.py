"""Iterator checkpoints: ``DALIGenericIterator.checkpoints()`` and iterators built on
pipelines restored from them.

Each case runs an iterator for three epochs (next() until StopIteration, then reset()),
takes ``checkpoints()`` after every call (also between StopIteration and reset()), builds
new pipelines and a new iterator from each, runs it the same way and compares the
remaining batches bit for bit with the uninterrupted run. DALI 2.4 passes the same
protocol (measured on this file's reader cases with nvidia-dali 2.4, CPU).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from helpers import sized_files

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch import (
    DALIClassificationIterator,
    DALIGenericIterator,
    LastBatchPolicy,
)

BATCH = 3
EPOCHS = 3


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    """Seven small files: two shards of them differ in size (3 and 4)."""
    return sized_files(tmp_path_factory.mktemp("ckpt_files"), 7)


def reader_pipe(files, shard_id=0, num_shards=1, pad=False, **kw):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=9)
    def pipe():
        _, label = fn.readers.file(files=files, random_shuffle=True, shard_id=shard_id,
                                   num_shards=num_shards, pad_last_batch=pad, name="Reader")
        return label, fn.random.uniform(), fn.random.coin_flip()

    return pipe(enable_checkpointing=True, **kw)


def as_samples(batch: list[dict]) -> list:
    return [{name: (str(t.dtype), tuple(t.shape), t.numpy().tobytes())
             for name, t in per_pipe.items()} for per_pipe in batch]


def drive(it, checkpoints: list | None = None, epochs: int = EPOCHS) -> list:
    """next() until StopIteration, reset(), for ``epochs`` epochs; with ``checkpoints``,
    (position in the result, checkpoints) after every call."""
    out: list = []
    while out.count("end") < epochs:
        try:
            out.append(as_samples(next(it)))
        except StopIteration:
            out.append("end")
            if checkpoints is not None:  # between StopIteration and reset()
                checkpoints.append((len(out) - 1, it.checkpoints()))
            it.reset()
        if checkpoints is not None:
            checkpoints.append((len(out), it.checkpoints()))
    return out


def check_every_checkpoint_resumes(make_iterator, make_pipes) -> int:
    original = make_iterator(make_pipes(None))
    checkpoints = [(0, original.checkpoints())]
    expected = drive(original, checkpoints)
    for at, saved in checkpoints:
        resumed = drive(make_iterator(make_pipes(saved)))
        # The resumed run goes on for three more epochs: compare all that overlaps.
        n = min(len(resumed), len(expected) - at)
        assert resumed[:n] == expected[at:at + n], f"resumed at {at} of {expected}"
    return len(checkpoints)


POLICIES = [LastBatchPolicy.PARTIAL, LastBatchPolicy.FILL, LastBatchPolicy.DROP]


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
@pytest.mark.parametrize("num_shards", [1, 2])
def test_reader_iterator_resumes_from_every_checkpoint(files, num_shards, policy, pad, depth):
    def make_pipes(saved):
        return [reader_pipe(files, s, num_shards, pad, prefetch_queue_depth=depth,
                            checkpoint=None if saved is None else saved[s])
                for s in range(num_shards)]

    def make_iterator(pipes):
        return DALIGenericIterator(pipes, ["label", "u", "flip"], reader_name="Reader",
                                   last_batch_policy=policy)

    assert check_every_checkpoint_resumes(make_iterator, make_pipes) > 3 * EPOCHS


def _sample_cb(info: types.SampleInfo) -> np.ndarray:
    if info.idx_in_epoch >= 10:
        raise StopIteration
    return np.array([info.idx_in_epoch, info.epoch_idx], np.int64)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
@pytest.mark.parametrize("size", [8, -1])
def test_sized_iterator_over_an_indexable_source_resumes(policy, size):
    """``size`` counting (SizeBook), and size=-1: the source's StopIteration ends epochs."""
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.external_source(source=_sample_cb, batch=False), fn.random.uniform()

    def make_pipes(saved):
        return [pipe(enable_checkpointing=True, prefetch_queue_depth=2,
                     checkpoint=None if saved is None else saved[0])]

    def make_iterator(pipes):
        return DALIGenericIterator(pipes, ["x", "u"], size=size, last_batch_policy=policy)

    check_every_checkpoint_resumes(make_iterator, make_pipes)


def test_iterator_without_a_prepared_first_batch_resumes(files):
    def make_pipes(saved):
        return [reader_pipe(files, checkpoint=None if saved is None else saved[0])]

    def make_iterator(pipes):
        return DALIGenericIterator(pipes, ["label", "u", "flip"], reader_name="Reader",
                                   prepare_first_batch=False)

    check_every_checkpoint_resumes(make_iterator, make_pipes)


def test_classification_iterator_has_checkpoints_too(files):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=2)
    def pipe():
        data, label = fn.readers.file(files=files, random_shuffle=True, name="Reader")
        return fn.random.uniform(shape=[2]), label

    def make_pipes(saved):
        return [pipe(enable_checkpointing=True, checkpoint=None if saved is None else saved[0])]

    check_every_checkpoint_resumes(
        lambda pipes: DALIClassificationIterator(pipes, reader_name="Reader"), make_pipes)


def test_for_loops_with_auto_reset_resume(files):
    original = DALIGenericIterator([reader_pipe(files)], ["label", "u", "flip"],
                                   reader_name="Reader", auto_reset=True,
                                   last_batch_policy=LastBatchPolicy.PARTIAL)
    for _ in original:
        pass
    first = next(original)  # auto_reset started epoch 2
    saved = original.checkpoints()
    expected = [as_samples(b) for b in original]
    resumed = DALIGenericIterator([reader_pipe(files, checkpoint=saved[0])],
                                  ["label", "u", "flip"], reader_name="Reader",
                                  auto_reset=True, last_batch_policy=LastBatchPolicy.PARTIAL)
    assert [as_samples(b) for b in resumed] == expected
    assert first and len(expected) == len(resumed) - 1


def test_checkpoints_without_checkpointing_is_refused(files):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def plain():
        return fn.readers.file(files=files, name="Reader")[1]

    it = DALIGenericIterator([plain()], ["label"], reader_name="Reader")
    with pytest.raises(ValueError, match=r"checkpoints\(\): checkpointing is not enabled"):
        it.checkpoints()


def test_pipelines_must_agree_on_enable_checkpointing(files):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def plain(shard_id):
        return fn.readers.file(files=files, shard_id=shard_id, num_shards=2, name="R")[1]

    with pytest.raises(ValueError, match="must all have the same enable_checkpointing"):
        DALIGenericIterator([plain(0, enable_checkpointing=True), plain(1)], ["label"],
                            reader_name="R")


def test_pipelines_restored_from_pipe_checkpoint_warn_that_the_iterator_starts_over(
        files, caplog):
    pipe = reader_pipe(files)
    pipe.run()
    with caplog.at_level(logging.WARNING, logger="stoker.plugin"):
        DALIGenericIterator([reader_pipe(files, checkpoint=pipe.checkpoint())],
                            ["label", "u", "flip"], reader_name="Reader")
    assert "holds no iterator position" in caplog.text


def test_an_iterator_of_another_kind_is_refused(files):
    it = DALIGenericIterator([reader_pipe(files)], ["label", "u", "flip"], reader_name="Reader")
    saved = it.checkpoints()
    with pytest.raises(ValueError, match="taken by an iterator counting with EpochBook and "
                                         "last_batch_policy=FILL, this one counts with "
                                         "EpochBook and DROP"):
        DALIGenericIterator([reader_pipe(files, checkpoint=saved[0])], ["label", "u", "flip"],
                            reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP)
