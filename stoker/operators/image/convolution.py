"""``fn.filter`` (DALI's ``fn.experimental.filter`` before 2.x): correlation of each sample
with a per-sample kernel over its spatial axes (D, H, W of the layout; without a layout,
the first axes, channels last), never frames or channels. The kernel is the second input
(a constant array or a DataNode); the optional third input is the border value for
``border="constant"``. Output: the input's type (or ``dtype``), rounded and saturated."""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.image.convolve import BORDERS, correlate
from stoker.operators.image.image_args import dtype_rule, out_dtype
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_SPATIAL = "DHW"


def _spatial(layout: str, ndim: int, k_ndim: int) -> list[int]:
    if layout:
        axes = [i for i, c in enumerate(layout) if c in _SPATIAL]
        if len(axes) != k_ndim:
            raise ValueError(f"a {k_ndim}-d filter for layout {layout!r} with {len(axes)} "
                             "spatial axes")
        return axes
    if ndim in (k_ndim, k_ndim + 1):
        return list(range(k_ndim))
    raise ValueError(f"a {ndim}-d sample without a layout for a {k_ndim}-d filter: give a "
                     "layout naming its spatial axes")


def filter_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x, kernel = ins[0], np.asarray(ins[1])
    if x.dtype.kind not in "iuf" or x.dtype == np.float64:
        raise TypeError(f"input type {x.dtype} is not supported")
    fill = 0.0
    if len(ins) > 2:
        values = np.asarray(ins[2]).ravel()
        if values.size != 1:
            raise ValueError("fill_value must be one scalar per sample, got "
                             f"{values.size} values")
        fill = float(values[0])
    layout = args["_in_layouts"][0] or ""
    anchor = np.asarray(args["anchor"], np.int64).ravel().tolist()
    if len(anchor) == 1:
        anchor = anchor * kernel.ndim
    if len(anchor) != kernel.ndim:
        raise ValueError(f"'anchor' has {len(anchor)} values for a {kernel.ndim}-d filter")
    return correlate(x, kernel, _spatial(layout, x.ndim, kernel.ndim), anchor,
                     args["border"], args["mode"], fill, out_dtype(args, x.dtype))


def _check(args: dict) -> None:
    if args.get("_n_inputs", 2) > 2 and args["border"] != "constant":
        raise ArgumentError("fn.filter: a fill_value input is only used with "
                            "border='constant'")


_IMG = [np.arange(60, dtype=np.uint8).reshape(4, 5, 3), np.arange(90, dtype=np.uint8)
        .reshape(6, 5, 3)]
_SHARPEN = [np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)] * 2

register(OpSchema(
    name="filter",
    doc="Correlates each sample with a filter (kernel) over its spatial axes.",
    inputs=(Input("data", "Images (HWC, HW), volumes (DHWC) or sequences of them."),
            Input("filter", "The kernel: one float32 array per sample (2-D for images)."),
            Input("fill_value", "Border value for border='constant', one per sample.",
                  optional=True)),
    args=(Arg("anchor", "ints", [-1], "Position of the kernel that lands on the output "
              "pixel, per kernel axis; -1 = the centre (size // 2).", per_sample=True),
          Arg("border", "str", "reflect_101", "How the input extends past its borders.",
              choices=tuple(BORDERS)),
          Arg("dtype", "dtype", None, "Output type (default: the input's)."),
          Arg("mode", "str", "same", "'same': output as large as the input; 'valid': only "
              "where the kernel fits inside.", choices=("same", "valid"))),
    kernel=filter_sample, dtype=dtype_rule, check=_check,
    examples=(
        Example(inputs=(_IMG, _SHARPEN)),
        Example(args={"border": "clamp", "mode": "valid"}, inputs=(_IMG, _SHARPEN)),
        Example(args={"border": "wrap", "anchor": [0, 0]}, inputs=(_IMG, _SHARPEN)),
        Example(args={"border": "sideways"}, inputs=(_IMG, _SHARPEN), raises=ArgumentError,
                match="'border' must be one of"),
        Example(args={"anchor": [5, 5]}, inputs=(_IMG, _SHARPEN), raises=RuntimeError,
                match="outside the filter"),
    ),
))
