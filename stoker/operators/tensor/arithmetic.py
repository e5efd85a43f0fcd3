"""Arithmetic on DataNodes (``a + b``, ``-a``, ``a < 3``) and the ``stoker.math`` functions.

Each expression becomes one ``_arith`` node; Python scalars ride along as arguments, so
``images * 2`` needs no constant node. Types follow DALI's promotion rules
(``kernels/cpu/tensor/arith.py``); integer division and remainder truncate toward zero as in C++.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentTypeError
from stoker.graph.node import DataNode
from stoker.kernels.cpu.tensor import arith
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.machinery.registry import call_op, register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_OPS = arith.BINARY + arith.UNARY + ("clamp", "rsqrt")


def _operands(ins: list, args: dict) -> list:
    operands: list[Any] = list(ins)
    for pos, value, _ in args["scalars"]:
        operands.insert(pos, value)
    return operands


def _types(ins: list, args: dict) -> list[np.dtype]:
    return arith.with_scalar_types([np.asarray(x).dtype for x in ins], args["scalars"])


def _compute(ins: list, args: dict, sample_axis: bool) -> np.ndarray:
    dts = _types(ins, args)
    typed = []
    with np.errstate(over="ignore"):  # a float literal beyond float32 becomes inf, as in DALI
        for x, t in zip(_operands(ins, args), dts, strict=True):
            typed.append(x if isinstance(x, np.ndarray) else np.asarray(x, dtype=t))
    return arith.apply(args["op"], typed, arith.result_type(args["op"], dts), sample_axis)


def arith_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return _compute(ins, args, sample_axis=True)


def arith_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return _compute(ins, args, sample_axis=False)


def _layout(layouts: list, args: dict) -> str:
    best = ""
    for layout in layouts:
        if layout and len(layout) > len(best):
            best = layout
    return best


register(OpSchema(
    name="_arith",
    doc="Element-wise arithmetic expression (created by operators on DataNodes).",
    inputs=(Input("operands", "Tensor operands.", variadic=True),),
    args=(Arg("op", "str", "add", "The operation.", choices=_OPS),
          Arg("scalars", "any", (), "Scalar operands as (position, value, declared type).")),
    kernel=arith_sample, batch_kernel=arith_batch, layout=_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.arith", "arith"),
    dtype=lambda dts, a: arith.result_type(a["op"], arith.with_scalar_types(dts, a["scalars"])),
    examples=(
        Example(args={"op": "add"}, inputs=([np.array([1, 2], np.uint8)],
                                             [np.array([3, 4], np.int16)])),
        Example(args={"op": "mul", "scalars": ((1, 2.5, None),)},
                inputs=([np.arange(6, dtype=np.float32).reshape(2, 3)] * 2,)),
        Example(args={"op": "div"}, inputs=([np.array([-7, 7], np.int32)],
                                             [np.array([2, -2], np.int32)])),
        Example(args={"op": "sqrt"}, inputs=([np.array([4, 9], np.int32)],)),
        # A float scalar next to an integer tensor makes the result float32.
        Example(args={"op": "mul", "scalars": ((1, 2.5, None),)},
                inputs=([np.array([1, 2], np.uint8), np.array([3], np.uint8)],)),
        Example(args={"op": "bogus"}, inputs=([np.array([1], np.int32)],),
                raises=ValueError, match="'op' must be one of"),
    ),
))


def _is_scalar(x: Any) -> bool:
    return isinstance(x, bool | int | float | np.generic | types.ScalarConstant)


def expression(op: str, *operands: Any) -> DataNode:
    """Records one arithmetic node; non-node operands must be scalars or array constants."""
    nodes: list[DataNode] = []
    scalars: list[tuple[int, Any, Any]] = []
    for pos, x in enumerate(operands):
        if isinstance(x, DataNode):
            nodes.append(x)
        elif isinstance(x, types.ScalarConstant):
            scalars.append((pos, x.value, types.to_numpy(x.dtype)))
        elif _is_scalar(x):
            arith.scalar_type(np.dtype(np.int32), x, None)  # range check now, at the call
            declared = x.dtype if isinstance(x, np.generic) else None
            scalars.append((pos, x.item() if isinstance(x, np.generic) else x, declared))
        elif isinstance(x, np.ndarray | list | tuple):
            nodes.append(types.Constant(np.asarray(x)))
        else:
            raise ArgumentTypeError(
                f"arithmetic '{op}': operand {pos} must be a DataNode, a number or an array, "
                f"got {type(x).__name__}"
            )
    if not nodes:
        raise ArgumentTypeError(f"arithmetic '{op}': at least one operand must be a DataNode")
    return call_op("_arith", nodes, {"op": op, "scalars": tuple(scalars)})
