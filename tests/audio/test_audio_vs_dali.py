"""The audio operators against DALI 2.4's recorded outputs (tests/data/dali_audio.npz,
recorded by tests/data/record/audio.py from the cases in audio_cases.py).

Each case runs on stoker with the very inputs DALI saw; every output sample must have
DALI's type and shape and values within the case's tolerance (``atol + rtol * max|DALI
sample|``; 0 means equal). Where DALI raised, stoker must raise, at the same stage or
earlier. Then DALI's ASR feature pipeline, stage by stage, and nemo_asr on the manifest.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from audio_cases import (
    ASR_STORED,
    CASES,
    NEMO_CASES,
    asr_pipeline,
    nemo_pipeline,
    run_case,
    write_manifest,
)

import stoker
import stoker.fn  # noqa: F401  (registers every operator)

DATA = np.load(pathlib.Path(__file__).parents[1] / "data" / "dali_audio.npz")
META = json.loads(str(DATA["meta"]))
STAGES = ("call", "build", "run")


class Lib:
    fn, types, Pipeline = stoker.fn, stoker.types, stoker.Pipeline


def _batch(prefix: str) -> list[np.ndarray]:
    out, i = [], 0
    while f"{prefix}/{i}" in DATA.files:
        out.append(DATA[f"{prefix}/{i}"])
        i += 1
    return out


def _inputs() -> dict[str, list[np.ndarray]]:
    names = {k.split("/")[1] for k in DATA.files if k.startswith("in/")}
    return {name: _batch(f"in/{name}") for name in names}


INPUTS = _inputs()


def assert_close(where: str, ours: np.ndarray, dali: np.ndarray, atol: float = 0.0,
                 rtol: float = 0.0) -> None:
    assert ours.dtype == dali.dtype, f"{where}: type {ours.dtype}, DALI {dali.dtype}"
    assert ours.shape == dali.shape, f"{where}: shape {ours.shape}, DALI {dali.shape}"
    if not dali.size:
        return
    diff = np.abs(ours.astype(np.float64) - dali.astype(np.float64))
    limit = atol + rtol * float(np.abs(dali.astype(np.float64)).max())
    worst = float(diff.max())
    assert worst <= limit, (f"{where}: differs from DALI by up to {worst:.3g} (allowed "
                            f"{limit:.3g}) at {np.unravel_index(diff.argmax(), diff.shape)}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_dali(case):
    want = META["cases"][case.name]
    got = run_case(Lib, case, INPUTS)
    if "error" in want:
        stage, text = want["error"]
        assert "error" in got, f"DALI raised at {stage} ({text[:200]}), stoker did not"
        assert STAGES.index(got["error"][0]) <= STAGES.index(stage), got["error"]
        return
    assert "error" not in got, got["error"]
    assert got["layouts"] == want["layouts"]
    for k, out in enumerate(got["outputs"]):
        dali = _batch(f"out/{case.name}/{k}")
        assert len(out) == len(dali)
        for i, (ours, theirs) in enumerate(zip(out, dali, strict=True)):
            assert_close(f"{case.name} output {k} sample {i}", ours, theirs, case.atol,
                         case.rtol)


# The ASR pipeline's stages: float32 arithmetic in a different order (FFT, sums) moves the
# last bits; decibels amplify the relative error of tiny mel energies, normalize divides by
# a per-band deviation: tolerances grow along the chain.
ASR_TOLERANCE = {"audio": (1e-6, 0.0), "mel": (0.0, 1e-5), "pad": (2e-4, 0.0)}


def test_asr_pipeline_matches_dali_stage_by_stage():
    files, rates = _batch("in/asr_files"), [r[()] for r in _batch("in/asr_rates")]
    pipe = asr_pipeline(Lib, files, rates)
    pipe.build()
    got = dict(zip(("audio", "preemphasis", "spectrogram", "mel", "decibels", "normalize",
                    "pad"), pipe.run(), strict=True))
    assert [str(t.layout() or "") for t in got.values()] == META["asr"]["layouts"]
    for stage in ASR_STORED:
        atol, rtol = ASR_TOLERANCE[stage]
        for i, dali in enumerate(_batch(f"out/asr/{stage}")):
            assert_close(f"asr {stage} sample {i}", np.array(got[stage].at(i)), dali, atol,
                         rtol)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    return write_manifest(tmp_path_factory.mktemp("nemo"))


@pytest.mark.parametrize("name", sorted(NEMO_CASES))
def test_nemo_asr_matches_dali(name, manifest):
    want = META["nemo"][name]
    with pytest.warns(UserWarning) as caught:  # the manifest's two bad lines
        pipe = nemo_pipeline(Lib, manifest, NEMO_CASES[name], batch=7)
        pipe.build()
    assert ["skipping line" in str(w.message) for w in caught] == [True, True]
    assert pipe.reader_meta("Reader")["epoch_size"] == want["epoch_size"]
    got = pipe.run()
    assert [str(t.layout() or "") for t in got] == want["layouts"]
    for k, t in enumerate(got):
        dali = _batch(f"out/{name}/{k}")
        assert len(dali) == min(want["epoch_size"], len(t))
        for i, theirs in enumerate(dali):
            assert_close(f"{name} output {k} sample {i}", np.array(t.at(i)), theirs,
                         1e-6 if "resample" in name else 0.0)
