"""GPU kernels: PyTorch tensors on CUDA. Imported lazily: ``import stoker`` never loads torch.

The same kernels run on torch CPU tensors when ``STOKER_GPU_ON_CPU=1``: that is how CI,
which has no GPU, exercises the GPU code path (device="gpu"/"mixed" operators, the GPU
stage, GPU outputs) without a second implementation to keep in step.

One folder per operator family (``image/``, ``tensor/``), as in ``stoker/operators/``;
shared here: ``common`` (batches between host and device, types, rounding) and ``lazy``
(schemas name GPU kernels without importing torch).
"""

from __future__ import annotations

import functools
import os
from typing import Any


def on_cpu() -> bool:
    """True when GPU operators are asked to run on torch CPU tensors (tests, CI)."""
    return os.environ.get("STOKER_GPU_ON_CPU", "") not in ("", "0")


@functools.cache
def cuda_available() -> bool:
    """True when PyTorch with a usable CUDA device is importable (checked once)."""
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            return False
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def available() -> bool:
    """True when device="gpu"/"mixed" operators can run: a CUDA GPU, or the CPU stand-in."""
    if cuda_available():
        return True
    if on_cpu():
        import importlib.util

        return importlib.util.find_spec("torch") is not None
    return False


def torch_device(device_id: int | None) -> Any:
    """The torch device GPU operators of a pipeline with this ``device_id`` run on."""
    import torch

    if cuda_available():
        return torch.device("cuda", 0 if device_id is None else int(device_id))
    if on_cpu():
        return torch.device("cpu")
    from stoker.errors import DeviceError

    raise DeviceError("GPU operators need a CUDA GPU with PyTorch, and none is available here "
                      "(set STOKER_GPU_ON_CPU=1 to run them on torch CPU tensors)")
