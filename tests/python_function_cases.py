"""fn.python_function / dl_tensor_python_function cases, shared by the DALI recorder
(tests/data/record/python_function.py) and the replay (tests/python/test_python_vs_dali.py).

Each case builds its graph with the library's ``fn`` (DALI's or stoker's) from one input,
``x``: batch of 3, sample j is float32 ``[j, j + 1, j + 2]`` (j = 0, 1, 2). A case returns
its outputs; the recorder stores DALI's outputs and layouts, or its error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

BATCH = 3


def sample(j: int) -> np.ndarray:
    return np.arange(j, j + 3, dtype=np.float32)


def _kind(a: Any) -> Any:
    """What the function was given: coded in the output (1 = ndarray, 2 = list, 3 = capsule)."""
    if isinstance(a, np.ndarray):
        return np.array([1], np.int32)
    if isinstance(a, list):
        return np.array([2 if all(type(x).__name__ == "PyCapsule" for x in a) else 4], np.int32)
    return np.array([3 if type(a).__name__ == "PyCapsule" else 5], np.int32)


def _kind_batch(a: Any) -> Any:
    return [_kind(a)] * len(a) if isinstance(a, list) else _kind(a)


def _divide(a: np.ndarray) -> np.ndarray:
    return a * (1 // int(a[0] - 1))  # ZeroDivisionError on sample 1


CASES: dict[str, Any] = {
    "double": lambda fn, x: fn.python_function(x, function=lambda a: a * 2),
    "two_inputs": lambda fn, x: fn.python_function(x, x, function=lambda a, b: a * b),
    "two_outputs": lambda fn, x: tuple(fn.python_function(
        x, function=lambda a: (a + 1, a[:1]), num_outputs=2)),
    "dtype_change": lambda fn, x: fn.python_function(
        x, function=lambda a: a.astype(np.int64) * 3),
    "shape_change": lambda fn, x: fn.python_function(
        x, function=lambda a: np.outer(a, a)[: int(a[0]) + 1]),
    "no_inputs": lambda fn, x: fn.python_function(
        function=lambda: np.arange(4, dtype=np.uint8)),
    "per_sample_gets_array": lambda fn, x: fn.python_function(x, function=_kind),
    "batch_gets_list": lambda fn, x: fn.python_function(
        x, function=_kind_batch, batch_processing=True),
    "batch_list_out": lambda fn, x: fn.python_function(
        x, function=lambda xs: [a[::-1].copy() for a in xs], batch_processing=True),
    "batch_dense_out": lambda fn, x: fn.python_function(
        x, function=lambda xs: np.stack(xs) + 10, batch_processing=True),
    "batch_two_outputs": lambda fn, x: tuple(fn.python_function(
        x, function=lambda xs: (xs, [a.sum(keepdims=True) for a in xs]),
        batch_processing=True, num_outputs=2)),
    "layouts_one_string": lambda fn, x: tuple(fn.python_function(
        x, function=lambda a: (a, a), num_outputs=2, output_layouts="X")),
    "layouts_short_list": lambda fn, x: tuple(fn.python_function(
        x, function=lambda a: (a, a), num_outputs=2, output_layouts=["X"])),
    "zero_outputs": lambda fn, x: (fn.python_function(
        x, function=lambda a: None, num_outputs=0), x)[1],
    "dl_default_gets_list": lambda fn, x: fn.dl_tensor_python_function(
        x, function=lambda xs: xs if isinstance(xs, list) else [xs]),
    "dl_per_sample": lambda fn, x: fn.dl_tensor_python_function(
        x, function=lambda c: c, batch_processing=False),
    # Errors.
    "raises": lambda fn, x: fn.python_function(x, function=_divide),
    "tuple_expected": lambda fn, x: tuple(fn.python_function(
        x, function=lambda a: a, num_outputs=2)),
    "wrong_count": lambda fn, x: tuple(fn.python_function(
        x, function=lambda a: (a, a, a), num_outputs=2)),
    "returns_str": lambda fn, x: fn.python_function(x, function=lambda a: "text"),
    "returns_list": lambda fn, x: fn.python_function(x, function=lambda a: [1.0, 2.0]),
    "batch_wrong_size": lambda fn, x: fn.python_function(
        x, function=lambda xs: xs[:2], batch_processing=True),
    "layout_wrong_rank": lambda fn, x: fn.python_function(
        x, function=lambda a: a, output_layouts="AB"),
}


def build(fn: Any, external_source: Any, name: str) -> tuple:
    """The case's pipeline outputs, traced inside the caller's pipeline."""
    x = external_source(source=lambda info: sample(info.idx_in_batch), batch=False)
    out = CASES[name](fn, x)
    return out if isinstance(out, tuple) else (out,)
