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
