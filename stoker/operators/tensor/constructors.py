"""Tensors made from a shape or from another tensor: zeros, ones, full and their _like forms.

``fn.zeros`` / ``fn.ones`` take 'shape' (a constant or one per sample; none: a scalar),
'dtype' (INT32 by default, as in DALI) and 'layout'. ``fn.full`` repeats its input
'fill_value' (each sample's own, or a constant) over 'shape', broadcast as numpy does,
keeping the fill value's type. The ``_like`` forms take the shape (and by default the type
and layout) of their first input; ``fn.full_like`` converts the fill value to that type
as DALI converts (rounded half away from zero, saturated). DALI 2.4 facts, measured: a
layout must have as many letters as the shape has dimensions; a negative extent is an
error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.saturate import round_sat
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

T = types.DALIDataType


def _shape(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    shape = tuple(int(s) for s in np.ravel(value))
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' {list(shape)} has a negative extent")
    return shape


def _check_layout(layout: str | None, ndim: int) -> None:
    if layout and len(layout) != ndim:
        raise ValueError(f"'layout' {layout!r} has {len(layout)} letters but the output has "
                         f"{ndim} dimensions")


def _broadcast(fill: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if fill.size == 1:  # one value fills any shape (DALI takes a 1-element fill too)
        fill = fill.reshape(())
    try:
        return np.broadcast_to(fill, shape)
    except ValueError:
        raise ValueError(f"the fill value of shape {fill.shape} cannot be broadcast to the "
                         f"output shape {shape}") from None


def _filled(value: int) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        shape = _shape(args.get("shape"))
        _check_layout(args.get("layout"), len(shape))
        return np.full(shape, value, types.to_numpy(args["dtype"]))
    return kernel


def _full(ins: list, args: dict, ctx: Any) -> np.ndarray:
    fill = np.asarray(ins[0])
    shape = _shape(args.get("shape"))
    _check_layout(args.get("layout"), len(shape))
    return np.array(_broadcast(fill, shape))


def _like(value: int) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = np.asarray(ins[0])
        dtype = x.dtype if args.get("dtype") is None else types.to_numpy(args["dtype"])
        return np.full(x.shape, value, dtype)
    return kernel


def _full_like(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x, fill = np.asarray(ins[0]), np.asarray(ins[1])
    if fill.dtype.kind == "f" or x.dtype.kind in "iu":
        fill = round_sat(fill, x.dtype)
    return np.array(_broadcast(fill.astype(x.dtype), x.shape))


def _like_batch(value: int) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = ins[0]
        dtype = x.dtype if args.get("dtype") is None else types.to_numpy(args["dtype"])
        return np.full(x.shape, value, dtype)
    return kernel


def _const_layout(layouts: list, args: dict) -> str:
    return args.get("layout") or ""


def _check_shape_layout(fn_name: str) -> Any:
    def check(args: dict) -> None:
        shape, layout = args.get("shape"), args.get("layout")
        if isinstance(shape, list):
            if any(s < 0 for s in shape):
                raise ArgumentError(f"{fn_name}: argument 'shape' must not hold a negative "
                                    f"extent, got {shape!r}")
            if layout and len(layout) != len(shape):
                raise ArgumentError(f"{fn_name}: argument 'layout' {layout!r} has "
                                    f"{len(layout)} letters for a {len(shape)}-D 'shape'")
    return check


_SHAPE = Arg("shape", "ints", None, "Shape of each output sample (default: a scalar).",
             per_sample=True)
_LAYOUT = Arg("layout", "layout", None, "Layout of the output.")
_U8 = [np.arange(6, dtype=np.uint8).reshape(2, 3, 1), np.arange(2, dtype=np.uint8).reshape(1, 2, 1)]

for _name, _value in (("zeros", 0), ("ones", 1)):
    register(OpSchema(
        name=_name,
        doc=f"A tensor of {_name} of the given shape and type.",
        args=(_SHAPE, Arg("dtype", "dtype", T.INT32, "Output type."), _LAYOUT),
        kernel=_filled(_value), check=_check_shape_layout(f"fn.{_name}"),
        layout=_const_layout, dtype=lambda d, a: types.to_numpy(a["dtype"]),
        examples=(
            Example(args={"shape": [2, 3]}),
            Example(args={"shape": [4], "dtype": T.FLOAT, "layout": "W"}),
            Example(),
            Example(args={"shape": [2, 3], "layout": "HWC"}, raises=ArgumentError,
                    match="has 3 letters for a 2-D 'shape'"),
            Example(args={"shape": [-1, 2]}, raises=ArgumentError,
                    match="must not hold a negative extent"),
        ),
    ))
    register(OpSchema(
        name=f"{_name}_like",
        doc=f"A tensor of {_name} shaped as the input, of the input's type unless 'dtype' "
            "says otherwise.",
        inputs=(Input("data_like", "Data whose shape (and type) the output takes."),),
        args=(Arg("dtype", "dtype", None, "Output type (default: the input's)."),),
        kernel=_like(_value), batch_kernel=_like_batch(_value),
        dtype=lambda d, a: d[0] if a.get("dtype") is None else types.to_numpy(a["dtype"]),
        examples=(
            Example(inputs=(_U8,)),
            Example(args={"dtype": T.FLOAT}, inputs=(_U8,)),
            Example(args={"dtype": "float"}, inputs=(_U8,), raises=TypeError,
                    match="'dtype'"),
        ),
    ))


register(OpSchema(
    name="full",
    doc="The fill value repeated (broadcast) over the given shape; the output has the fill "
        "value's type.",
    inputs=(Input("fill_value", "The value (a scalar or a tensor that broadcasts to "
                                "'shape')."),),
    args=(_SHAPE, _LAYOUT),
    kernel=_full, check=_check_shape_layout("fn.full"), layout=_const_layout,
    examples=(
        Example(args={"shape": [2, 3]}, inputs=([np.float32(3.5), np.float32(-1)],)),
        Example(args={"shape": [2, 3]}, inputs=([np.arange(3, dtype=np.int32)] * 2,)),
        Example(inputs=([np.int16(7)] * 2,)),
        Example(args={"shape": [2, 2]}, inputs=([np.arange(3, dtype=np.int32)] * 2,),
                raises=RuntimeError, match="cannot be broadcast to the output shape (2, 2)"),
    ),
))

register(OpSchema(
    name="full_like",
    doc="The fill value repeated (broadcast) over the shape of the first input, converted "
        "to its type (rounded, saturated).",
    inputs=(Input("data_like", "Data whose shape, type and layout the output takes."),
            Input("fill_value", "The value (a scalar or a tensor that broadcasts to the "
                                "shape).")),
    kernel=_full_like,
    examples=(
        Example(inputs=(_U8, [np.float32(2.5), np.float32(300.0)])),
        Example(inputs=(_U8, [np.array([1], np.int32)] * 2)),
        Example(inputs=([x.astype(np.float32) for x in _U8], [np.float32(-1.5)] * 2)),
        Example(inputs=(_U8, [np.array([1, 2], np.float32)] * 2), raises=RuntimeError,
                match="cannot be broadcast"),
    ),
))
