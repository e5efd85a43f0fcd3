"""benchmarks/gpu_train.py runs end to end (``--smoke``: 8 tiny images) on CPU tensors."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

pytest.importorskip("torch")


def test_gpu_train_benchmark_smoke_run_prints_a_table(monkeypatch, capsys) -> None:
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "gpu_train.py"
    spec = importlib.util.spec_from_file_location("gpu_train_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = bench.main(["--smoke", "--peers", "stoker-mixed,stoker-cpu,torchvision-gpu"])
    out = capsys.readouterr().out
    assert "| peer | 1 threads | 2 threads |" in out
    for peer in ("stoker-mixed", "stoker-cpu"):
        assert all(isinstance(v, float) and v > 0 for v in results[peer].values()), peer
    tv = results["torchvision-gpu"]
    assert all(isinstance(v, float) for v in tv.values()) or \
        "torchvision is not installed" in out
