"""Layouts known only at run time: a source whose layout is not given when it is defined.

DALI decides layouts per batch: ``fn.external_source()`` without ``layout=`` takes the
layout the data comes with (``feed_input(..., layout="HWC")``, or a fed ``TensorList``'s),
and every operator downstream derives its own from it at run time. stoker decides layouts
when the graph is built, so such a source's outputs carry a ``Pending`` layout: the empty
layout, marked as "not known until fed". Layout rules downstream see the empty layout while
the graph is built (what they refuse then waits for the fed layout), and their outputs are
marked ``Pending`` too; so are operator instances that refuse the empty layout at build.

At run time the executor reads the layouts each source gave for the batch and resolves the
marked nodes with the same rules (``resolve``), once per combination of fed layouts; the
operators that read a marked layout get instances made for those layouts (``relabeled``).
A source's layout can change at most once in DALI (from empty to a layout, which then
stays), so in practice a pipeline resolves once or twice, and nothing is added per sample.
"""

from __future__ import annotations

from typing import Any

from stoker.graph.node import DataNode, OpNode


class Pending(str):
    """A layout decided at run time; its value is the one rules see while the graph is built
    (it prints as that string: messages made from it read as before)."""


class Refused(Pending):
    """A pending layout whose rule refused the empty stand-in: its operator may refuse it
    when made at build too, and is made again when the layout is fed."""


def rule_layouts(schema: Any, in_layouts: list, args: dict, n: int) -> list:
    """The layouts of an operator's ``n`` outputs for these input layouts (its schema's rule;
    by default the first input's layout, or a ``layout`` argument)."""
    if schema.layout is not None:
        out = schema.layout(in_layouts, args)
    else:
        out = in_layouts[0] if in_layouts else args.get("layout", "") or ""
    if not isinstance(out, list | tuple):
        out = [out] * n
    return list(out)


def output_layouts(schema: Any, inputs: list[DataNode], args: dict, n: int) -> list:
    """The output layouts of a new operator node, while the graph is built."""
    in_layouts = [node.layout for node in inputs]
    if not any(isinstance(layout, Pending) for layout in in_layouts):
        return rule_layouts(schema, in_layouts, args, n)
    try:
        out = rule_layouts(schema, in_layouts, args, n)
    except Exception:
        # Refused with the empty stand-in: the layout fed at run time may satisfy the rule
        # ('C' of axis_names in a fed 'HWC'). resolve() applies it again then, and raises
        # what it still refuses (at run time, where DALI checks layouts too).
        return [Refused("")] * n
    return [Pending(layout or "") for layout in out]


def is_pending(op: OpNode) -> bool:
    """Whether a (non-source) operator reads a layout decided at run time."""
    return any(isinstance(node.layout, Pending) for node in op.inputs)


def is_refused(op: OpNode) -> bool:
    """Whether the operator's layout rule refused the empty stand-in of a pending layout."""
    return any(isinstance(node.layout, Refused) for node in op.outputs)


class LayoutError(Exception):
    """A layout rule refused the layouts fed at run time; ``op`` is the operator."""

    def __init__(self, op: OpNode, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.op = op
        self.cause = cause


def resolve(ops: list[OpNode], fed: dict[DataNode, str]) -> dict[DataNode, str]:
    """The layout of every output of ``ops`` (the pending operators, in the plan's order,
    which is a topological one) given the layouts ``fed`` to the pending source nodes."""
    layouts: dict[DataNode, str] = dict(fed)
    for op in ops:
        ins = [layouts.get(node, node.layout) for node in op.inputs]
        try:
            outs = rule_layouts(op.schema, ins, {**op.args, **op.arg_nodes}, len(op.outputs))
        except Exception as e:
            raise LayoutError(op, e) from e
        for node, layout in zip(op.outputs, outs, strict=True):
            layouts[node] = layout if layout is not None else ""
    return layouts


def relabeled(op: OpNode, layouts: dict[DataNode, str]) -> OpNode:
    """A copy of ``op`` whose input and output nodes carry the resolved layouts, for making
    an operator instance (instances read their layouts from their node when made)."""
    copy = object.__new__(OpNode)
    for slot in OpNode.__slots__:
        setattr(copy, slot, getattr(op, slot))
    copy.inputs = [DataNode(n.op, n.index, n.device, layouts.get(n, n.layout))
                   for n in op.inputs]
    copy.outputs = [DataNode(copy, n.index, n.device, layouts.get(n, n.layout))
                    for n in op.outputs]
    return copy
