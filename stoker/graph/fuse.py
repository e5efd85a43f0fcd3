"""Fusion: rules that rewrite chains of operators into one cheaper operator at build time.

A rule is ``rule(op, uses) -> bool``: it rewrites ``op`` (and the operators it absorbs)
in place and says whether it did; ``uses`` counts the readers of each node, so that a rule
fires only where an intermediate value has no other use. The rules belong to the operator
families whose chains they rewrite (the image chains': ``operators/image/fusion.py``),
which add them here as they load: graph/ imports no operator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from stoker.graph.node import DataNode, OpNode

ENABLED = True  # tests switch this off to compare fused and unfused results

RULES: list[Callable[[OpNode, Counter], bool]] = []


def add_rules(*rules: Callable[[OpNode, Counter], bool]) -> None:
    """Rules tried, in this order, on every operator of every graph built from now on."""
    RULES.extend(rules)


def _uses(ops: list[OpNode], outputs: list[DataNode]) -> Counter:
    uses: Counter = Counter(id(n) for n in outputs)
    for op in ops:
        uses.update(id(n) for n in op.upstream())
    return uses


def seed_origin(op: OpNode) -> OpNode:
    """The operator whose seed ``op`` draws with: the random one fusion put it in place of."""
    return op.args.get("_seed_from", op)


def fuse(ops: list[OpNode], outputs: list[DataNode]) -> bool:
    """Applies every rule once per operator; True when the graph changed."""
    if not ENABLED:
        return False
    uses = _uses(ops, outputs)
    changed = False
    for op in ops:
        for rule in RULES:
            if rule(op, uses):
                changed = True
                uses = _uses(ops, outputs)
    return changed
