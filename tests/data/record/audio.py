"""Records DALI 2.4's audio operators on generated audio: tests/data/dali_audio.npz.

Run with DALI installed (CPU is enough; soundfile too), from the repository root:
    /work/dali-venv/bin/python tests/data/record/audio.py

Three parts, all replayed by tests/audio/test_audio_vs_dali.py:

- every case of tests/audio/audio_cases.py (decoders.audio on WAV/FLAC/OGG/Opus bytes,
  audio_resample, spectrogram, mel_filter_bank, mfcc, to_decibels, nonsilent_region,
  preemphasis_filter, normalize and pad as ASR pipelines call them), one pipeline each;
- DALI's Jasper/QuartzNet feature pipeline (decode with per-sample speed-perturbed rates ->
  preemphasis -> spectrogram -> mel -> decibels -> normalize -> pad) on three speech-like
  WAVs, every stage's output stored;
- fn.readers.nemo_asr on a manifest of generated files (offsets, durations, filters,
  indices, text, downmix, dtype, resampling; a bad line, a line without a path).

Keys: ``in/<batch>/<i>`` inputs, ``out/<case>/<output>/<i>`` outputs, ``meta`` a JSON
string (per case: layouts or DALI's error and its stage; the nemo manifest rows).
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "tests" / "audio")]

import nvidia.dali as dali  # noqa: E402
import nvidia.dali.fn as fn  # noqa: E402
import nvidia.dali.types as types  # noqa: E402
from audio_cases import (  # noqa: E402
    ASR_STAGES,
    ASR_STORED,
    CASES,
    NEMO_CASES,
    asr_inputs,
    asr_pipeline,
    make_inputs,
    nemo_pipeline,
    run_case,
    write_manifest,
)

OUT = ROOT / "tests" / "data" / "dali_audio.npz"


class Lib:
    fn, types, Pipeline = fn, types, dali.Pipeline


def main() -> None:
    inputs = make_inputs()
    arrays: dict[str, np.ndarray] = {}
    meta: dict = {"cases": {}, "asr": {}, "nemo": {}}
    for name, samples in inputs.items():
        for i, s in enumerate(samples):
            arrays[f"in/{name}/{i}"] = np.asarray(s)
    for case in CASES:
        got = run_case(Lib, case, inputs)
        meta["cases"][case.name] = {k: v for k, v in got.items() if k != "outputs"}
        for k, out in enumerate(got.get("outputs", [])):
            for i, s in enumerate(out):
                arrays[f"out/{case.name}/{k}/{i}"] = s
        print(case.name, got.get("error") or [o[0].shape for o in got["outputs"]])
    files, rates = asr_inputs()
    for i, (f, r) in enumerate(zip(files, rates, strict=True)):
        arrays[f"in/asr_files/{i}"], arrays[f"in/asr_rates/{i}"] = f, np.asarray(r)
    pipe = asr_pipeline(Lib, files, rates)
    pipe.build()
    got = pipe.run()
    meta["asr"]["layouts"] = [str(t.layout() or "") for t in got]
    for stage, t in zip(ASR_STAGES, got, strict=True):
        for i in range(len(t) if stage in ASR_STORED else 0):
            arrays[f"out/asr/{stage}/{i}"] = np.array(t.at(i))
    with tempfile.TemporaryDirectory() as tmp:
        manifest = write_manifest(pathlib.Path(tmp))
        for name, args in NEMO_CASES.items():
            pipe = nemo_pipeline(Lib, manifest, args, batch=7)
            pipe.build()
            size = pipe.reader_meta("Reader")["epoch_size"]
            got = pipe.run()
            meta["nemo"][name] = {"epoch_size": size,
                                  "layouts": [str(t.layout() or "") for t in got]}
            for k, t in enumerate(got):
                for i in range(min(size, len(t))):  # the batch wraps: one epoch is enough
                    arrays[f"out/{name}/{k}/{i}"] = np.array(t.at(i))
            print(name, size, [np.array(t.at(0)).shape for t in got])
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT, OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
