"""Tensor operators: type, shape and layout changes, joining, padding, slicing, constants.

Kernels are in ``kernels/cpu/tensor.py``; this module holds the schemas and the glue.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.ops.registry import call_op, register
from stoker.ops.schema import REQUIRED, Arg, Example, Input, OpSchema

_X = Input("input", "The data.")
_U8 = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3), np.arange(18, dtype=np.uint8)
       .reshape(3, 2, 3)]
_F32 = [np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3),
        np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)]


def _same_layout(layouts: list, args: dict) -> str:
    return layouts[0] or ""


# -- cast -------------------------------------------------------------------------------------

def cast_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return ins[0].astype(types.to_numpy(args["dtype"]))


register(OpSchema(
    name="cast",
    doc="Converts the data to another type (C-style conversion; floats to integers round "
        "toward zero and saturate).",
    inputs=(_X,),
    args=(Arg("dtype", "dtype", REQUIRED, "Output data type."),),
    kernel=lambda ins, a, c: cast_batch([ins[0]], a, c), batch_kernel=cast_batch,
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(Example(args={"dtype": types.FLOAT}, inputs=(_U8,)),
              Example(args={"dtype": types.UINT8}, inputs=(_F32,)),
              Example(args={}, inputs=(_U8,), raises=TypeError,
                      match="missing required argument 'dtype'")),
))


# -- copy, shapes, get_property, constant -------------------------------------------------------

register(OpSchema(
    name="copy",
    doc="A copy of the input.",
    inputs=(_X,),
    kernel=lambda ins, a, c: np.array(ins[0], copy=True),
    batch_kernel=lambda ins, a, c: np.array(ins[0], copy=True),
    examples=(Example(inputs=(_U8,)), Example(args={"dtpe": 1}, inputs=(_U8,), raises=TypeError,
                                                match="unknown argument 'dtpe'")),
))


def shapes_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    shape = np.asarray(x.shape[1:], dtype=types.to_numpy(args["dtype"]))
    return np.broadcast_to(shape, (x.shape[0], len(shape))).copy()


register(OpSchema(
    name="shapes",
    doc="The shape of each sample, as a 1D tensor.",
    inputs=(_X,),
    args=(Arg("dtype", "dtype", types.INT64, "Output data type."),),
    kernel=lambda ins, a, c: np.asarray(np.shape(ins[0]), dtype=types.to_numpy(a["dtype"])),
    batch_kernel=shapes_batch, layout=lambda layouts, a: "",
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(Example(inputs=(_U8,)), Example(args={"dtype": types.INT32}, inputs=(_F32,)),
              Example(args={"dtype": "float"}, inputs=(_U8,), raises=TypeError,
                      match="must be a data type")),
))


def get_property_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    key = args["key"]
    if key == "source_info":
        return np.frombuffer(ctx.source_info.encode("utf-8"), dtype=np.uint8).copy()
    layout = ctx.batch.pipeline and ""  # layout is static: resolved by the schema's glue
    return np.frombuffer((layout or "").encode(), dtype=np.uint8).copy()


def _get_property_instance(op: Any, pipeline: Any) -> Any:
    from stoker.ops.base import SampleOp

    inst = SampleOp(op, pipeline)
    if op.args["key"] == "layout":
        encoded = np.frombuffer((op.inputs[0].layout or "").encode(), dtype=np.uint8).copy()
        inst.kernel = lambda ins, a, c: encoded
    return inst


register(OpSchema(
    name="get_property",
    doc="A property of each sample as a uint8 string: 'source_info' (where the sample came "
        "from, e.g. its file path) or 'layout'.",
    inputs=(_X,),
    args=(Arg("key", "str", REQUIRED, "Which property.", choices=("source_info", "layout")),),
    kernel=get_property_sample, instance=_get_property_instance,
    layout=lambda layouts, a: "", dtype=lambda d, a: np.dtype(np.uint8),
    examples=(Example(args={"key": "layout"}, inputs=(_U8,)),
              Example(args={"key": "source_info"}, inputs=(_U8,)),
              Example(args={"key": "size"}, inputs=(_U8,), raises=ValueError,
                      match="'key' must be one of")),
))


def _constant_value(args: dict) -> np.ndarray:
    if args.get("fdata") is not None:
        data = np.asarray(args["fdata"], np.float32)
    elif args.get("idata") is not None:
        data = np.asarray(args["idata"], np.int32)
    else:
        raise ArgumentError("fn.constant: give either 'fdata' or 'idata'")
    shape = args.get("shape")
    if shape is not None:  # [] is a scalar; no shape at all keeps the values 1D
        if data.size == 1:
            data = np.full(shape, data.reshape(()))
        elif data.size != int(np.prod(shape)):
            raise ArgumentError(f"fn.constant: argument 'shape' {shape} does not match the "
                                f"{data.size} values given")
        else:
            data = data.reshape(shape)
    if args.get("dtype") is not None:
        data = data.astype(types.to_numpy(args["dtype"]))
    return data


def constant_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    value = _constant_value(args)
    return np.broadcast_to(value, (ctx.n, *value.shape)).copy()


def _check_constant(args: dict) -> None:
    if args.get("fdata") is None and args.get("idata") is None:
        raise ArgumentError("fn.constant: give either 'fdata' or 'idata'")
    _constant_value(args)


register(OpSchema(
    name="constant",
    doc="The same tensor for every sample.",
    args=(Arg("fdata", "floats", None, "Float values."),
          Arg("idata", "ints", None, "Integer values."),
          Arg("shape", "ints", None, "Shape; a single value is repeated to fill it.",
              range=(0, None)),
          Arg("dtype", "dtype", None, "Output type (default: FLOAT for fdata, INT32 for idata)."),
          Arg("layout", "layout", "", "Layout of the output.")),
    kernel=lambda ins, a, c: _constant_value(a), batch_kernel=constant_batch,
    check=_check_constant,
    layout=lambda layouts, a: a.get("layout", ""),
    dtype=lambda d, a: _constant_value(a).dtype,
    examples=(Example(args={"fdata": [1.0, 2.0, 3.0]}),
              Example(args={"idata": [7], "shape": [2, 2], "dtype": types.UINT8}),
              Example(args={"shape": [2]}, raises=ValueError, match="either 'fdata' or 'idata'")),
))


def constant_node(value: Any, dtype: Any = None, shape: Any = None, layout: Any = None,
                  device: Any = None, **kwargs: Any) -> Any:
    """``types.Constant`` for tensors: an ``fn.constant`` node holding ``value``."""
    arr = np.asarray(value)
    if dtype is None:
        dtype = types.to_dali(arr.dtype if arr.dtype != np.float64 else np.float32)
    key = "fdata" if arr.dtype.kind == "f" else "idata"
    data = arr.reshape(-1).tolist()
    args = {key: data, "shape": list(shape) if shape is not None else list(arr.shape),
            "dtype": dtype, **kwargs}
    if layout is not None:
        args["layout"] = layout
    if device is not None:
        args["device"] = device
    return call_op("constant", [], args)


# -- device moves (the GPU backend supplies the kernels) ----------------------------------------

register(OpSchema(
    name="_to_device",
    doc="Moves data to another device.",
    inputs=(_X,),
    args=(Arg("device", "str", "gpu", "Target device.", choices=("cpu", "gpu")),),
    devices=("gpu",),
    kernel=lambda ins, a, c: ins[0],
    examples=(Example(args={"device": "gpu"}, inputs=(_U8,)),
              Example(args={"device": "tpu"}, inputs=(_U8,), raises=ValueError,
                      match="must be one of"),),
))
