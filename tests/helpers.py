"""Shared test helpers: build a one-off pipeline around a graph function and run it once.

Importable from any test file (pyproject's pytest ``pythonpath`` includes tests/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stoker import fn, pipeline_def


def _constant(samples: Sequence[Any]) -> Callable[[], Sequence[Any]]:
    # Not `lambda s=s: s`: as in DALI, a parameter with a default still gets the iteration.
    return lambda: samples


def run_pipeline(build: Callable[..., Any], *inputs: Sequence[Any],
                 layouts: Sequence[str | None] | None = None, batch_size: int | None = None,
                 threads: int = 2, seed: int = 3) -> tuple:
    """Runs ``build(*nodes)`` once, where each node is an external_source over one list of
    samples in ``inputs``; returns the pipeline's outputs (a tuple of TensorLists)."""
    layouts = list(layouts or [None] * len(inputs))
    size = batch_size if batch_size is not None else len(inputs[0]) if inputs else 1

    @pipeline_def(batch_size=size, num_threads=threads, device_id=None, seed=seed,
                  exec_pipelined=False)
    def pipe():
        nodes = [fn.external_source(source=_constant(s), layout=lay)
                 for s, lay in zip(inputs, layouts, strict=True)]
        return build(*nodes)

    p = pipe()
    try:
        return p.run()
    finally:
        p.close()


def run(build: Callable[..., Any], *inputs: Sequence[Any],
        layouts: Sequence[str | None] | None = None) -> Any:
    """``run_pipeline``, with a single output returned bare."""
    out = run_pipeline(build, *inputs, layouts=layouts)
    return out[0] if len(out) == 1 else out


def same(tl: Any, expected: Sequence[np.ndarray]) -> None:
    """A batch equals the expected samples exactly, dtype and shape included."""
    assert len(tl) == len(expected)
    for got, want in zip(tl, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_array_equal(got, want)

