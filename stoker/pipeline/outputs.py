"""What ``Pipeline.set_outputs`` makes of the values it is given, as DALI 2.4 does.

A value that is not a DataNode becomes a constant output: numbers, flat lists and tuples
of numbers, numpy arrays and ``types.Constant`` (``constant_array`` gives DALI's types:
a Python float is FLOAT, an int INT32, float64 arrays FLOAT...). A list holding
DataNodes is refused (the outputs were meant to be unpacked with ``*``), and so is
anything else; DALI raises these TypeErrors (and an OverflowError for an int64 array out
of int32's range) at ``build()``, so the error is kept until then.

Operators created outside any pipeline (``coin = fn.random.coin_flip()`` at module level)
are copied into each pipeline that uses them (``take_in``): a pipeline owns its
operators (build fuses them in place), and in DALI such a node serves any number of
pipelines, each with its own instance.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from stoker import types
from stoker.graph.node import DataNode, OpNode, pipeline_stack


def output_nodes(pipe: Any, outputs: tuple) -> tuple[list[Any], Exception | None]:
    """The outputs as DataNodes (constants made for values), and the error to raise at
    ``build()`` for an output that cannot be one."""
    nodes: list[Any] = []
    error: Exception | None = None
    stack = pipeline_stack()
    stack.append(pipe)  # constants belong to the pipeline, also outside `with pipe:`
    try:
        for i, out in enumerate(outputs):
            if isinstance(out, DataNode):
                nodes.append(out)
            elif _holds_node(out):
                error = error or TypeError(
                    f"pipeline output {i} is a {type(out).__name__} holding DataNodes; pass "
                    "each output separately (unpack it with *: return a, b or "
                    "set_outputs(*outputs))")
            else:
                try:
                    nodes.append(constant_output(out))
                except OverflowError as e:  # DALI lets it through as it is
                    error = error or e
                except TypeError as e:
                    error = error or TypeError(
                        f"pipeline output {i} must be a DataNode or a value types.Constant "
                        f"takes (a number, a flat list or tuple of numbers, a numpy array), "
                        f"got {type(out).__name__}: {out!r:.80} ({e})")
    finally:
        stack.pop()
    return nodes, error


def _holds_node(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(isinstance(v, DataNode) or _holds_node(v) for v in value)
    return False


def constant_output(value: Any) -> DataNode:
    from stoker.operators.tensor.tensor import constant_node

    if isinstance(value, types.ScalarConstant):
        return constant_node(np.asarray(value.value), dtype=value.dtype, shape=[])
    array, dtype = constant_array(value)
    if array.dtype == np.bool_:  # fn.constant takes integers (idata) for a BOOL constant
        array = array.astype(np.int32)
    return constant_node(array, dtype=dtype)


def constant_array(value: Any, dtype: Any = None) -> tuple[np.ndarray, types.DALIDataType]:
    """``value`` as DALI's ``types.Constant(value, device=...)`` holds it, and its type.

    Arrays (and numpy scalars) keep their type, but float64 is stored as FLOAT and, when no
    ``dtype`` is given, int64/uint64 as INT32/UINT32 (OverflowError for values that do not
    fit). Python values: FLOAT if any is a float, else INT32 if any is an int (saturated,
    as DALI's constant operator converts), else BOOL; an empty list is FLOAT. Nested lists,
    strings and None raise TypeError."""
    if isinstance(value, np.ndarray | np.generic) or (
            hasattr(value, "__array__") and not isinstance(value, list | tuple)):
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"a constant must be numeric, got an array of {array.dtype}")
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif dtype is None and array.dtype in (np.int64, np.uint64):
            narrow = np.dtype(np.int32 if array.dtype == np.int64 else np.uint32)
            limits = np.iinfo(narrow)
            if array.size and (array.min() < limits.min or array.max() > limits.max):
                bad = array.min() if array.min() < limits.min else array.max()
                raise OverflowError(f"integer {bad} out of range for {narrow}")
            array = array.astype(narrow)
        return array, types.to_dali(dtype if dtype is not None else array.dtype)
    items = list(value) if isinstance(value, list | tuple) else [value]
    kinds = set()
    for x in items:
        if isinstance(x, bool):
            kinds.add("b")
        elif isinstance(x, int):
            kinds.add("i")
        elif isinstance(x, float):
            kinds.add("f")
        else:
            raise TypeError(f"unexpected type {type(x).__name__} in a constant")
    if "f" in kinds or not kinds:
        array, actual = np.asarray(value, np.float32), types.DALIDataType.FLOAT
    elif "i" in kinds:
        wide = np.asarray(value, np.float64)  # Python ints of any size, saturated below
        limits = np.iinfo(np.int32)
        array = np.clip(wide, limits.min, limits.max).astype(np.int32)
        actual = types.DALIDataType.INT32
    else:
        array, actual = np.asarray(value, np.bool_), types.DALIDataType.BOOL
    return array, types.to_dali(dtype) if dtype is not None else actual


def take_in(pipe: Any, outputs: list[DataNode]) -> list[DataNode]:
    """The outputs with every operator made outside any pipeline replaced by this
    pipeline's own copy; the pipeline's operators are re-wired to the copies."""
    from stoker.graph.compile import collect

    ops = collect(outputs, [])
    copies: dict[DataNode, DataNode] = {}
    for op in ops:  # in creation order: an operator's inputs are copied before it
        if op.pipeline is None:
            twin = _copy_op(op, copies)
            pipe._adopt(twin)
            copies.update(zip(op.outputs, twin.outputs, strict=True))
        elif op.pipeline is pipe and copies:
            op.inputs = [copies.get(n, n) for n in op.inputs]
            op.arg_nodes = {k: copies.get(n, n) for k, n in op.arg_nodes.items()}
    return [copies.get(n, n) for n in outputs]


def _copy_op(op: OpNode, copies: dict[DataNode, DataNode]) -> OpNode:
    twin = copy.copy(op)  # same schema, name, creation order and place in the user's code
    twin.args = dict(op.args)
    twin.inputs = [copies.get(n, n) for n in op.inputs]
    twin.arg_nodes = {k: copies.get(n, n) for k, n in op.arg_nodes.items()}
    twin.outputs = []
    for node in op.outputs:
        out = copy.copy(node)
        out.op = twin
        twin.outputs.append(out)
    return twin
