"""Joining and padding: cat, stack (per sample, across inputs) and pad (across the batch).

``pad`` needs the whole batch (it pads to the batch's largest extent), so it runs as a
batch stage; when every sample already has one shape it pads the dense batch at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import tensor as k
from stoker.kernels.cpu.tensor import window as W
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import (
    BatchStage,
    batch_of,
    check_out_layout,
    in_layout,
    layout_instance,
    per_sample_values,
)

_A = [np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(1, 4)]
_B = [np.arange(6, dtype=np.int32).reshape(2, 3) + 10, np.arange(8, dtype=np.int32)
      .reshape(2, 4) + 10]
_SQ = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]
_INPUTS = (Input("inputs", "The tensors to join, sample by sample.", variadic=True),)


# -- cat, stack ---------------------------------------------------------------------------------

def _cat_axis(args: dict) -> int:
    name = args.get("axis_name")
    return in_layout(args).index(name) if name is not None else args["axis"]


def _cat_layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""  # DALI takes the first input's layout
    name = args.get("axis_name")
    if name is not None and name not in src:
        raise ArgumentError(f"fn.cat: axis {name!r} of 'axis_name' is not in the first input's "
                            f"layout {src!r}")
    return src


def _check_axis_name(op: str) -> Any:
    def check(args: dict) -> None:
        name = args.get("axis_name")
        if name is None:
            return
        if len(name) != 1:
            raise ArgumentError(f"fn.{op}: argument 'axis_name' must be one letter, got {name!r}")
        if op == "cat" and args["axis"] != 0:
            raise ArgumentError("fn.cat: arguments 'axis' and 'axis_name' are mutually exclusive")
    return check


register(OpSchema(
    name="cat",
    doc="Joins the inputs along an existing axis; their shapes may differ only in that axis.",
    inputs=_INPUTS,
    args=(Arg("axis", "int", 0, "The axis to join along; negative counts from the back."),
          Arg("axis_name", "str", None, "The axis to join along, by layout name (instead of "
              "'axis').")),
    kernel=lambda ins, a, c: k.cat_cpu(ins, _cat_axis(a)),
    batch_kernel=lambda ins, a, c: k.cat_cpu(ins, _cat_axis(a), lead=1),
    instance=layout_instance, check=_check_axis_name("cat"), layout=_cat_layout,
    examples=(
        Example(inputs=(_A, _B)),
        Example(args={"axis": -1}, inputs=(_SQ, _SQ, _SQ)),
        Example(args={"axis": 1}, inputs=(_A, _B), raises=RuntimeError,
                match="input 1 has shape (2, 4) and input 0 has (1, 4); they may differ only "
                      "in axis 1"),
        Example(args={"axis": 2}, inputs=(_A, _B), raises=RuntimeError,
                match="'axis' 2 is out of range for 2-D samples"),
    ),
))


def _stack_layout(layouts: list, args: dict) -> str:
    name = args.get("axis_name")
    if name is None:
        return ""
    src = layouts[0] or ""
    if not src:
        return name  # right for scalars; other samples fail the check at run time
    axis = args["axis"]
    at = axis + len(src) + 1 if axis < 0 else axis
    if not 0 <= at <= len(src):
        raise ArgumentError(f"fn.stack: argument 'axis' {axis} is out of range for inputs of "
                            f"layout {src!r}")
    return src[:at] + name + src[at:]


def _stack_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    out = k.stack_cpu(ins, args["axis"], lead)
    check_out_layout(out.ndim - lead, args, "; 'axis_name' needs inputs with a layout")
    return out


register(OpSchema(
    name="stack",
    doc="Joins the inputs along a new axis; their shapes must be equal.",
    inputs=_INPUTS,
    args=(Arg("axis", "int", 0, "Position of the new axis in the output; negative counts "
              "from the back (-1 puts it last)."),
          Arg("axis_name", "str", None, "Layout letter of the new axis.")),
    kernel=_stack_sample, batch_kernel=lambda ins, a, c: _stack_sample(ins, a, c, lead=1),
    instance=layout_instance, check=_check_axis_name("stack"), layout=_stack_layout,
    examples=(
        Example(inputs=(_SQ, _SQ)),
        Example(args={"axis": -1}, inputs=(_B, _B, _B)),
        Example(args={"axis_name": "CC"}, inputs=(_SQ, _SQ), raises=ValueError,
                match="'axis_name' must be one letter"),
        Example(inputs=(_A, _B), raises=RuntimeError,
                match="stacked tensors must have equal shapes"),
    ),
))


# -- pad ----------------------------------------------------------------------------------------

def _pad_axes(args: dict, argv: dict, n: int, ndim: int) -> list[list[int]]:
    """The axes each sample pads: by layout name, or by index (per sample, as DALI
    allows). No axes at all, an empty list or an empty 'axis_names' mean every axis."""
    names = args.get("axis_names")
    if names:
        src = in_layout(args)
        missing = [c for c in names if c not in src]
        if missing:  # (a named layout was checked at the call)
            raise ValueError(f"axis {missing[0]!r} of 'axis_names' {names!r}: Axis "
                             f"'{missing[0]}' is not present in the input layout {src!r}")
        return [[src.index(c) for c in names]] * n
    rows = per_sample_values("axes", args, argv, n) or [None] * n
    every = list(range(ndim))
    return [k.check_axes([int(a) for a in np.ravel(r)], ndim) if r is not None and
            np.size(r) else every for r in rows]


def _pad_align(args: dict, argv: dict, axes: list[list[int]]) -> list[list[int]]:
    """Each sample's alignment per padded axis (positive: pad_plan checked it): one value
    for all, or one per axis."""
    rows = per_sample_values("align", args, argv, len(axes)) or [None] * len(axes)
    out = []
    for row, ax in zip(rows, axes, strict=True):
        a = [1] if row is None or not np.size(row) else [int(v) for v in np.ravel(row)]
        if len(a) not in (1, len(ax)):
            raise ValueError(f"'align' {a} must be one value or one per padded axis "
                             f"({len(ax)})")
        out.append(a * len(ax) if len(a) == 1 else a)
    return out


def pad_plan(shapes: list, dtype: np.dtype, args: dict, argv: dict, n: int
             ) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Each sample's padded shape and the fill value(s) in ``dtype`` (one, or one per
    sample); shared by the CPU and GPU operators."""
    _check_pad(args)  # for the GPU operator: the CPU one checked at build
    ndims = sorted({len(s) for s in shapes})
    if len(ndims) > 1:
        raise ValueError(f"all samples must have the same number of dimensions, got {ndims}")
    if ndims and ndims[0] == 0:
        raise ValueError("cannot pad scalars (0-D samples)")
    for row in per_sample_values("align", args, argv, n) or ():  # first, as DALI checks it
        if row is not None and np.size(row) and np.min(row) < 1:
            raise ValueError(f"Values of `align` argument must be positive. Got "
                             f"{np.ravel(row).tolist()}")
    axes = _pad_axes(args, argv, n, ndims[0] if ndims else 0)
    align = _pad_align(args, argv, axes)
    min_shape = per_sample_values("shape", args, argv, n)
    if min_shape is not None:
        min_shape = [np.ravel(s).tolist() for s in min_shape]
        for s, ax in zip(min_shape, axes, strict=True):
            if len(s) != len(ax):
                raise ValueError(f"'shape' must have one extent per padded axis ({len(ax)}), "
                                 f"got {s}")
    targets = W.pad_targets(shapes, axes, min_shape, align)
    if "fill_value" in argv:
        return targets, k.c_cast(np.ravel(argv["fill_value"]), dtype)
    return targets, k.c_cast(args["fill_value"], dtype)


def _pad_run(ins: list, args: dict, argv: dict, n: int) -> Any:
    x = ins[0]
    if n == 0:
        return x
    dense = isinstance(x, np.ndarray)
    shapes = [x.shape[1:]] * n if dense else [np.shape(s) for s in x]
    dtype = x.dtype if dense else np.asarray(x[0]).dtype
    targets, fills = pad_plan(shapes, dtype, args, argv, n)
    if all(t == targets[0] for t in targets):  # the usual case: one dense batch out
        return W.pad_batch_cpu(x, targets[0], fills, dtype)
    return batch_of([W.pad_cpu(np.asarray(x[j]), targets[j], fills if fills.ndim == 0
                               else fills[j]) for j in range(n)])


def _pad_layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    # A named layout is checked now; an empty one may be the data's at run time (a layout
    # given to feed_input), so an input without one fails at run, as in DALI.
    for c in (args.get("axis_names") or "") if src else "":
        if c not in src:
            raise ArgumentError(f"fn.pad: axis {c!r} of 'axis_names' is not in the input "
                                f"layout {src!r}")
    return src


def _check_pad(args: dict) -> None:
    given = args.get("_given", ())
    if "axes" in given and "axis_names" in given:  # at build, as DALI checks it
        raise ArgumentError('fn.pad: arguments "axes" and "axis_names" are mutually exclusive')


def _pad_instance(op: Any, pipeline: Any) -> BatchStage:
    _check_pad(op.args)
    return BatchStage(op, pipeline, _pad_run)


_RAGGED_1D = [np.array([3, 4, 2, 5, 4], np.int32), np.array([2, 2], np.int32),
              np.array([3, 199, 5], np.int32)]

register(OpSchema(
    name="pad",
    doc="Pads each sample at the end of the given axes with 'fill_value', up to the largest "
        "extent in the batch (or a given minimum), optionally rounded up to a multiple of "
        "'align'.",
    inputs=(Input("input", "The data."),),
    args=(Arg("axes", "ints", None, "Indices of the axes to pad (default: all); negative "
              "count from the back.", per_sample=True),
          Arg("axis_names", "layout", None, "Layout letters of the axes to pad (instead of "
              "'axes')."),
          Arg("shape", "ints", None, "Minimum extent per padded axis; -1 (or 0) keeps the "
              "batch's largest extent. A sample larger than a positive minimum is padded only "
              "to satisfy 'align'.", per_sample=True),
          Arg("fill_value", "float", 0.0, "The value to pad with.", per_sample=True),
          Arg("align", "ints", None, "Round each padded extent up to a multiple of this (one "
              "value for all axes or one per axis); positive.", per_sample=True)),
    stage="batch", instance=_pad_instance, layout=_pad_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.tensor", "pad"),
    examples=(
        Example(args={"fill_value": -1.0}, inputs=(_RAGGED_1D,)),
        Example(args={"axes": [0], "shape": [1], "align": [2]}, inputs=(_RAGGED_1D,)),
        Example(args={"axes": [1], "fill_value": 42.0}, inputs=(_A,)),
        Example(args={"shape": [4, -1]}, inputs=(_SQ,)),
        Example(args={"axes": [2]}, inputs=(_A,), raises=RuntimeError,
                match="Axis 2 out of range. Expected range is [-2, 1] for a 2D input"),
        Example(args={"align": [0]}, inputs=(_A,), raises=RuntimeError,
                match="Values of `align` argument must be positive"),
        Example(args={"axes": [0, -2]}, inputs=(_A,), raises=RuntimeError,
                match="Axis index 0 occurs more than once"),
    ),
))
