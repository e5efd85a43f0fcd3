"""Operator schemas: one frozen description per operator drives checks, signatures and docs.

A schema names the operator, its inputs, its arguments (type, default, allowed range,
whether a per-sample DataNode is accepted), its devices and outputs, the functions that
do the work, and example calls for the contract battery. Defaults live here only.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stoker.errors import ArgumentTypeError
from stoker.operators.machinery.arg_check import ARG_TYPES, check_arg  # noqa: F401  (re-exported)


class _Required:
    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()

@dataclass(frozen=True)
class Arg:
    name: str
    type: str
    default: Any = None
    doc: str = ""
    range: tuple[float | None, float | None] | None = None  # inclusive bounds, None = open
    choices: tuple[Any, ...] | None = None
    per_sample: bool = False  # accepts a DataNode carrying one value per sample
    length: int | None = None  # required list length (for "ints"/"floats")
    # A single value stands for `length` copies, as DALI reads a one-value random_area.
    broadcast: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Input:
    name: str
    doc: str = ""
    optional: bool = False
    variadic: bool = False  # this input and any number after it (cat, stack)


@dataclass(frozen=True)
class Example:
    """A call for the contract battery: ``inputs`` are lists of numpy samples per input."""

    args: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[Any, ...] = ()
    # For examples that must be rejected: the exception type and a substring of its message.
    raises: type[BaseException] | None = None
    match: str = ""


@dataclass(frozen=True)
class OpSchema:
    name: str  # fn path, e.g. "random.uniform"
    doc: str
    inputs: tuple[Input, ...] = ()
    args: tuple[Arg, ...] = ()
    num_outputs: int | Callable[[dict], int] = 1
    devices: tuple[str, ...] = ("cpu",)
    # "sample": runs per sample (optionally per dense chunk); "batch": needs the whole
    # batch; "source": makes batches (readers, external_source).
    stage: str = "sample"
    # Per-sample work: (inputs, args, ctx) -> array or tuple of arrays.
    kernel: Callable[..., Any] | None = None
    # Dense-chunk work: (inputs stacked on axis 0, args with per-sample values stacked,
    # ctx) -> stacked outputs. Used when every input of a chunk is one uniform array.
    batch_kernel: Callable[..., Any] | None = None
    # GPU work, on the whole batch as torch tensors: (inputs, args, ctx) -> outputs. An input
    # is a dense tensor (sample axis first) or a list of tensors; per-sample argument values
    # come as for batch_kernel (numpy, stacked or a list); ctx is a GpuContext. Written once
    # on torch, so CI runs it on CPU tensors (STOKER_GPU_ON_CPU=1).
    gpu_kernel: Callable[..., Any] | None = None
    # Stateful operators (sources, batch stages) build an instance per graph node.
    instance: Callable[..., Any] | None = None
    random: bool = False  # draws from the per-sample random stream
    # (input layouts, args) -> output layout(s); default: the first input's layout.
    layout: Callable[[list[str], dict], Any] | None = None
    # (input dtypes, args) -> output dtype(s); default: the first input's dtype.
    dtype: Callable[[list[np.dtype], dict], Any] | None = None
    examples: tuple[Example, ...] = ()
    # Validates the combination of arguments after each was checked alone.
    check: Callable[[dict], None] | None = None
    # Arguments that may also be passed positionally, after the inputs.
    positional: tuple[str, ...] = ()
    # DALI's deprecated argument names: old name -> current name, or -> None where DALI
    # accepts and ignores it. Old pipelines keep working.
    renamed: dict[str, str | None] = field(default_factory=dict)
    # What an fn/ops call returns, made from the call's outputs, where DALI's Python
    # wrapper returns something else (fn.readers.tfrecord: a dict by feature name).
    result: Callable[[Any], Any] | None = None
    # A source that runs on the GPU as a CPU source plus GPU operators (the video readers:
    # windows chosen on the CPU, decoded by NVDEC): (kwargs, device, name) -> outputs.
    gpu_split: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        names = [a.name for a in self.args]
        if len(names) != len(set(names)):
            raise ValueError(f"schema {self.name}: duplicate argument names")

    @property
    def fn_name(self) -> str:
        return f"fn.{self.name}"

    @property
    def min_inputs(self) -> int:
        return sum(1 for i in self.inputs if not i.optional and not i.variadic) + sum(
            1 for i in self.inputs if i.variadic and not i.optional
        )

    @property
    def max_inputs(self) -> float:
        return math.inf if any(i.variadic for i in self.inputs) else len(self.inputs)

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    def outputs_for(self, args: dict) -> int:
        return self.num_outputs(args) if callable(self.num_outputs) else self.num_outputs


# Arguments every operator takes.
COMMON_ARGS = (
    Arg("seed", "int", -1, "Seed of this operator's random stream; -1 derives it from the "
        "pipeline's seed."),
    Arg("preserve", "bool", False, "Keep the operator even if none of its outputs is used."),
    Arg("bytes_per_sample_hint", "ints", 0, "Accepted for portability; stoker sizes buffers "
        "from the data itself."),
)


def unknown_arg_error(schema: OpSchema, name: str, known: Sequence[str]) -> ArgumentTypeError:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ArgumentTypeError(f"{schema.fn_name}: unknown argument '{name}'{hint}")
