"""DALI's ``nvidia.dali.plugin.pytorch.fn``: ``torch_python_function`` (the same operator as
``stoker.fn.torch_python_function``; stoker/operators/python/)."""

from __future__ import annotations

from stoker.fn import torch_python_function

__all__ = ["torch_python_function"]
