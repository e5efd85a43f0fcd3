"""The timing harness of the per-operator benchmarks (auto_aug, python_ops, ops_color,
ops_geometry, ops_reductions_filters): one operator chain in a pipeline fed by
external_source, timed for stoker and for DALI in the same run, printed side by side.

The benchmarks import it as a sibling module (``python benchmarks/<name>.py`` puts this
folder first on the path).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def natural_images(batch: int, size: tuple[int, int], interpolation: int | None = None
                   ) -> list[np.ndarray]:
    """``batch`` RGB uint8 images of ``size`` (width, height): scikit-image's samples,
    resized (cv2's default interpolation unless given)."""
    import cv2
    import skimage.data as data

    base = [data.astronaut(), data.chelsea(), data.coffee(), data.rocket()]
    extra = {} if interpolation is None else {"interpolation": interpolation}
    return [np.ascontiguousarray(cv2.resize(base[i % len(base)], size, **extra))
            for i in range(batch)]


def dali_or_none() -> Any:
    """nvidia.dali, or None where it is not installed (stoker's times only)."""
    try:
        import nvidia.dali as dali
    except ImportError:
        return None
    return dali


def time_pipeline(lib: Any, build: Callable, batch: list[np.ndarray], *, layout: str = "HWC",
                  threads: int = 1, repeats: int = 3, warmup: int = 1, best: bool = False,
                  conditionals: bool = False,
                  clock: Callable[[], float] = time.perf_counter) -> float:
    """Milliseconds per batch of ``build(lib, x)`` on ``batch`` (the source's copy
    included) after ``warmup`` runs: the median of ``repeats`` runs, or the best one."""
    @lib.pipeline_def(batch_size=len(batch), num_threads=threads, device_id=None, seed=1,
                      prefetch_queue_depth=1, enable_conditionals=conditionals)
    def pipe() -> Any:
        x = lib.fn.external_source(source=lambda: batch, layout=layout)
        return build(lib, x)

    p = pipe()
    p.build()
    for _ in range(warmup):
        p.run()
    times = []
    for _ in range(repeats):
        start = clock()
        p.run()
        times.append(clock() - start)
    return (min(times) if best else statistics.median(times)) * 1e3


def header(width: int, label: str = "operator") -> str:
    return f"{label:{width}s} {'stoker':>9s} {'DALI':>9s} {'DALI/stoker':>12s}"


def row(name: str, ours: float, theirs: float | None, width: int, digits: int = 1) -> str:
    """One line: the name, both times and DALI / stoker (> 1: stoker is faster)."""
    ratio = f"{theirs / ours:12.2f}" if theirs else f"{'-':>12s}"
    dali_ms = f"{theirs:9.{digits}f}" if theirs else f"{'-':>9s}"
    return f"{name:{width}s} {ours:9.{digits}f} {dali_ms} {ratio}"


def compare(cases: dict[str, Callable], names: list[str], batch: list[np.ndarray], *,
            width: int, label: str = "operator", digits: int = 1, **timing: Any) -> None:
    """Times the cases ``names`` (all if empty) on ``batch`` with stoker and with DALI
    (where installed), ``time_pipeline(**timing)`` each, and prints a row per case under a
    header."""
    import stoker

    dali = dali_or_none()
    print(header(width, label))
    for name in names or list(cases):
        ours = time_pipeline(stoker, cases[name], batch, **timing)
        theirs = time_pipeline(dali, cases[name], batch, **timing) if dali else None
        print(row(name, ours, theirs, width, digits), flush=True)
