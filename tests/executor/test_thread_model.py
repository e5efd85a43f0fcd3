"""benchmarks/thread_model.py, the model behind the 16-thread predictions, against what
its schedule must give in the cases that can be worked out by hand."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).parents[2] / "benchmarks" / "thread_model.py"
_spec = importlib.util.spec_from_file_location("thread_model", _PATH)
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)

MEAN = 1.5e-3
TIMES = model.sample_times(MEAN)


@pytest.mark.parametrize("mode", ["shared", "chunked"])
@pytest.mark.parametrize("batch", [64, 256])
def test_without_python_costs_the_threads_match_the_processes(mode, batch):
    """No serial work, no Python per entry, free hand-offs: deferral hides the batch ends,
    so 16 threads do what 16 processes do (within the samples' uneven lengths)."""
    assert model.simulate(TIMES, batch, 16, 0.0, 0.0, mode) > 0.97


def test_a_gil_held_schedule_is_bounded_by_the_gil():
    """With each entry holding the GIL for 2 ms, a batch holds it at least 16 x 2 ms + the
    serial 1 ms: the images per second can be no more than batch / that."""
    batch, serial, entry = 64, 1e-3, 2e-3
    ratio = model.simulate(TIMES, batch, 16, serial, entry, "shared")
    bound = (batch / (16 * entry + serial)) / (16 / np.mean(TIMES))
    assert ratio <= bound * 1.01
    assert ratio > 0.5 * bound  # (the GIL is the bottleneck, and it is kept busy)


def test_more_serial_work_costs_more_and_chunks_cost_more_than_sharing():
    ratios = [model.simulate(TIMES, 64, 16, s, 55e-6, "shared", switch=30e-6)
              for s in (0.0, 0.6e-3, 2e-3, 4e-3)]
    assert ratios == sorted(ratios, reverse=True) and ratios[0] - ratios[-1] > 0.2
    assert model.simulate(TIMES, 64, 16, 0.6e-3, 260e-6, "chunked", switch=30e-6) < ratios[1]


@pytest.mark.parametrize("n, smallest, threads", [(256, 1, 16), (64, 2, 16), (100, 3, 2)])
def test_the_models_chunks_are_the_executors(n, smallest, threads):
    from stoker.executor.executor import Executor

    executor = Executor.__new__(Executor)
    executor.num_threads = threads
    want = [hi - lo for lo, hi in executor._guided(n, smallest)]
    assert model.guided(n, smallest, threads) == want and sum(want) == n
