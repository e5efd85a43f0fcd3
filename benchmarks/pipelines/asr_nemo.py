"""fn.readers.nemo_asr alone, stoker against DALI's CPU reader on the same manifest.

DALI's reader decodes (and resamples) in its own prefetch thread; stoker's on a pool of
the pipeline's threads, the next batch while this one is handed out. Two pipelines: the
files at their own rate (reading and decoding), and resampled to 11,025 Hz (the resampler
dominates). Data: ``$STOKER_NEMO_DATA`` (a folder with manifest.json), or 128 speech-like
16 kHz WAVs of 2-16 s generated once into ``$TMPDIR/stoker-nemo-bench``.

    stoker bench benchmarks/pipelines/asr_nemo.py:reader --compare dali --batch-size 32
    stoker bench benchmarks/pipelines/asr_nemo.py:resampled --compare dali --batch-size 32
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
import wave

import numpy as np

from stoker import fn, pipeline_def, types  # the bench runs it with DALI's modules too

RATE = 16000


def manifest(files: int = 128) -> str:
    if os.environ.get("STOKER_NEMO_DATA"):
        return os.path.join(os.environ["STOKER_NEMO_DATA"], "manifest.json")
    root = pathlib.Path(tempfile.gettempdir()) / "stoker-nemo-bench"
    path = root / "manifest.json"
    if not path.exists():
        root.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(0)
        lines = []
        for i in range(files):
            seconds = rng.uniform(2, 16)
            t = np.arange(int(seconds * RATE)) / RATE
            voiced = sum(np.sin(2 * np.pi * rng.uniform(90, 220) * h * t) / h for h in range(1, 8))
            x = 0.1 * voiced * np.clip(np.sin(2 * np.pi * 3 * t), 0, None) + \
                0.002 * rng.standard_normal(t.size)
            wav = root / f"{i:05d}.wav"
            with wave.open(str(wav), "wb") as f:
                f.setnchannels(1)
                f.setsampwidth(2)
                f.setframerate(RATE)
                f.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())
            lines.append(json.dumps({"audio_filepath": str(wav), "duration": seconds,
                                     "text": f"utterance {i}"}))
        tmp = root / "manifest.tmp"
        tmp.write_text("\n".join(lines) + "\n")
        tmp.rename(path)
    return str(path)


@pipeline_def
def reader():
    audio, rate, text = fn.readers.nemo_asr(manifest_filepaths=[manifest()], dtype=types.FLOAT,
                                            downmix=True, random_shuffle=True, seed=1,
                                            name="Reader")
    return audio, rate, text


@pipeline_def
def resampled():
    audio, _ = fn.readers.nemo_asr(manifest_filepaths=[manifest()], sample_rate=11025.0,
                                   read_text=False, random_shuffle=True, seed=1, name="Reader")
    return audio
