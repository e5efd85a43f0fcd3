"""Tensor operators: type changes, copies, shapes and properties, constants, one-hot.

Shape changes are in ``shape.py``, joining and padding in ``join.py``, windows in
``slicing.py``; kernels are in ``kernels/cpu/tensor/``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import tensor as tensor_kernels
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.machinery.layouts import NdimLayout, run_layout
from stoker.operators.machinery.registry import call_op, register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import batch_of, batch_stage, check_out_layout

_X = Input("input", "The data.")
_U8 = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3), np.arange(18, dtype=np.uint8)
       .reshape(3, 2, 3)]
_F32 = [np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3),
        np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)]


def _same_layout(layouts: list, args: dict) -> str:
    return layouts[0] or ""


# -- cast -------------------------------------------------------------------------------------

def cast_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return tensor_kernels.cast_cpu(ins[0], types.to_numpy(args["dtype"]))


register(OpSchema(
    name="cast",
    doc="Converts the data to another type: floats to integers round half away from zero "
        "and saturate, integers saturate.",
    inputs=(_X,),
    args=(Arg("dtype", "dtype", REQUIRED, "Output data type."),),
    kernel=lambda ins, a, c: cast_batch([ins[0]], a, c), batch_kernel=cast_batch,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.tensor", "cast"),
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(Example(args={"dtype": types.FLOAT}, inputs=(_U8,)),
              Example(args={"dtype": types.UINT8}, inputs=(_F32,)),
              Example(args={}, inputs=(_U8,), raises=TypeError,
                      match="missing required argument 'dtype'")),
))


def cast_like_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return tensor_kernels.cast_cpu(ins[0], ins[1].dtype)


register(OpSchema(
    name="cast_like",
    doc="Converts the first input to the type of the second, as fn.cast converts; the "
        "second input's values are not read.",
    inputs=(_X, Input("reference", "Data whose type the output takes.")),
    kernel=lambda ins, a, c: cast_like_batch([ins[0], np.asarray(ins[1])], a, c),
    batch_kernel=cast_like_batch,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.tensor", "cast_like"),
    dtype=lambda d, a: d[1],
    examples=(Example(inputs=(_F32, _U8)), Example(inputs=(_U8, _F32)),
              Example(inputs=(_U8,), raises=TypeError, match="expects 2 input(s), got 1")),
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
    from stoker.operators.machinery.base import SampleOp

    inst = SampleOp(op, pipeline)
    if op.args["key"] == "layout":
        layout = op.inputs[0].layout
        layout = "" if layout is None else layout  # (an NdimLayout is falsy)
        encoded = np.frombuffer(layout.encode(), dtype=np.uint8).copy()
        inst.kernel = lambda ins, a, c: encoded
        if isinstance(layout, NdimLayout):  # known from each sample's rank
            inst.kernel = lambda ins, a, c: np.frombuffer(
                run_layout(layout, [ins[0]]).encode(), dtype=np.uint8).copy()
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


# -- one_hot (a batch stage: DALI's scalar rule looks at the whole batch) -------------------------

def _one_hot_run(ins: list, args: dict, argv: dict, n: int) -> Any:
    x = ins[0]
    axis = args["axis"]
    # DALI's legacy rule: when every sample holds exactly one element and 'axis' is left at
    # -1, each is encoded as a scalar, so (1,)-shaped labels give (num_classes,) outputs.
    dense = isinstance(x, np.ndarray)
    if axis == -1 and n and (x.size == n if dense else all(np.size(s) == 1 for s in x)):
        x = x.reshape(n) if dense else np.stack([np.asarray(s).reshape(()) for s in x])
    ndim = (x.ndim - 1) if isinstance(x, np.ndarray) else max((np.ndim(s) for s in x),
                                                               default=0)
    if args.get("axis_name") is not None and ndim > 0 and not args["_in_layouts"][0]:
        # DALI's words: a new axis name needs the names of the input's axes.
        raise ValueError(f"'axis_name' {args['axis_name']!r} needs an input with a layout "
                         f"(Input layout mismatch - expected input layout to be of size "
                         f'{ndim} but instead got "", which is of size 0.)')
    params = (args["num_classes"], axis, args["on_value"], args["off_value"],
              types.to_numpy(args["dtype"]))
    if isinstance(x, np.ndarray):
        out = tensor_kernels.one_hot_cpu(x, *params, lead=1)
        check_out_layout(out.ndim - 1, args, _ONE_HOT_HINT)
        return out
    outs = [tensor_kernels.one_hot_cpu(np.asarray(s), *params) for s in x]
    for o in outs:
        check_out_layout(o.ndim, args, _ONE_HOT_HINT)
    return batch_of(outs)


_ONE_HOT_HINT = ("; 'axis_name' needs an input with a layout (samples of one element are "
                 "encoded as scalars, giving 1-D outputs)")


def _one_hot_layout(layouts: list, args: dict) -> str:
    name = args.get("axis_name")
    if name is None:
        return ""
    src = layouts[0] or ""
    at = len(src) if args["axis"] < 0 else args["axis"]
    if at > len(src):
        raise ArgumentError(f"fn.one_hot: argument 'axis' {args['axis']} is out of range for "
                            f"an input of layout {src!r}")
    return src[:at] + name + src[at:]


def _one_hot_instance(op: Any, pipeline: Any) -> Any:
    name = op.args.get("axis_name")
    if name is not None and len(name) != 1:  # at build, as DALI checks it, in its words
        raise ArgumentError(f"fn.one_hot: argument 'axis_name' must be one letter: "
                            f'Unsupported axis_name value. It must be a single character, got '
                            f'"{name}" instead.')
    return batch_stage(_one_hot_run)(op, pipeline)


_LABELS = [np.array([0, 2, 1], np.int32), np.array([3, -1, 5], np.int32)]

register(OpSchema(
    name="one_hot",
    doc="One-hot encodes class indices along a new axis of 'num_classes': 'on_value' at the "
        "class (floats truncate toward zero), 'off_value' elsewhere. When every sample of the "
        "batch holds one element and 'axis' is -1, each is treated as a scalar.",
    inputs=(_X,),
    args=(Arg("num_classes", "int", 0, "Number of classes (extent of the new axis).",
              range=(0, None)),
          Arg("axis", "int", -1, "Position of the new axis; -1 appends it.", range=(-1, None)),
          Arg("dtype", "dtype", types.FLOAT, "Output data type."),
          Arg("on_value", "float", 1.0, "Value at the class index (cast to 'dtype')."),
          Arg("off_value", "float", 0.0, "Value elsewhere (cast to 'dtype')."),
          Arg("axis_name", "str", None, "Layout letter of the new axis (default: the output "
              "layout is empty).")),
    stage="batch", instance=_one_hot_instance,
    layout=_one_hot_layout, dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(Example(args={"num_classes": 4}, inputs=(_LABELS,)),
              Example(args={"num_classes": 3, "axis": 0, "dtype": types.UINT8,
                            "on_value": 300.0, "off_value": -1.0}, inputs=(_LABELS,)),
              Example(args={"num_classes": 5}, inputs=([np.array([2], np.int64),
                                                        np.array([4], np.int64)],)),
              Example(args={"num_classes": 2}, inputs=([np.array([1, 0], np.uint8),
                                                        np.array([1], np.uint8)],)),
              Example(args={"num_classes": -1}, inputs=(_LABELS,), raises=ValueError,
                      match="'num_classes' must be in [0"),
              Example(args={"num_classes": 3, "axis": 2}, inputs=(_LABELS,),
                      raises=RuntimeError, match="'axis' 2 is out of range for 1-D samples")),
))


# -- device moves: DataNode.gpu() / .cpu() ------------------------------------------------------
# The operator runs in the GPU part of the batch. For device="gpu" the executor uploads its
# CPU input (stoker/executor/gpu.py) and the kernel passes it on; for device="cpu" its
# output node is a CPU node, which the executor downloads.

register(OpSchema(
    name="_to_device",
    doc="Moves data to another device.",
    inputs=(_X,),
    args=(Arg("device", "str", "gpu", "Target device.", choices=("cpu", "gpu")),),
    devices=("gpu",),
    kernel=lambda ins, a, c: ins[0],
    gpu_kernel=lambda ins, a, c: ins[0],
    examples=(Example(args={"device": "gpu"}, inputs=(_U8,)),
              Example(args={"device": "tpu"}, inputs=(_U8,), raises=ValueError,
                      match="must be one of"),),
))
