"""fn.readers.nemo_asr: the manifest rules DALI 2.4 follows (measured; its recorded outputs
are replayed in test_audio_vs_dali.py), and readers.file's contract: sharding, shuffles,
epoch sizes, checkpoints, on_error="skip", errors naming the file."""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import numpy as np
import pytest
from audio_cases import speech_like

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import Pipeline, fn, types
from stoker.errors import SampleError
from stoker.kernels.cpu.audio.decode import pcm16_wav
from stoker.readers.index import DatasetError

SR = 8000


def write(folder: pathlib.Path, rows: list, name: str = "manifest.json") -> str:
    path = folder / name
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write((json.dumps(row, ensure_ascii=False) if isinstance(row, dict) else row)
                    + "\n")
    return str(path)


def wav(folder: pathlib.Path, name: str, samples: np.ndarray) -> str:
    path = folder / name
    pcm16_wav(samples, SR).tofile(path)
    return str(path)


@pytest.fixture
def dataset(tmp_path):
    """Ten WAVs whose first sample is their number (so a batch says which files it has)."""
    rows = []
    for i in range(10):
        x = (speech_like(800 + 80 * i, i, SR) * 8000).astype(np.int16)
        x[0] = i
        rows.append({"audio_filepath": wav(tmp_path, f"{i}.wav", x),
                     "duration": len(x) / SR, "text": f"utterance {i}"})
    return tmp_path, rows


def pipeline(manifests, batch_size=4, **kwargs):
    pipe_kwargs = {k: kwargs.pop(k) for k in ("on_error", "enable_checkpointing", "checkpoint",
                                              "num_threads") if k in kwargs}
    pipe = Pipeline(batch_size=batch_size, device_id=None, seed=5,
                    **{"num_threads": 1, **pipe_kwargs})
    with pipe:
        outs = fn.readers.nemo_asr(manifest_filepaths=manifests, name="Reader", **kwargs)
        pipe.set_outputs(*(outs if isinstance(outs, list | tuple) else [outs]))
    pipe.build()
    return pipe


def ids(batch) -> list[int]:
    """The file numbers in a batch of int16 audio."""
    return [int(np.array(batch.at(i))[0]) for i in range(len(batch))]


def test_outputs_types_and_text(dataset):
    folder, rows = dataset
    pipe = pipeline([write(folder, rows)], read_idxs=True, dtype=types.INT16)
    audio, rate, text, idx = pipe.run()
    assert ids(audio) == [0, 1, 2, 3]
    assert np.array(audio.at(1)).dtype == np.int16 and np.array(audio.at(1)).shape == (880,)
    assert np.array(rate.at(0)).shape == () and float(np.array(rate.at(0))) == SR
    assert bytes(np.array(text.at(2))) == b"utterance 2"  # no terminator
    assert np.array(idx.at(3)).tolist() == [3] and np.array(idx.at(3)).dtype == np.int64


def test_offset_duration_and_filters_as_dali(tmp_path):
    ramp = np.arange(8000, dtype=np.int16)
    path = wav(tmp_path, "ramp.wav", ramp)
    rows = [{"audio_filepath": path, "offset": 0.10003, "duration": 0.3},  # frames truncate
            {"audio_filepath": path, "offset": 0.75},  # to the end
            {"audio_filepath": path, "duration": 0.0},  # nothing
            {"audio_filepath": path, "offset": -1.0, "duration": 0.5}]  # ignored offset
    pipe = pipeline([write(tmp_path, rows)], batch_size=4, dtype=types.INT16)
    audio, _, _ = pipe.run()
    got = [np.array(audio.at(i)) for i in range(4)]
    assert got[0][0] == 800 and len(got[0]) == 2400
    assert got[1][0] == 6000 and len(got[1]) == 2000
    assert len(got[2]) == 0
    assert got[3][0] == 0 and len(got[3]) == 4000
    # min/max_duration compare the manifest's duration (float32 limits, inclusive)
    rows = [{"audio_filepath": path, "duration": d} for d in (0.3, 0.30003, 0.5, 1.0)] + [
        {"audio_filepath": path}]
    manifest = write(tmp_path, rows, "durations.json")
    sizes = {kw: pipeline([manifest], **dict([kw])).epoch_size("Reader") for kw in
             (("min_duration", 0.3), ("max_duration", 0.3), ("max_duration", 0.5),
              ("min_duration", 0.31))}
    assert sizes == {("min_duration", 0.3): 3, ("max_duration", 0.3): 2,
                     ("max_duration", 0.5): 4, ("min_duration", 0.31): 2}


def test_indices_count_per_manifest_after_filtering(dataset):
    folder, rows = dataset
    first = write(folder, rows[:5], "a.json")
    second = write(folder, rows[5:], "b.json")
    pipe = pipeline([first, second], batch_size=10, read_idxs=True, read_text=False,
                    read_sample_rate=False, min_duration=0.115)
    audio, idx = pipe.run()
    assert pipe.epoch_size("Reader") == 8  # files 0 and 1 are under 0.115 s
    assert [int(np.array(idx.at(i))[0]) for i in range(8)] == [0, 1, 2, 0, 1, 2, 3, 4]


def test_bad_lines_are_skipped_with_a_warning_naming_them(dataset):
    folder, rows = dataset
    manifest = write(folder, [rows[0], "not json", {"duration": 1.0}, {**rows[1], "text": 5},
                              {**rows[2], "duration": "long"}, rows[3]])
    with pytest.warns(UserWarning) as caught:
        pipe = pipeline([manifest], batch_size=2)
    lines = [str(w.message) for w in caught]
    assert [int(m.split("skipping line ")[1].split()[0]) for m in lines] == [2, 3, 4, 5]
    assert all("manifest.json" in m and "fn.readers.nemo_asr" in m for m in lines)
    assert "(text is not a string)" in lines[2] and "(duration is not a number)" in lines[3]
    assert pipe.epoch_size("Reader") == 2


def test_manifest_errors_name_the_manifest(tmp_path):
    with pytest.raises(DatasetError, match="cannot read manifest .*missing.json"):
        pipeline([str(tmp_path / "missing.json")])
    empty = write(tmp_path, [], "empty.json")
    with pytest.raises(DatasetError, match="no audio file left"):
        pipeline([empty])


def test_missing_and_corrupt_files_fail_naming_them(dataset):
    folder, rows = dataset
    (folder / "bad.wav").write_bytes(b"RIFF garbage")
    rows = rows[:3] + [{"audio_filepath": str(folder / "gone.wav")},
                       {"audio_filepath": str(folder / "bad.wav")}]
    pipe = pipeline([write(folder, rows)], batch_size=4)
    with pytest.raises(SampleError, match="cannot read file .*gone.wav"):
        pipe.run()
    pipe = pipeline([write(folder, rows[:3] + rows[4:])], batch_size=4)
    with pytest.raises(SampleError, match="cannot decode .*bad.wav"):
        pipe.run()


def test_bad_files_are_skipped_under_on_error_skip(dataset):
    folder, rows = dataset
    (folder / "bad.wav").write_bytes(b"RIFF garbage")
    rows = rows[:3] + [{"audio_filepath": str(folder / "gone.wav")}, rows[3],
                       {"audio_filepath": str(folder / "bad.wav")}, rows[4]]
    pipe = pipeline([write(folder, rows)], batch_size=3, on_error="skip", dtype=types.INT16)
    seen = []
    for _ in range(3):
        audio, _, _ = pipe.run()
        seen += ids(audio)
    assert sorted(seen[:5]) == [0, 1, 2, 3, 4]
    assert {pathlib.Path(p).name for p, _ in pipe.skipped_samples()} == {"gone.wav", "bad.wav"}


@pytest.mark.parametrize("shuffle", ["none", "random_shuffle", "shuffle_after_epoch"])
def test_shards_cover_the_dataset_once_per_epoch(dataset, shuffle):
    folder, rows = dataset
    manifest = write(folder, rows)
    flags = {} if shuffle == "none" else {shuffle: True}
    for epoch in range(2):
        seen: Counter = Counter()
        for shard in range(3):
            pipe = pipeline([manifest], batch_size=1, shard_id=shard, num_shards=3,
                            stick_to_shard=shuffle != "shuffle_after_epoch",
                            dtype=types.INT16, **flags)
            meta = pipe.reader_meta("Reader")
            assert meta["epoch_size"] == 10 and meta["number_of_shards"] == 3
            size = len(range(10 * shard // 3, 10 * (shard + 1) // 3))
            for _ in range(epoch * size):  # the previous epochs
                pipe.run()
            for _ in range(size):
                seen.update(ids(pipe.run()[0]))
        assert sorted(seen) == list(range(10)) and max(seen.values()) == 1


def test_random_shuffle_is_a_permutation_per_epoch(dataset):
    folder, rows = dataset
    pipe = pipeline([write(folder, rows)], batch_size=5, random_shuffle=True,
                    dtype=types.INT16)
    epochs = [ids(pipe.run()[0]) + ids(pipe.run()[0]) for _ in range(3)]
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2]


def test_checkpoints_resume_exactly(dataset):
    folder, rows = dataset
    manifest = write(folder, rows)
    kw = {"batch_size": 3, "random_shuffle": True, "dtype": types.INT16,
          "enable_checkpointing": True}
    original = pipeline([manifest], **kw)
    for _ in range(4):
        original.run()
    saved = original.checkpoint()
    expected = [ids(original.run()[0]) for _ in range(5)]
    resumed = pipeline([manifest], checkpoint=saved, **kw)
    assert [ids(resumed.run()[0]) for _ in range(5)] == expected


def test_decoding_with_resampling_equals_the_decoder(dataset):
    folder, rows = dataset
    pipe = pipeline([write(folder, rows[:4])], batch_size=4, sample_rate=11025.0,
                    quality=30.0, read_text=False, num_threads=2)
    audio, rate = pipe.run()
    assert float(np.array(rate.at(0))) == SR  # the file's rate, as DALI reports it
    files = [np.fromfile(r["audio_filepath"], np.uint8) for r in rows[:4]]
    dec = Pipeline(batch_size=4, num_threads=1, device_id=None)
    with dec:
        a, _ = fn.decoders.audio(fn.external_source(source=[files], cycle=True),
                                 sample_rate=11025.0, quality=30.0, downmix=True)
        dec.set_outputs(a)
    dec.build()
    (want,) = dec.run()
    for i in range(4):
        assert np.array_equal(np.array(audio.at(i)), np.array(want.at(i)))
