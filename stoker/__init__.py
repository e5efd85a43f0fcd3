"""stoker keeps accelerators fed: DALI's pipeline API, fast on CPU cores, GPU where present.

Parts (see DESIGN.md):
    pipeline  -- Pipeline, pipeline_def, build/run/reset, epochs
    graph     -- DataNode, tracing context, compile passes
    ops       -- operator schemas and the registry behind ``fn``
    kernels   -- the work itself, per backend (cpu, gpu)
    readers   -- sample indexes and byte sources, sharding, shuffling
    executor  -- thread pool, stages, prefetch, error policy
    plugin    -- framework iterators (PyTorch, JAX, TensorFlow)
    cli       -- ``stoker demo``, ``stoker bench``
"""

from stoker import fn, math, types
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
from stoker.ops.subscript import newaxis
from stoker.pipeline import Pipeline, pipeline_def
from stoker.tensors import TensorList

__version__ = "0.1.0"

__all__ = [
    "fn", "math", "types", "Pipeline", "pipeline_def", "DataNode", "TensorList", "newaxis",
    "StokerError", "ArgumentError", "ArgumentTypeError", "DeviceError", "GraphError",
    "PipelineError", "SampleError",
]
