"""GPU kernels (PyTorch on CUDA). Imported lazily; the GPU backend lands with the GPU issue."""

from __future__ import annotations

import functools


@functools.cache
def available() -> bool:
    """True when PyTorch with a usable CUDA device is importable (checked once)."""
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            return False
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False
