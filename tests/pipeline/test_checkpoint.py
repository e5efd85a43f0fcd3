"""Pipeline checkpoints: ``enable_checkpointing``, ``pipe.checkpoint()``, ``checkpoint=``.

The main check: run a pipeline through a fixed script of ``run()`` and ``reset()`` calls,
take a checkpoint after every call, restore a fresh pipeline from each one, play the rest
of the script on it and compare every remaining batch bit for bit with the uninterrupted
run. The semantics followed are DALI 2.4's, measured: a checkpoint reflects the batches
``run()`` returned (not the ones made ahead), restoring happens at build(), a callback
that takes SampleInfo/BatchInfo resumes at the saved iteration and epoch, a checkpoint
taken after StopIteration restores into a pipeline whose next run() raises it again.
"""

from __future__ import annotations

import json
import warnings

import cv2
import numpy as np
import pytest
from helpers import as_samples, play

from stoker import fn, pipeline_def, types
from stoker.errors import PipelineError

BATCH = 3


@pytest.fixture(scope="module")
def jpegs(tmp_path_factory) -> list[str]:
    """Eight small JPEGs of different sizes, in two class folders."""
    root = tmp_path_factory.mktemp("ckpt_jpegs")
    rng = np.random.default_rng(0)
    paths = []
    for i in range(8):
        folder = root / f"c{i % 2}"
        folder.mkdir(exist_ok=True)
        img = rng.integers(0, 256, (20 + 2 * i, 24 + 3 * i, 3), dtype=np.uint8)
        path = folder / f"img{i}.jpg"
        cv2.imwrite(str(path), img)
        paths.append(str(path))
    return sorted(paths)


def _sample_cb(info: types.SampleInfo) -> np.ndarray:
    # Finite: 11 samples per epoch, so epochs end with StopIteration (a partial batch is
    # dropped, as in DALI).
    if info.idx_in_epoch >= 11:
        raise StopIteration
    return np.array([info.idx_in_epoch, info.iteration, info.epoch_idx], np.int64)


def _batch_cb(info: types.BatchInfo) -> list[np.ndarray]:
    return [np.full((2,), info.iteration * 10 + info.epoch_idx, np.int32)] * BATCH


# Each entry: a pipeline body (it gets the JPEG list) and whether it ends epochs by
# StopIteration (external_source) or needs scripted resets (readers never stop).
def _files(paths: list[str]) -> tuple:
    data, label = fn.readers.file(files=paths, name="Reader")
    return data, label


def _shuffled(paths: list[str]) -> tuple:
    _, label = fn.readers.file(files=paths, random_shuffle=True, name="Reader")
    return (label,)


def _sharded(paths: list[str]) -> tuple:
    _, label = fn.readers.file(files=paths, random_shuffle=True, shard_id=1, num_shards=3,
                               name="Reader")
    return (label,)


def _padded_shard(paths: list[str]) -> tuple:
    _, label = fn.readers.file(files=paths, shard_id=2, num_shards=3, pad_last_batch=True,
                               name="Reader")
    return (label,)


def _random_ops(paths: list[str]) -> tuple:
    data, label = fn.readers.file(files=paths, random_shuffle=True, name="Reader")
    image = fn.decoders.image_random_crop(data, random_area=[0.3, 1.0])
    flip = fn.random.coin_flip(probability=0.5)
    angle = fn.random.uniform(range=[-30.0, 30.0])
    noise = fn.random.normal(shape=[2])
    return image, label, flip, angle, noise


def _external(paths: list[str]) -> tuple:
    sample = fn.external_source(source=_sample_cb, batch=False)
    batch = fn.external_source(source=_batch_cb, batch=True, batch_info=True)
    return sample, batch, fn.random.uniform(), fn.random.coin_flip()


BODIES = {"files": _files, "shuffled": _shuffled, "sharded": _sharded,
          "padded_shard": _padded_shard, "random_ops": _random_ops, "external": _external}


def make(body: str, paths: list[str], **kw):
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=1234)
    def pipe():
        return BODIES[body](paths)

    return pipe(**kw)


def script(body: str) -> list[str]:
    """The calls played on every pipeline. Readers never stop, so resets are scripted (one
    after the fifth run: mid-way through the reader's epoch); an external_source epoch
    ends with StopIteration, and a reset follows it."""
    if body == "external":
        return ["run"] * 4 + ["reset"] + ["run"] * 4 + ["reset"] + ["run"] * 3
    return ["run"] * 5 + ["reset"] + ["run"] * 6


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("body", list(BODIES))
def test_resuming_after_every_call_gives_the_same_remaining_batches(jpegs, body, depth):
    calls = script(body)
    original = make(body, jpegs, enable_checkpointing=True, prefetch_queue_depth=depth)
    checkpoints = [original.checkpoint()]
    expected = play(original, calls, checkpoints)
    if body == "external":
        assert expected.count("stop") == 2  # the script crosses two epoch ends
    for k, text in enumerate(checkpoints):
        resumed = make(body, jpegs, enable_checkpointing=True, prefetch_queue_depth=depth,
                       checkpoint=text)
        assert play(resumed, calls[k:]) == expected[k:], f"resumed after call {k}"
        resumed.close()


def test_synchronous_pipelines_resume_too(jpegs):
    calls = script("random_ops")
    kw = {"enable_checkpointing": True, "exec_pipelined": False, "exec_async": False}
    original = make("random_ops", jpegs, **kw)
    checkpoints = [original.checkpoint()]
    expected = play(original, calls, checkpoints)
    for k in (0, 3, 6, 9):
        resumed = make("random_ops", jpegs, checkpoint=checkpoints[k], **kw)
        assert play(resumed, calls[k:]) == expected[k:]


def test_a_checkpoint_counts_returned_batches_not_prefetched_ones(jpegs):
    pipe = make("files", jpegs, enable_checkpointing=True, prefetch_queue_depth=3)
    pipe.run()
    pipe.run()
    saved = json.loads(pipe.checkpoint())
    assert saved["batch"] == 2 and saved["first_index"] == 2 * BATCH
    assert saved["operators"]["0:readers.file"]["position"] == 2 * BATCH
    assert saved["replay"] == 2  # run() keeps prefetch_queue_depth batches in flight


def test_the_checkpoints_seed_wins_over_the_pipelines(jpegs):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)  # no seed: random
    def pipe():
        return fn.random.uniform(), fn.readers.file(files=jpegs, random_shuffle=True)[1]

    original = pipe(enable_checkpointing=True)
    original.run()
    text = original.checkpoint()
    expected = as_samples(original.run())
    resumed = pipe(enable_checkpointing=True, checkpoint=text, seed=99)
    assert as_samples(resumed.run()) == expected


def test_checkpoint_filename_writes_what_it_returns_and_restores_as_text_or_bytes(
        jpegs, tmp_path):
    pipe = make("random_ops", jpegs, enable_checkpointing=True)
    pipe.run()
    path = tmp_path / "pipe.cpt"
    text = pipe.checkpoint(str(path))
    assert isinstance(text, str) and path.read_text() == text
    expected = as_samples(pipe.run())
    for saved in (path.read_text(), path.read_bytes()):
        resumed = make("random_ops", jpegs, enable_checkpointing=True, checkpoint=saved)
        assert not resumed.is_restored_from_checkpoint  # restored at build(), as in DALI
        resumed.build()
        assert resumed.is_restored_from_checkpoint
        assert as_samples(resumed.run()) == expected


def test_a_checkpoint_before_the_first_run_restores_the_start(jpegs):
    pipe = make("shuffled", jpegs, enable_checkpointing=True)
    text = pipe.checkpoint()  # builds the pipeline, as DALI's does
    expected = [as_samples(pipe.run()) for _ in range(3)]
    resumed = make("shuffled", jpegs, enable_checkpointing=True, checkpoint=text)
    assert [as_samples(resumed.run()) for _ in range(3)] == expected


# -- errors ------------------------------------------------------------------------------
def test_checkpoint_without_enable_checkpointing_is_refused(jpegs):
    pipe = make("files", jpegs)
    pipe.run()
    with pytest.raises(PipelineError, match="checkpointing is not enabled; create the "
                                            "pipeline with enable_checkpointing=True"):
        pipe.checkpoint()


def test_restoring_without_enable_checkpointing_is_refused_at_build(jpegs):
    text = make("files", jpegs, enable_checkpointing=True).checkpoint()
    pipe = make("files", jpegs, checkpoint=text)  # DALI also fails at build, not here
    with pytest.raises(PipelineError, match=r"Pipeline\(checkpoint=...\): checkpointing is "
                                            "not enabled"):
        pipe.build()


@pytest.mark.parametrize(("corrupt", "why"), [
    ("garbage", "not JSON"),
    ('{"format": "stoker.pipeline.checkpoint", "version": 1', "not JSON"),
    ("[1, 2]", "no stoker checkpoint header"),
    (b"\n\x16\n\x01R\x12\x11\xff", "bytes that are not UTF-8 text"),  # e.g. DALI's protobuf
    (42, "a int, not a string"),
])
def test_a_corrupt_checkpoint_is_refused_with_why(jpegs, corrupt, why):
    pipe = make("files", jpegs, enable_checkpointing=True, checkpoint=corrupt)
    with pytest.raises(PipelineError, match=f"not a valid stoker checkpoint \\({why}"):
        pipe.build()


def test_a_checkpoint_missing_a_field_is_refused(jpegs):
    doc = json.loads(make("files", jpegs, enable_checkpointing=True).checkpoint())
    del doc["operators"]
    pipe = make("files", jpegs, enable_checkpointing=True, checkpoint=json.dumps(doc))
    with pytest.raises(PipelineError, match="field 'operators' is missing"):
        pipe.build()


def test_a_checkpoint_of_another_format_version_is_refused(jpegs):
    doc = json.loads(make("files", jpegs, enable_checkpointing=True).checkpoint())
    doc["version"] = 7
    pipe = make("files", jpegs, enable_checkpointing=True, checkpoint=json.dumps(doc))
    with pytest.raises(PipelineError, match="format version 7; this stoker reads version 1"):
        pipe.build()


def test_a_checkpoint_from_another_pipeline_names_the_first_difference(jpegs):
    text = make("external", jpegs, enable_checkpointing=True).checkpoint()

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=1)
    def other():
        sample = fn.external_source(source=_sample_cb, batch=False)
        batch = fn.external_source(source=_batch_cb, batch=True, batch_info=True)
        return sample, batch, fn.random.normal(), fn.random.coin_flip()

    pipe = other(enable_checkpointing=True, checkpoint=text)
    with pytest.raises(PipelineError, match="comes from another pipeline: its operator 2 is "
                                            "fn.random.uniform, here it is fn.random.normal"):
        pipe.build()
    fewer = make("shuffled", jpegs, enable_checkpointing=True,
                 checkpoint=make("random_ops", jpegs, enable_checkpointing=True).checkpoint())
    with pytest.raises(PipelineError, match="it has 5 operators, this pipeline 1"):
        fewer.build()


def test_a_checkpoint_of_another_dataset_is_refused(jpegs):
    text = make("files", jpegs, enable_checkpointing=True).checkpoint()
    pipe = make("files", jpegs[:-1], enable_checkpointing=True, checkpoint=text)
    with pytest.raises(PipelineError, match=r"cannot restore operator 0:readers.file: the "
                                            r"checkpoint's reader read 8 samples, this one "
                                            r"\(fn.readers.file .*\) reads 7"):
        pipe.build()
    with pytest.raises(PipelineError, match="the pipeline is closed"):
        pipe.run()  # never from the start instead


# -- external_source sources whose position cannot be saved ----------------------------------
def _batches():
    for i in range(3):
        yield [np.full((1,), i, np.int32)] * BATCH


@pytest.mark.parametrize(("source", "why"), [
    (lambda: [np.zeros(1, np.int32)] * BATCH, "a callable without parameters"),
    ([[np.zeros(1, np.int32)] * BATCH] * 3, "an iterable"),
    (_batches, "a generator function"),
])
def test_a_source_whose_position_cannot_be_saved_warns_at_build(source, why):
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=source)

    with pytest.warns(UserWarning, match=f"checkpointing is enabled, but its source is {why}"):
        pipe(enable_checkpointing=True).build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe().build()  # no warning without checkpointing


def test_indexable_and_fed_sources_do_not_warn():
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return (fn.external_source(source=_sample_cb, batch=False),
                fn.external_source(source=lambda i: [np.zeros(1)] * BATCH),
                fn.external_source(name="fed"))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe(enable_checkpointing=True).build()


def test_an_iterable_source_starts_over_when_restored():
    """DALI's documented behaviour (and its warning): the checkpoint holds no position for
    an iterable, so the restored pipeline asks it from its beginning."""
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=_batches)

    with pytest.warns(UserWarning):
        original = pipe(enable_checkpointing=True)
        original.run()
        original.run()
    with pytest.warns(UserWarning):
        resumed = pipe(enable_checkpointing=True, checkpoint=original.checkpoint())
        assert int(resumed.run()[0].at(0)[0]) == 0



@pytest.mark.parametrize("depth", [1, 3])
def test_a_restored_pipeline_checkpoints_like_the_original(jpegs, depth):
    """Checkpointing a restored pipeline before it runs, or after a reset it replays, gives
    a checkpoint that resumes the same way (chains of restarts)."""
    calls = script("random_ops")
    kw = {"enable_checkpointing": True, "prefetch_queue_depth": depth}
    original = make("random_ops", jpegs, **kw)
    checkpoints = [original.checkpoint()]
    expected = play(original, calls, checkpoints)
    for k in (4, 5, 6):  # around the reset
        # Restored and checkpointed at once: the same position.
        text = make("random_ops", jpegs, checkpoint=checkpoints[k], **kw).checkpoint()
        for hop in range(2):
            resumed = make("random_ops", jpegs, checkpoint=text, **kw)
            got = play(resumed, calls[k + hop:k + hop + 1])
            assert got == expected[k + hop:k + hop + 1], f"hop {hop} after call {k}"
            text = resumed.checkpoint()
        assert play(make("random_ops", jpegs, checkpoint=text, **kw), calls[k + 2:]) == \
            expected[k + 2:]
