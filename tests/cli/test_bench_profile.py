"""stoker bench and stoker profile run end to end and report what they promise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from stoker.cli.main import main


def test_bench_prints_rates_and_the_table_columns():
    out = subprocess.run(
        [sys.executable, "-m", "stoker.cli.main", "bench", "cifar", "--compare", "",
         "--runs", "2", "--seconds", "0.3", "--batch-size", "64"],
        capture_output=True, text=True, timeout=120, check=True).stdout
    assert "run 2: stoker" in out
    header = next(line for line in out.splitlines() if "images/s" in line and "peer" in line)
    for column in ("stoker/peer", "CPU used", "1st batch", "peak RSS"):
        assert column in header
    table = out.split(header, 1)[1]
    row = next(line for line in table.splitlines() if line.strip().startswith("stoker "))
    assert "1.00x" in row and "MB" in row


def test_bench_skips_a_peer_that_is_not_installed(monkeypatch, capsys):
    from stoker.cli import bench

    monkeypatch.setattr(bench, "available", lambda name: name == "stoker")
    assert main(["bench", "cifar", "--compare", "dali", "--runs", "1", "--seconds", "0.2",
                 "--batch-size", "32"]) == 0
    assert "dali: not installed, skipped" in capsys.readouterr().out


def test_profile_writes_a_chrome_trace_and_a_table(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    assert main(["profile", "cifar", "--batches", "5", "--warmup", "1", "--batch-size", "32",
                 "--out", str(trace)]) == 0
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert {"crop_mirror_normalize", "external_source", "batch"} <= names
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
    table = capsys.readouterr().out
    assert "crop_mirror_normalize" in table and "share" in table


def test_profile_runs_a_pipeline_from_a_user_file(tmp_path, capsys):
    script = tmp_path / "mine.py"
    script.write_text(
        "import numpy as np\n"
        "from stoker import fn, pipeline_def\n"
        "@pipeline_def\n"
        "def pipeline():\n"
        "    return fn.random.normal(shape=[4]) * 2\n")
    assert main(["profile", f"{script}:pipeline", "--batches", "3", "--warmup", "1",
                 "--batch-size", "8", "--out", str(tmp_path / "t.json")]) == 0
    assert "random.normal" in capsys.readouterr().out


def test_a_run_answers_once_the_peers_processes_are_idle():
    """The work a peer goes on with after a run (here a child process that keeps busy for
    0.4 s) must end before the next peer's run starts."""
    import time

    from stoker.cli import bench_worker

    busy = "import time\nt = time.perf_counter()\nwhile time.perf_counter() - t < 0.4: pass"
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", busy])
    try:
        time.sleep(0.15)  # (the child started and is spinning)
        bench_worker.settle(os.getpid())
        assert time.perf_counter() - start >= 0.4
    finally:
        child.kill()
        child.wait()
    start = time.perf_counter()
    bench_worker.settle(os.getpid())  # idle: at once, or nearly
    assert time.perf_counter() - start < 1.0


def test_bench_runs_a_users_pipeline_file(tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text("from stoker import fn, pipeline_def, types\n\n\n@pipeline_def\n"
                    "def crops():\n    v = fn.random.uniform(range=(0.0, 1.0), shape=(4,))\n"
                    "    return fn.cast(v * 9.0, dtype=types.UINT8)\n")
    assert main(["bench", f"{path}:crops", "--compare", "torchvision", "--runs", "1",
                 "--seconds", "0.2", "--batch-size", "8"]) == 0
    out = capsys.readouterr().out
    assert "torchvision: no recipe for a user's pipeline file, skipped" in out
    table = out.split("peak RSS", 1)[1].strip().splitlines()
    assert len(table) == 1 and table[0].split()[0] == "stoker" and "1.00x" in table[0]


def test_bench_refuses_what_is_neither_a_name_nor_a_file(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["bench", "trian", "--runs", "1"])
    assert "pipeline 'trian' is neither one of cifar, train" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no pipeline file 'missing.py'"):
        main(["bench", "missing.py", "--compare", "", "--runs", "1", "--seconds", "0.1"])


def test_bench_stops_when_stoker_cannot_build_the_pipeline(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("from stoker import fn, pipeline_def\n\n\n@pipeline_def\n"
                    "def pipeline():\n    return fn.random.uniform(range=(1.0, 0.0), bad=1)\n")
    assert main(["bench", str(path), "--compare", "", "--runs", "1", "--seconds", "0.1"]) == 1
    out = capsys.readouterr().out
    assert "stoker: failed to start (exit code 1), skipped" in out
    assert "stoker did not start (its error is above): nothing to compare" in out
