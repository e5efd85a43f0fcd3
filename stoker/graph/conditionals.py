"""Conditional scopes: which samples of the batch an operator works on.

With ``enable_conditionals=True`` an ``if`` on a per-sample condition runs each branch on
its own samples only. While a branch is traced, the scope stack says which: a tuple of
(``Branching``, True/False) levels, one per enclosing ``if``. Each ``OpNode`` records the
scope it was made in. An operator inside a branch that reads a DataNode made outside it
reads it through ``_conditional.split`` (one split per node and ``if``, shared by both
branches: ``route``); after the branches, ``_conditional.merge`` puts each variable's two
halves back in the batch's order. The executor runs a scope's operators on as many
samples as the split gave it (compile.py cuts stages where the scope changes).
"""

from __future__ import annotations

import itertools

from stoker.errors import GraphError
from stoker.graph.node import RECORDER, DataNode, current_scope, set_scope

_ids = itertools.count()

Scope = tuple  # ((Branching, bool), ...), outermost first


class Branching:
    """One ``if`` on a DataNode: its predicate (made in the enclosing scope), where it is
    in the user's code, and the splits made for it so far."""

    __slots__ = ("predicate", "scope", "where", "splits", "id")

    def __init__(self, predicate: DataNode, scope: Scope, where: str):
        self.predicate = predicate
        self.scope = scope
        self.where = where
        self.splits: dict[int, tuple[DataNode, DataNode, DataNode]] = {}
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"<if at {self.where}>"


__all__ = ["Branching", "current_scope", "describe", "node_scope", "route", "set_scope"]


def describe(scope: Scope) -> str:
    if not scope:
        return "outside every conditional"
    return " > ".join(f"the {'true' if taken else 'false'} branch of the `if` at {b.where}"
                      for b, taken in scope)


def node_scope(node: DataNode) -> Scope:
    """The scope whose samples a node holds: its operator's, except for a split, whose two
    outputs hold the samples of the branches it feeds."""
    op = node.op
    if op.schema.name == "_conditional.split":
        return (*op.scope, (op.args["_branching"], node.index == 0))
    return op.scope


def route(node: DataNode, scope: Scope | None = None) -> DataNode:
    """``node`` as seen from ``scope`` (default: the current one): split by each ``if``
    entered since the node was made. A node made in a branch cannot leave it except through
    the merge of a variable."""
    scope = current_scope() if scope is None else scope
    have = node_scope(node)
    if have == scope:
        return node
    if scope[:len(have)] != have:
        raise GraphError(
            f"{node.name!r} was made in {describe(have)} and is used in {describe(scope)}; "
            "a value made inside a branch is only visible after the `if` through a "
            "variable assigned in both branches")
    for branching, taken in scope[len(have):]:
        pair = branching.splits.get(id(node))
        if pair is None:
            old = set_scope(branching.scope)
            try:
                true_part, false_part = RECORDER.call_op(
                    "_conditional.split", [node, branching.predicate],
                    {"_branching": branching})
            finally:
                set_scope(old)
            pair = (true_part, false_part, node)  # (the node keeps its id valid)
            branching.splits[id(node)] = pair
        node = pair[0] if taken else pair[1]
    return node
