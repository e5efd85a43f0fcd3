"""The shared reader contract on the video readers: checkpoints that resume exactly (the
same remaining clips, bit for bit, whichever call the checkpoint was taken after, with
shuffling, sharding and epochs crossed), an exact permutation per epoch, ``on_error="skip"``
at the reader, and memory that stays flat over epochs of video (benchmarks/memory_epochs.py
in a fresh process; the 20-epoch figure is the benchmark's).

Exactly once per epoch across shards under PARTIAL: tests/plugin/test_exactly_once.py."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("av")

from helpers import damaged_video, play  # noqa: E402

from stoker import Pipeline, fn, pipeline_def  # noqa: E402
from stoker.readers.video_synth import frame_indices  # noqa: E402

ROOT = pathlib.Path(__file__).parents[2]
VIDEOS = ROOT / "tests" / "data" / "video"
FILES = [str(VIDEOS / n) for n in ("h264_bframes.mp4", "vp9_vfr.webm", "mjpeg.avi")]
BATCH = 3


def _experimental(shard: int) -> tuple:
    return tuple(fn.experimental.readers.video(
        filenames=FILES, labels=[0, 1, 2], sequence_length=3, stride=2, step=5, name="R",
        random_shuffle=True, seed=5, shard_id=shard, num_shards=2,
        enable_frame_num="sequence", enable_timestamps=True))


def _legacy(shard: int) -> tuple:
    return tuple(fn.readers.video(
        filenames=FILES, labels=[0, 1, 2], sequence_length=4, step=6, name="R",
        random_shuffle=True, seed=5, shard_id=shard, num_shards=2, enable_frame_num=True))


def _uniform(shard: int) -> tuple:
    video = fn.experimental.readers.video(  # one output: no labels, no frame numbers
        filenames=FILES, sequence_length=5, uniform_sample=True, pad_mode="edge", name="R",
        random_shuffle=True, seed=5, shard_id=shard, num_shards=2, pad_last_batch=True)
    return (video,)


BODIES = {"experimental": _experimental, "legacy": _legacy, "uniform": _uniform}


def make(body: str, shard: int = 1, **kw):
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=1234)
    def pipe():
        return BODIES[body](shard)

    return pipe(**kw)


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("body", list(BODIES))
def test_resuming_after_every_call_gives_the_same_remaining_clips(body, depth):
    # Readers never stop: a reset mid-epoch, then runs that wrap past the epoch's end.
    calls = ["run"] * 3 + ["reset"] + ["run"] * 6
    original = make(body, enable_checkpointing=True, prefetch_queue_depth=depth)
    checkpoints = [original.checkpoint()]
    expected = play(original, calls, checkpoints)
    original.close()
    for k, text in enumerate(checkpoints):
        resumed = make(body, enable_checkpointing=True, prefetch_queue_depth=depth,
                       checkpoint=text)
        assert play(resumed, calls[k:]) == expected[k:], f"resumed after call {k}"
        resumed.close()


def test_each_epoch_is_a_permutation_of_the_windows_and_the_clips_hold_them():
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=1234)
    def shuffled():
        return tuple(fn.experimental.readers.video(
            filenames=FILES, labels=[0, 1, 2], sequence_length=3, stride=2, step=6,
            name="R", random_shuffle=True, seed=5, enable_frame_num="sequence"))

    pipe = shuffled()
    pipe.build()
    size = pipe.reader_meta("R")["epoch_size"]
    # DALI 2.4's new reader needs stride x length frames from a window's start (measured).
    windows = {(label, start) for label, n in enumerate((48, 30, 30))
               for start in range(0, n - 6 + 1, 6)}
    assert size == len(windows) == 18  # whole batches: epochs end with a batch
    orders = []
    for _ in range(3):
        seen = []
        for _ in range(-(-size // BATCH)):
            video, label, frames = pipe.run()
            for i in range(len(video)):
                got = frame_indices(video.at(i))
                assert got == frames.at(i).tolist()
                seen.append((int(label.at(i)[0]), got[0]))
        orders.append(seen[:size])
        pipe.reset()
    assert all(sorted(order) == sorted(windows) for order in orders)
    assert orders[0] != orders[1] != orders[2]  # a new permutation every epoch


def test_on_error_skip_drops_an_undecodable_window_and_reports_it(tmp_path):
    # A file that indexes but does not decode: the reader names it, or with
    # on_error="skip" leaves its windows out and reports them.
    good, bad = damaged_video(tmp_path)

    def build(on_error):
        pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1,
                        on_error=on_error)
        with pipe:
            pipe.set_outputs(*fn.experimental.readers.video(
                filenames=[str(good), str(bad)], sequence_length=4, step=8, name="R",
                enable_frame_num="scalar"))
        pipe.build()
        return pipe, pipe.reader_meta("R")["epoch_size"]

    strict, size = build("raise")
    with pytest.raises(RuntimeError, match="damaged.mp4"):
        for _ in range(size):
            strict.run()
    strict.close()
    lenient, _ = build("skip")
    for _ in range(size):
        video, first = lenient.run()
        for i in range(len(video)):  # what is delivered is right
            assert frame_indices(video.at(i))[0] == int(first.at(i)[0])
    assert lenient.skipped_samples()
    assert all("damaged.mp4" in s for s, _ in lenient.skipped_samples())
    lenient.close()


def test_memory_stays_flat_over_epochs_of_video(tmp_path):
    """8 epochs of the benchmark's video pipeline on a tiny generated clip set: RSS after
    epoch 2 stays within the allocator's drift (tests/test_memory_flat.py says what drifts)
    and below a leak of one batch per epoch (2 x 16 x 180 x 320 x 3 bytes = 5.5 MiB, 33 MiB
    over the six measured epochs; a leak of every clip would be four times that)."""
    pytest.importorskip("cv2")
    pytest.importorskip("skimage")
    from stoker.cli.make_videos import make_video_dataset

    make_video_dataset(tmp_path, videos=4, frames=72, classes=2, codecs=("vp9",),
                       gops=(30,), sizes=("180p",))
    root = tmp_path / "vp9_gop30_180p"
    out = tmp_path / "rss.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "memory_epochs.py"), str(root),
         "--scenario", "video", "--epochs", "8", "--batch", "2", "--threads", "2",
         "--limit", "100", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "STOKER_VIDEO_INDEX_DIR": "off", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    rss = json.loads(out.read_text())["rss_mib"]
    growth = max(rss[2:]) - rss[1]
    assert growth < 16.0, f"RSS per epoch (MiB): {[round(r, 1) for r in rss]}"
    assert np.isfinite(rss).all()
