"""``fn.reductions.sum``, ``mean``, ``min``, ``max``: per-sample reductions over the axes
given by index (``axes``) or layout letter (``axis_names``; default: every axis), keeping
the reduced axes as extent 1 with ``keep_dims``. Result types as DALI 2.4's (measured):
sums of integers are 64-bit, means float32, min/max the input's type; bool and float64
inputs are refused, as DALI refuses them."""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor.reductions import reduce_sample, sum_type
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema


def _axes(args: dict, layout: str, ndim: int) -> list[int] | None:
    names, axes = args.get("axis_names"), args.get("axes")
    if names is not None:
        missing = [c for c in names if c not in layout]
        if missing:
            raise ValueError(f"'axis_names' {names!r} names axes that the layout {layout!r} "
                             "lacks")
        return [layout.index(c) for c in names]
    return None if axes is None else list(axes)  # (reduce_sample checks the range)


def _kernel(kind: str):
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = ins[0]
        layout = (args.get("_in_layouts") or ("",))[0]
        dtype = args.get("dtype")
        out_dtype = None if dtype is None else np.dtype(types.to_numpy(dtype))
        return reduce_sample(x, kind, _axes(args, layout, x.ndim), args["keep_dims"],
                             out_dtype)
    return kernel


def _layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    if args["keep_dims"] or not src:
        return src if args["keep_dims"] else ""
    if args.get("axis_names") is not None:
        return "".join(c for c in src if c not in args["axis_names"])
    if args.get("axes") is None:
        return ""
    drop = {a % len(src) for a in args["axes"]}
    return "".join(c for i, c in enumerate(src) if i not in drop)


def _dtype(kind: str):
    def rule(dtypes: list, args: dict) -> Any:
        if args.get("dtype") is not None:
            return types.to_numpy(args["dtype"])
        if kind == "sum":
            return sum_type(np.dtype(dtypes[0]))
        return np.float32 if kind == "mean" else dtypes[0]
    return rule


def _check(name: str):
    def check(args: dict) -> None:
        if args.get("axes") is not None and args.get("axis_names") is not None:
            raise ArgumentError(f"fn.reductions.{name}: arguments 'axes' and 'axis_names' "
                                "exclude each other; give one")
    return check


_IMG = [np.arange(24, dtype=np.uint8).reshape(2, 4, 3), np.arange(30, dtype=np.uint8)
        .reshape(5, 2, 3)]
_DOCS = {"sum": "Sum", "mean": "Mean", "min": "Minimum", "max": "Maximum"}

for _kind in ("sum", "mean", "min", "max"):
    _extra = (Arg("dtype", "dtype", None, "Output type (default: 64-bit integers for "
                  "integer sums, float32 means, float32 sums of floats)."),) \
        if _kind in ("sum", "mean") else ()
    register(OpSchema(
        name=f"reductions.{_kind}",
        doc=f"{_DOCS[_kind]} of each sample over some axes.",
        inputs=(Input("input", "Numbers of any layout."),),
        args=(Arg("axes", "ints", None, "Axes to reduce (default: all)."),
              Arg("axis_names", "layout", None, "Layout letters of the axes to reduce."),
              Arg("keep_dims", "bool", False, "Keep reduced axes as extent 1."), *_extra),
        kernel=_kernel(_kind), layout=_layout, dtype=_dtype(_kind), check=_check(_kind),
        examples=(
            Example(inputs=(_IMG,)),
            Example(args={"axes": [0, 1], "keep_dims": True}, inputs=(_IMG,)),
            Example(args={"axes": [2]}, inputs=(_IMG,)),
            Example(args={"axes": [0], "axis_names": "H"}, inputs=(_IMG,),
                    raises=ArgumentError, match="exclude each other"),
            Example(args={"axes": [5]}, inputs=(_IMG,), raises=RuntimeError,
                    match="out of range"),
        ),
    ))
