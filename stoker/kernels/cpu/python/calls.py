"""Calls a user's Python function on samples or batches and reads back what it returns.

Three views, one per operator: ``numpy`` (python_function), ``torch``
(torch_python_function, tensors sharing memory with the batch) and ``dlpack``
(dl_tensor_python_function, capsules in and out). python_function gets writable copies:
DALI hands over its batch's memory, and functions written for DALI change their input in
place and return it (DALI's own erase test does); a copy lets them, without the change
reaching the other operators that read the batch (in DALI it does). What comes back
is checked as DALI checks it: a tuple of exactly ``num_outputs`` values when there are
several, arrays (tensors, capsules) only; ``FunctionOutputError`` says what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class FunctionOutputError(TypeError):
    """The function returned something DALI would refuse (count or type)."""


def _private(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


class _Capsule:
    """Lets ``np.from_dlpack`` read a bare capsule (it wants an object with ``__dlpack__``)."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def _numpy_in(x: np.ndarray) -> Any:
    return _private(x)


def _numpy_out(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    raise FunctionOutputError(f"must return NumPy arrays, got {type(value).__name__}")


def _torch_in(x: np.ndarray) -> Any:
    import torch

    # torch has no read-only tensors: a writable copy of the view would hide the misuse,
    # so the tensor shares the batch's memory, as DALI's DLPack hand-over does.
    arr = np.ascontiguousarray(x)
    if not arr.flags.writeable:
        arr = arr.copy()
    return torch.from_numpy(arr)


def _torch_out(value: Any) -> np.ndarray:
    import torch

    if not isinstance(value, torch.Tensor):
        raise FunctionOutputError(f"must return torch tensors, got {type(value).__name__}")
    if value.device.type != "cpu":
        raise FunctionOutputError(f"must return CPU tensors, got one on {value.device}")
    return value.detach().resolve_conj().resolve_neg().numpy()


def _dlpack_in(x: np.ndarray) -> Any:
    arr = np.ascontiguousarray(x)
    if not arr.flags.writeable:  # NumPy exports read-only arrays only to newer consumers
        arr = arr.copy()
    return arr.__dlpack__()


def _dlpack_out(value: Any) -> np.ndarray:
    if type(value).__name__ != "PyCapsule":
        if hasattr(value, "__dlpack__"):
            return np.from_dlpack(value)
        raise FunctionOutputError(f"must return DLPack capsules, got {type(value).__name__}")
    return np.from_dlpack(_Capsule(value))


VIEWS: dict[str, tuple[Callable[[np.ndarray], Any], Callable[[Any], np.ndarray]]] = {
    "numpy": (_numpy_in, _numpy_out),
    "torch": (_torch_in, _torch_out),
    "dlpack": (_dlpack_in, _dlpack_out),
}


def split_outputs(result: Any, num_outputs: int) -> tuple:
    """The function's result as a tuple of ``num_outputs`` values, checked as DALI checks it."""
    if num_outputs == 0:
        if result is not None:
            raise FunctionOutputError(f"must return None when num_outputs=0, got "
                                      f"{type(result).__name__}")
        return ()
    if result is None:
        raise FunctionOutputError(f"returned None, but num_outputs={num_outputs}")
    if num_outputs == 1:
        return (result,)
    if not isinstance(result, tuple):
        raise FunctionOutputError(f"must return a tuple of {num_outputs} outputs "
                                  f"(num_outputs={num_outputs}), got {type(result).__name__}")
    if len(result) != num_outputs:
        raise FunctionOutputError(f"returned {len(result)} outputs, expected {num_outputs} "
                                  "(num_outputs)")
    return result


def call_sample(function: Callable, view: str, sample: list[np.ndarray],
                num_outputs: int) -> tuple:
    """One call on one sample's inputs: its outputs as NumPy arrays."""
    to_view, from_view = VIEWS[view]
    result = function(*[to_view(x) for x in sample])
    return tuple(_own(from_view(v)) for v in split_outputs(result, num_outputs))


def call_batch(function: Callable, view: str, batch: list[list[np.ndarray]],
               num_outputs: int, n: int) -> tuple:
    """One call on whole batches (a list of samples per input): per output, a list of ``n``
    arrays. An output may come as a list of samples or as one array whose first axis is the
    batch."""
    to_view, from_view = VIEWS[view]
    result = function(*[[to_view(x) for x in samples] for samples in batch])
    outs = []
    for k, value in enumerate(split_outputs(result, num_outputs)):
        if isinstance(value, list | tuple):
            samples = [_own(from_view(v)) for v in value]
        else:
            dense = _own(from_view(value))
            if dense.ndim == 0:
                raise FunctionOutputError(f"output {k} must be a list of samples or an array "
                                          "whose first axis is the batch, got a 0-d array")
            samples = list(dense)
        if len(samples) != n:
            raise FunctionOutputError(f"output {k} holds {len(samples)} samples, the batch "
                                      f"has {n}")
        outs.append(samples)
    return tuple(outs)


def _own(arr: np.ndarray) -> np.ndarray:
    """A result the pipeline may keep: numeric, and not a view of an input (the function
    may return its input unchanged; the next operator must not see a read-only array)."""
    if arr.dtype.kind not in "biuf":
        raise FunctionOutputError(f"must return numeric arrays, got dtype {arr.dtype}")
    if not arr.flags.writeable or not arr.flags.owndata:
        return np.array(arr)
    return arr
