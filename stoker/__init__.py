"""stoker keeps accelerators fed: DALI's pipeline API, fast on CPU cores, GPU where present.

Parts (see DESIGN.md), lowest layer first (tests/test_layering.py keeps imports downwards):
    kernels   -- the work itself, per backend (kernels/cpu, kernels/gpu), per family
    readers   -- sample indexes and byte sources, sharding, shuffling
    tensors   -- TensorListCPU/GPU, TensorCPU/GPU: the batches a pipeline hands out
    graph     -- DataNode, tracing context, compile passes, fusion
    operators -- machinery/ (schemas, registry behind ``fn``) and one folder per family:
                 image, tensor, random, sources, readers, detection, audio, video, python
    executor  -- thread pool, stages, prefetch, error policy
    pipeline  -- Pipeline, pipeline_def, build/run/reset, epochs
    fn, ops   -- the functional API and DALI's legacy operator classes, made from the registry
    auto_aug  -- DALI's automatic augmentations (AutoAugment, RandAugment, TrivialAugment)
    plugin    -- framework iterators (PyTorch, JAX, TensorFlow)
    experimental -- dynamic mode: operators called on arrays outside a pipeline
    cli       -- ``stoker demo``, ``stoker bench``, ``stoker profile``, ``stoker docs``

An operator family has the same folder name in operators/, kernels/cpu/, kernels/gpu/ and
tests/; docs/operators.md (``stoker docs``) documents every operator, by family.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Loaded on first use (PEP 562), so that ``import stoker`` costs nothing until a name is
# used: ``python -m stoker.cli...`` tools that drive other libraries (a benchmark's DALI
# peer) don't pay for building every operator.
_NAMES = {
    "fn": "stoker.fn", "ops": "stoker.ops", "math": "stoker.math", "types": "stoker.types",
    "tfrecord": "stoker.tfrecord",
    "Pipeline": "stoker.pipeline", "pipeline_def": "stoker.pipeline",
    "DataNode": "stoker.graph.node", "TensorList": "stoker.tensors",
    "newaxis": "stoker.operators.tensor.subscript",
    **{name: "stoker.errors" for name in (
        "StokerError", "ArgumentError", "ArgumentTypeError", "DeviceError", "GraphError",
        "PipelineError", "SampleError")},
}
_MODULES = {"fn", "ops", "math", "types", "tfrecord"}

__all__ = [
    "fn", "ops", "math", "types", "tfrecord", "Pipeline", "pipeline_def", "DataNode",
    "TensorList", "newaxis",
    "StokerError", "ArgumentError", "ArgumentTypeError", "DeviceError", "GraphError",
    "PipelineError", "SampleError",
]


def __getattr__(name: str) -> Any:
    where = _NAMES.get(name)
    if where is None:
        raise AttributeError(f"module 'stoker' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what static tools see
    from stoker import fn, math, ops, tfrecord, types
    from stoker.errors import (
        ArgumentError,
        ArgumentTypeError,
        DeviceError,
        GraphError,
        PipelineError,
        SampleError,
        StokerError,
    )
    from stoker.graph.node import DataNode
    from stoker.operators.tensor.subscript import newaxis
    from stoker.pipeline import Pipeline, pipeline_def
    from stoker.tensors import TensorList
