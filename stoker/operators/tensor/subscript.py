"""``node[...]``: per-sample indexing and slicing of a DataNode.

An index is recorded as one hidden ``_subscript`` operator. Integers pick one position and
drop the axis (negative count from the back; out of range raises at run time); slices
``start:stop:step`` clamp like Python's; ``...`` stands for the remaining axes; ``None`` or
``newaxis`` (optionally named: ``newaxis("N")``) inserts an axis of extent 1. Integers and
slice bounds may be DataNodes holding one integer scalar per sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentTypeError
from stoker.graph.node import DataNode
from stoker.kernels.cpu.tensor import tensor as k
from stoker.operators.machinery.registry import call_op, register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import common_row


class NewAxis:
    """Inserts an axis of extent 1 when used in an index; call it to name the axis."""

    def __init__(self, name: str | None = None):
        if name is not None and (not isinstance(name, str) or len(name) != 1):
            raise ArgumentTypeError(f"newaxis: the name must be one letter, got {name!r}")
        self.name = name

    def __call__(self, name: str) -> NewAxis:
        return NewAxis(name)

    def __repr__(self) -> str:
        return "newaxis" if self.name is None else f"newaxis({self.name!r})"


newaxis = NewAxis()


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def subscript(node: DataNode, index: Any) -> DataNode:
    """Records ``node[index]``; DataNodes inside the index become extra inputs."""
    items = index if isinstance(index, tuple) else (index,)
    extra: list[DataNode] = []

    def bound(v: Any, what: str) -> Any:
        if v is None or _is_int(v):
            return None if v is None else int(v)
        if isinstance(v, DataNode):
            extra.append(v)
            return ("input", len(extra))
        raise ArgumentTypeError(f"DataNode indexing: a slice {what} must be an integer, None "
                                f"or a DataNode, got {type(v).__name__}: {v!r}")

    spec: list[tuple] = []
    for it in items:
        if it is Ellipsis:
            if ("...",) in spec:
                raise ArgumentTypeError("DataNode indexing: an index can have only one '...'")
            spec.append(("...",))
        elif it is None or isinstance(it, NewAxis):
            spec.append(("new", None if it is None else it.name))
        elif isinstance(it, slice):
            spec.append(("slice", bound(it.start, "start"), bound(it.stop, "stop"),
                         bound(it.step, "step")))
        elif _is_int(it) or isinstance(it, DataNode):
            spec.append(("at", bound(it, "index")))
        else:
            raise ArgumentTypeError(
                f"DataNode indexing: indices must be integers, slices, '...', None/newaxis or "
                f"DataNodes holding an integer per sample, got {type(it).__name__}: {it!r}")
    return call_op("_subscript", [node, *extra], {"spec": tuple(spec)})


def _value(v: Any, ins: list, lead: int) -> Any:
    if not isinstance(v, tuple):
        return v
    x = ins[v[1]]
    value = np.asarray(common_row(x) if lead else x)
    if value.dtype.kind not in "iu":
        raise ValueError(f"a DataNode index must hold integers, got {value.dtype}")
    if value.ndim != 0:
        raise ValueError(f"a DataNode index must be a scalar (0-D) per sample, got shape "
                         f"{value.shape}")
    return int(value)


def _items(ins: list, args: dict, lead: int) -> list[tuple]:
    return [(it[0], *(_value(v, ins, lead) for v in it[1:])) if it[0] in ("at", "slice")
            else it for it in args["spec"]]


def _layout(layouts: list, args: dict) -> str:
    src, spec = layouts[0] or "", args["spec"]
    # An unnamed new axis has no letter, so (as in DALI) the whole layout is dropped.
    if not src or any(it[0] == "new" and it[1] is None for it in spec):
        return ""
    consumed = sum(1 for it in spec if it[0] in ("at", "slice"))
    if consumed > len(src):
        return ""  # too many indices: reported when the samples are seen
    out, axis = [], 0
    for it in spec:
        if it[0] == "...":
            skip = len(src) - consumed
            out.append(src[axis:axis + skip])
            axis += skip
        elif it[0] == "new":
            out.append(it[1])
        else:
            if it[0] == "slice":
                out.append(src[axis])
            axis += 1
    return "".join(out) + src[axis:]


_U8 = [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.arange(60, dtype=np.uint8)
       .reshape(3, 4, 5)]

register(OpSchema(
    name="_subscript",
    doc="Indexes and slices each sample (created by ``node[...]``).",
    inputs=(Input("data", "The data."),
            Input("indices", "Per-sample integer scalars used in the index.", optional=True,
                  variadic=True)),
    args=(Arg("spec", "any", (), "The index: ('at', i), ('slice', lo, hi, step), ('new', "
              "name) or ('...',) items; ('input', k) refers to input k."),),
    kernel=lambda ins, a, c: k.subscript_cpu(ins[0], _items(ins, a, 0)),
    batch_kernel=lambda ins, a, c: k.subscript_cpu(ins[0], _items(ins, a, 1), lead=1),
    layout=_layout,
    examples=(
        Example(args={"spec": (("at", -1),)}, inputs=(_U8,)),
        Example(args={"spec": (("slice", None, None, -1), ("slice", 1, None, None))},
                inputs=(_U8,)),
        Example(args={"spec": (("...",), ("at", 0), ("new", "N"))}, inputs=(_U8,)),
        Example(args={"spec": (("at", ("input", 1)),)},
                inputs=(_U8, [np.array(1, np.int32), np.array(2, np.int32)])),
        Example(args={"spec": (("at", 2),)}, inputs=(_U8,), raises=RuntimeError,
                match="index 2 is out of range for axis 0 with extent 2 (sample shape "
                      "(2, 3, 4))"),
        Example(args={"spec": (("at", 0),) * 4}, inputs=(_U8,), raises=RuntimeError,
                match="too many indices (4) for a 3-D sample"),
    ),
))
