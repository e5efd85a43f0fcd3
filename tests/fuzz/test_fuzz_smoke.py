"""A short run of the parser fuzzer (fuzz/fuzz_parsers.py) in CI: 0 crashes, 0 hangs.

The full run is 10,000 inputs per format (``.venv/bin/python fuzz/fuzz_parsers.py``);
this one takes 300 per format, a few seconds in all, through the same parent/child
machinery, so a crash that kills the process is caught as well as an exception.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "fuzz", "fuzz_parsers.py")
COUNT = 300

pytest.importorskip("cv2")
pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("fuzz")
    report = out / "results.json"
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--count", str(COUNT), "--seed", "1", "--json", str(report),
         "--crash-dir", str(out / "crashes")],
        capture_output=True, text=True, timeout=300)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return {r["format"]: r for r in json.loads(report.read_text())}


FORMATS = ("jpeg", "jpeg_opencv", "png", "bmp", "tiff", "webp", "pnm", "file_list", "glob")


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzzing_finds_no_crash_and_no_hang(results, fmt):
    r = results[fmt]
    assert r["inputs"] == COUNT
    assert r["crashes"] == 0 and r["hangs"] == 0, "\n".join(r["findings"])
    assert r["errors"] + r["accepted"] + r["mismatches"] == COUNT


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "glob"])
def test_fuzz_inputs_reach_both_refusal_and_acceptance(results, fmt):
    # A fuzzer whose mutations all fail at the magic bytes (or never break anything)
    # tests nothing: each format must see both outcomes.
    r = results[fmt]
    assert r["errors"] >= COUNT // 20 and r["accepted"] >= COUNT // 50, r


def test_harness_restarts_after_a_crash_and_a_hang_and_saves_both(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("fuzz_parsers", SCRIPT)
    fuzz_parsers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz_parsers)
    monkeypatch.setenv("FUZZ_SELFTEST", "crash:5,hang:9")
    r = fuzz_parsers.fuzz_format("file_list", 0, 12, 1.0, 0, str(tmp_path), quiet=True)
    assert (r["inputs"], r["crashes"], r["hangs"], r["restarts"]) == (12, 1, 1, 2)
    assert r["errors"] + r["accepted"] + r["mismatches"] == 10
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["file_list-s0-i5-crash.bin", "file_list-s0-i5-crash.txt",
                     "file_list-s0-i9-hang.bin", "file_list-s0-i9-hang.txt"]
    assert "signal 6" in (tmp_path / "file_list-s0-i5-crash.txt").read_text()
    # A saved input replays in-process (here it is harmless: the crash was staged).
    monkeypatch.delenv("FUZZ_SELFTEST")
    assert fuzz_parsers.replay("file_list", str(tmp_path / "file_list-s0-i5-crash.bin"), 5,
                               2.0) == 0
