"""``stoker build-kernels`` compiles a pipeline's kernels into the cache, so that the same
pipeline in a later process compiles nothing (the install step behind a fast first batch).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stoker.cli.build_kernels import build_kernels

# Counts the functions numba compiles (a cache hit loads without calling the compiler),
# while the cifar benchmark pipeline builds and runs.
_COUNT = """
import numba.core.compiler as compiler
calls = []
original = compiler.compile_extra
def counting(*args, **kwargs):
    calls.append(1)
    return original(*args, **kwargs)
compiler.compile_extra = counting
import stoker
from stoker.cli import pipelines
pipe = pipelines.build("cifar", stoker, None, 4, 1)
pipe.run()
print(len(calls))
"""


def _compiled_by_cifar(cache: str) -> int:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _COUNT], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.split()[-1])


def test_a_built_pipeline_compiles_nothing_in_a_new_process(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "before"))
    assert _compiled_by_cifar(str(tmp_path / "before")) > 0  # an empty cache compiles
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "built"))
    assert build_kernels(quiet=True, groups=(("cifar",),)) == 0
    assert _compiled_by_cifar(str(tmp_path / "built")) == 0


def test_a_failing_worker_fails_the_command(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert build_kernels(quiet=True, groups=(("no-such-pipeline",),)) != 0
    assert "no-such-pipeline" in capsys.readouterr().err


def test_the_speech_group_runs_dalis_asr_recipe(tmp_path, monkeypatch) -> None:
    """The "asr" group builds and runs its pipeline (or is skipped without the audio
    extra): a broken recipe would fail the install step."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert build_kernels(quiet=True, groups=(("asr",),)) == 0


def test_the_video_group_compiles_the_rgb_loop(tmp_path, monkeypatch) -> None:
    """The "video" group runs the video reader on generated clips, which compiles the RGB
    conversion loop into the cache (or is skipped without the video extra)."""
    pytest.importorskip("av")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert build_kernels(quiet=True, groups=(("video",),)) == 0
    assert any("yuv_loop" in p.name and p.suffix == ".nbc" for p in tmp_path.rglob("*"))
