"""What rewritten pipeline functions call (as ``__stoker_ag__``, with rewrite.py's
``converted_call``): ``if_stmt``, ``and_``, ``or_``, ``not_``, ``get``, ``python_only``.

A Python condition keeps Python's semantics: only the branch taken runs. A DataNode
condition (one scalar per sample) traces both branches, each in its conditional scope, so
each operator in a branch runs on that branch's samples only; then every variable either
branch assigned is merged back in the batch's order. As in DALI 2.4, a variable must be
assigned on both paths (or before the ``if``), hold the same structure (tuple length, dict
keys) in both, and ``and``/``or`` take boolean scalars (``not`` any scalar).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stoker.errors import GraphError
from stoker.graph.conditionals import Branching, describe, route
from stoker.graph.node import RECORDER, DataNode, current_scope, set_scope

NO_CONVERT = "_stoker_do_not_convert"  # do_not_convert's mark on a function


class _Undefined:
    """A variable not assigned (yet) when a branch starts or ends. Using it inside a branch
    raises the NameError Python would raise for the unassigned variable."""

    __slots__ = ("name",)

    def __init__(self, name: str = ""):
        self.name = name

    def __repr__(self) -> str:
        return "<undefined>"

    def _fail(self, *_: Any) -> Any:
        where = describe(current_scope())
        raise NameError(f"variable {self.name!r} has no value in {where}: it is assigned "
                        "only later, or only in the other branch")


for _dunder in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv",
                "floordiv", "mod", "pow", "and", "or", "xor", "lt", "le", "gt", "ge",
                "getitem", "call", "iter", "len", "bool", "neg", "invert", "getattr"):
    setattr(_Undefined, f"__{_dunder}__", _Undefined._fail)

UNDEFINED: Any = _Undefined()


def get(thunk: Callable[[], Any], name: str = "") -> Any:
    """A variable's value before an ``if``, or an undefined stand-in where it has none yet."""
    try:
        return thunk()
    except NameError:  # (UnboundLocalError too)
        return _Undefined(name)


def python_only(test: Any, where: str, why: str) -> Any:
    """The test of an ``if`` that could not be rewritten (``why``): a DataNode is refused."""
    if isinstance(test, DataNode):
        raise GraphError(f"the `if` at {where} tests a DataNode, but {why}; stoker can only "
                         "branch per sample on an `if` without these (move them out of it)")
    return test


def if_stmt(test: Any, body: Callable, orelse: Callable, names: tuple, state: tuple,
            where: str) -> tuple:
    if not isinstance(test, DataNode):
        return (body if test else orelse)(*state)
    outer = current_scope()
    branching = Branching(route(test), outer, where)
    results = []
    for taken, branch in ((True, body), (False, orelse)):
        old = set_scope((*outer, (branching, taken)))
        try:
            results.append(branch(*state))
        finally:
            set_scope(old)
    return tuple(_merge(name, a, b, branching)
                 for name, a, b in zip(names, *results, strict=True))


def _divergent(name: str, branching: Branching, a: Any, b: Any) -> GraphError:
    return GraphError(
        f"the `if` at {branching.where}: Divergent data found in different branches for "
        f"variable {name!r}: {_shape_of(a)} in the true branch, {_shape_of(b)} in the false "
        "one. Its values from both branches merge into one batch, so they need the same "
        "nesting (tuple/list length, dict keys)")


def _shape_of(value: Any) -> str:
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(value)}"
    return "a DataNode" if isinstance(value, DataNode) else type(value).__name__


def _merge(name: str, a: Any, b: Any, branching: Branching) -> Any:
    if a is b:
        return a
    if isinstance(a, _Undefined) or isinstance(b, _Undefined):
        missing = "false" if isinstance(b, _Undefined) else "true"
        raise GraphError(
            f"the `if` at {branching.where}: variable {name!r} is assigned in one branch only "
            f"(not in the {missing} branch); assign it in both branches or before the `if`, "
            "since after it each sample takes the value of the branch it went through")
    if isinstance(a, DataNode) or isinstance(b, DataNode):
        if not (_is_leaf(a) and _is_leaf(b)):
            raise _divergent(name, branching, a, b)
        scope = branching.scope
        t = _into(a, (*scope, (branching, True)))
        f = _into(b, (*scope, (branching, False)))
        old = set_scope(scope)
        try:
            return RECORDER.call_op("_conditional.merge", [t, f, branching.predicate],
                                    {"_branching": branching, "_variable": repr(name)})
        finally:
            set_scope(old)
    if isinstance(a, tuple | list) and type(a) is type(b) and len(a) == len(b):
        return type(a)(_merge(f"{name}[{k}]", x, y, branching)
                       for k, (x, y) in enumerate(zip(a, b, strict=True)))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return {k: _merge(f"{name}[{k!r}]", a[k], b[k], branching) for k in a}
    if type(a) is type(b) and not isinstance(a, tuple | list | dict):
        try:
            if bool(np.all(a == b)):
                return a
        except Exception:
            pass
        raise GraphError(f"the `if` at {branching.where}: variable {name!r} holds different "
                         f"Python values in the two branches ({a!r} and {b!r}); only "
                         "DataNodes can differ per sample")
    raise _divergent(name, branching, a, b)


def _is_leaf(value: Any) -> bool:
    return isinstance(value, DataNode | int | float | bool | np.ndarray | np.generic)


def _into(value: Any, scope: tuple) -> DataNode:
    """A branch's value as a DataNode of that branch (a Python number becomes a constant
    there, as DALI makes one)."""
    if isinstance(value, DataNode):
        return route(value, scope)
    old = set_scope(scope)
    try:
        return RECORDER.call_op("copy", [value], {})
    finally:
        set_scope(old)


def not_(value: Any) -> Any:
    if isinstance(value, DataNode):
        return RECORDER.call_op("_conditional.not_", [value], {})
    return not value


def _validated(value: Any, expression: str, side: str) -> Any:
    return RECORDER.call_op("_conditional.validate_logical", [value],
                            {"expression": expression, "side": side})


def and_(left: Any, right: Callable[[], Any], where: str) -> Any:
    """``left and right()``; per sample for a DataNode ``left`` (``right`` runs only on the
    samples where ``left`` is true)."""
    if not isinstance(left, DataNode):
        return left and right()
    left = _validated(left, "and", "left")
    return if_stmt(left, lambda: (_validated(right(), "and", "right"),), lambda: (left,),
                   ("`and`",), (), where)[0]


def or_(left: Any, right: Callable[[], Any], where: str) -> Any:
    """``left or right()``; per sample for a DataNode ``left``."""
    if not isinstance(left, DataNode):
        return left or right()
    left = _validated(left, "or", "left")
    return if_stmt(left, lambda: (left,), lambda: (_validated(right(), "or", "right"),),
                   ("`or`",), (), where)[0]


__all__ = ["UNDEFINED", "and_", "get", "if_stmt", "not_", "or_", "python_only"]
