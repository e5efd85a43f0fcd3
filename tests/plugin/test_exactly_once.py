"""Every epoch delivers every sample exactly once across all shards under PARTIAL, for
every reader, any dataset size, batch size, shard count, padding, stickiness and
shuffling (property test). Container datasets span three files (tests/reader_datasets.py),
so shards and epochs cross file boundaries. readers.nemo_asr has its own test below."""

from __future__ import annotations

import json
import os
import pathlib
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reader_datasets import READERS, make, output, reader_fn

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy  # noqa: E402

if "caffe" in READERS:
    pytest.importorskip("lmdb")

# random_shuffle with shuffle_after_epoch: container readers take both (DALI does).
BOTH_SHUFFLES = {"tfrecord", "webdataset", "mxnet"}


_DATASETS: dict = {}


def _dataset(root, reader: str, n: int) -> dict:
    """The reader's arguments for a dataset of n samples (written once per session)."""
    key = (str(root), reader, n)
    if key not in _DATASETS:
        _DATASETS[key] = make(reader, os.path.join(str(root), f"exactly_once_{reader}_n{n}"),
                              n)
    return _DATASETS[key]


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 23), bs=st.integers(1, 6), shards=st.integers(1, 3),
       pad=st.booleans(), stick=st.booleans(), shuffle=st.booleans(),
       epoch_shuffle=st.booleans(), one_per_iterator=st.booleans())
def test_partial_epochs_cover_every_sample_once(tmp_path_factory, reader, n, bs, shards, pad,
                                                stick, shuffle, epoch_shuffle,
                                                one_per_iterator):
    shards = min(shards, n)
    kwargs = _dataset(tmp_path_factory.getbasetemp(), reader, n)
    if epoch_shuffle:
        stick = False
        shuffle = shuffle and reader in BOTH_SHUFFLES
    if epoch_shuffle and reader in ("caffe", "caffe2"):
        epoch_shuffle = False  # DALI's LMDB readers have no shuffle_after_epoch
    extra = {"shuffle_after_epoch": True} if epoch_shuffle else {}

    def make_pipe(shard):
        @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=3)
        def pipe():
            outs = reader_fn(reader)(name="R", shard_id=shard, num_shards=shards,
                                               pad_last_batch=pad, stick_to_shard=stick,
                                               random_shuffle=shuffle, seed=9, **extra,
                                               **kwargs)
            return output(reader, outs)
        return pipe()

    groups = [[s] for s in range(shards)] if one_per_iterator else [list(range(shards))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # readers indexing files without an index
        iters = [DALIGenericIterator([make_pipe(s) for s in g], ["data"], reader_name="R",
                                     last_batch_policy=LastBatchPolicy.PARTIAL,
                                     auto_reset=True) for g in groups]
    for _ in range(3):
        seen: Counter = Counter()
        for it in iters:
            for batch in it:
                for d in batch:
                    data = d["data"]
                    seen.update((data[:, 0].to(torch.int32) + 256 * data[:, 1].to(
                        torch.int32)).tolist())
        assert sorted(seen) == list(range(n)), f"missing {set(range(n)) - set(seen)}"
        assert max(seen.values()) == 1, f"repeated {[k for k, v in seen.items() if v > 1]}"


def _manifest(root: pathlib.Path, n: int) -> str:
    from stoker.kernels.cpu.audio.decode import pcm16_wav

    folder = root / f"exactly_once_nemo_n{n}"
    manifest = folder / "manifest.json"
    if not manifest.exists():
        folder.mkdir(parents=True)
        lines = []
        for i in range(n):
            path = folder / f"{i:03d}.wav"
            pcm16_wav(np.full(40 + i, i, np.int16), 8000).tofile(path)
            lines.append(json.dumps({"audio_filepath": str(path), "duration": (40 + i) / 8000}))
        manifest.write_text("\n".join(lines) + "\n")
    return str(manifest)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 17), bs=st.integers(1, 5), shards=st.integers(1, 3),
       pad=st.booleans(), stick=st.booleans(), shuffle=st.booleans())
def test_nemo_asr_partial_epochs_cover_every_sample_once(tmp_path_factory, n, bs, shards, pad,
                                                         stick, shuffle):
    from stoker import types

    shards = min(shards, n)
    manifest = _manifest(tmp_path_factory.getbasetemp(), n)

    def make(shard):
        @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=3)
        def pipe():
            audio, _, _ = fn.readers.nemo_asr(manifest_filepaths=[manifest], name="R",
                                              shard_id=shard, num_shards=shards,
                                              pad_last_batch=pad, stick_to_shard=stick,
                                              random_shuffle=shuffle, seed=9,
                                              dtype=types.INT16)
            return fn.pad(audio, fill_value=-1)
        return pipe()

    iters = [DALIGenericIterator([make(s)], ["audio"], reader_name="R",
                                 last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
             for s in range(shards)]
    for _ in range(2):
        seen: Counter = Counter()
        for it in iters:
            for batch in it:
                seen.update(batch[0]["audio"][:, 0].tolist())
        assert sorted(seen) == list(range(n)), f"missing {set(range(n)) - set(seen)}"
        assert max(seen.values()) == 1, f"repeated {[k for k, v in seen.items() if v > 1]}"


VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"
# 48, 30 and 30 frames of 64 x 48 (B-frames, a variable frame rate, all key frames):
# windows of 2 frames every `step` frames, a few dozen per epoch.
CLIPS = {"h264_bframes.mp4": 48, "vp9_vfr.webm": 30, "mjpeg.avi": 30}


@settings(max_examples=15, deadline=None)
@given(step=st.integers(4, 17), bs=st.integers(1, 6), shards=st.integers(1, 3),
       pad=st.booleans(), stick=st.booleans(), shuffle=st.booleans(),
       reader=st.sampled_from(["experimental.readers.video", "readers.video"]))
def test_partial_epochs_cover_every_video_window_once(step, bs, shards, pad, stick, shuffle,
                                                      reader):
    """The video readers share readers.file's order: every window (file label, first
    frame) exactly once per epoch across shards, the clips decoded from the right frames."""
    pytest.importorskip("av")
    from stoker.readers.video_synth import frame_index

    files = [str(VIDEOS / c) for c in CLIPS]
    read = fn.experimental.readers.video if reader.startswith("exp") else fn.readers.video
    frame_num = "scalar" if reader.startswith("exp") else True

    def make(shard):
        @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=3)
        def pipe():
            video, label, first = read(
                filenames=files, labels=[0, 1, 2], sequence_length=2, step=step, name="R",
                enable_frame_num=frame_num, shard_id=shard, num_shards=shards,
                pad_last_batch=pad, stick_to_shard=stick, random_shuffle=shuffle, seed=9)
            return video, label, first
        return pipe()

    expected = {(label, start) for label, n in enumerate(CLIPS.values())
                for start in range(0, n - 1, step)}
    it = DALIGenericIterator([make(s) for s in range(shards)], ["video", "label", "first"],
                             reader_name="R", last_batch_policy=LastBatchPolicy.PARTIAL,
                             auto_reset=True)
    for _ in range(2):
        seen: Counter = Counter()
        for batch in it:
            for d in batch:
                for video, label, first in zip(d["video"].numpy(), d["label"].numpy(),
                                               d["first"].numpy(), strict=True):
                    assert frame_index(video[0]) == int(first[0])
                    seen[(int(label[0]), int(first[0]))] += 1
        assert set(seen) == expected, f"missing {expected - set(seen)}"
        assert max(seen.values()) == 1, f"repeated {[k for k, v in seen.items() if v > 1]}"
