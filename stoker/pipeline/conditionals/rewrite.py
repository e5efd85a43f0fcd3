"""Rewrites a function's source so that its ``if`` statements, ``and``, ``or``, ``not`` and
calls go through ``runtime`` (imported into the function's globals as ``__stoker_ag__``).

    if test:                         def __stoker_if_true_7(y, z):
        y = a                            y = a
    else:                                return (y, z)
        z = b             ->         def __stoker_if_false_7(y, z):
                                         z = b
                                         return (y, z)
                                     (y, z) = __stoker_ag__.if_stmt(test, __stoker_if_true_7,
                                         __stoker_if_false_7, ('y', 'z'),
                                         (get(lambda: y), get(lambda: z)), 'file.py:12')

``a and b`` becomes ``and_(a, lambda: b, where)``; ``not a`` ``not_(a)``; ``f(x)``
``converted_call(f)(x)``. Returns at the end of both paths of an ``if`` (or of the ``if``
and the code after it) become one return after it. An ``if`` with ``break``,
``continue``, ``yield`` or another ``return`` keeps Python's ``if`` and refuses a
DataNode test with a clear error. Line numbers and the file name stay the user's, so
errors and operators' "created at" name the user's lines.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import os
import sysconfig
import textwrap
import types
from typing import Any

from stoker.pipeline.conditionals import runtime

AG = "__stoker_ag__"
_RET = "__stoker_retval"
_PREFIX = "__stoker_if_"
_counter = itertools.count()
_STOKER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LIBRARY_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                       for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _ag(attr: str) -> ast.expr:
    return ast.Attribute(value=ast.Name(id=AG, ctx=ast.Load()), attr=attr, ctx=ast.Load())


def _call(attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_ag(attr), args=list(args), keywords=[])


def _lambda(body: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                         kw_defaults=[], kwarg=None, defaults=[]), body=body)


# -- what an `if` assigns ------------------------------------------------------------------


def _stored_names(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements assign, in order, not looking into nested scopes."""
    names: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = None
            for d in node.decorator_list:
                visit(d)
            return
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp |
                      ast.GeneratorExp):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names[node.id] = None
        elif isinstance(node, ast.alias):
            names[(node.asname or node.name).split(".")[0]] = None
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in stmts:
        visit(stmt)
    return [n for n in names if not n.startswith(_PREFIX)]


def _blocker(stmts: list[ast.stmt]) -> str | None:
    """Why these statements cannot become a nested function, if they cannot."""
    def visit(node: ast.AST, in_loop: bool) -> str | None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                      ast.Lambda):
            return None
        if isinstance(node, ast.Return):
            return "it holds a `return` before its end"
        if isinstance(node, ast.Break | ast.Continue) and not in_loop:
            return f"it holds `{type(node).__name__.lower()}`"
        if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
            return "it holds `yield` or `await`"
        if isinstance(node, ast.Global | ast.Nonlocal):
            return "it holds `global` or `nonlocal`"
        loop = in_loop or isinstance(node, ast.For | ast.While | ast.AsyncFor)
        for child in ast.iter_child_nodes(node):
            why = visit(child, loop)
            if why:
                return why
        return None

    for stmt in stmts:
        why = visit(stmt, False)
        if why:
            return why
    return None


# -- returns at the end of both paths -------------------------------------------------------


def _always_returns(stmts: list[ast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and \
        _always_returns(last.orelse)


def _has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in _walk_scope(s))


def _walk_scope(node: ast.AST):
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                          ast.Lambda):
            yield from _walk_scope(child)


def _lift(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: ...; return a`` followed by more code: the code moves into the path of the
    ``if`` that does not return, so that both paths end in a return."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.If) and _has_return([stmt]):
            stmt.body = _lift(stmt.body)
            stmt.orelse = _lift(stmt.orelse)
            body_returns, else_returns = _always_returns(stmt.body), _always_returns(stmt.orelse)
            if body_returns != else_returns:
                rest = stmts[i + 1:]
                path = stmt.orelse if body_returns else stmt.body
                path.extend(rest)
                path[:] = _lift(path)
                if not _always_returns(path):
                    path.append(ast.copy_location(ast.Return(value=None), stmt))
                out.append(stmt)
                return out
            if body_returns:  # both return: what follows never runs
                out.append(stmt)
                return out
        out.append(stmt)
    return out


def _tail_assign(stmts: list[ast.stmt]) -> None:
    """The returns that end both paths become assignments to one variable."""
    last = stmts[-1]
    if isinstance(last, ast.Return):
        value = last.value or ast.Constant(value=None)
        stmts[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name(id=_RET, ctx=ast.Store())], value=value), last)
    else:
        _tail_assign(last.body)
        _tail_assign(last.orelse)


def _single_return(body: list[ast.stmt]) -> list[ast.stmt]:
    body = _lift(body)
    if body and isinstance(body[-1], ast.If) and _always_returns([body[-1]]):
        last = body[-1]
        _tail_assign([last])
        body.append(ast.copy_location(ast.Return(value=ast.Name(id=_RET, ctx=ast.Load())),
                                      last))
    return body


# -- the transformer ----------------------------------------------------------------------


class _Rewrite(ast.NodeTransformer):
    def __init__(self, filename: str):
        self.filename = filename

    def _where(self, node: ast.AST) -> ast.Constant:
        return ast.Constant(value=f"{self.filename}:{getattr(node, 'lineno', 0)}")

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        node.func = ast.copy_location(_call("converted_call", node.func), node.func)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", node.operand), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(attr, value, _lambda(result), self._where(node))
        return ast.copy_location(result, node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        """``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once: per sample for
        DataNodes, through ``and_`` (Python would ask a DataNode for its truth value)."""
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        k = next(_counter)
        temps = [f"{_PREFIX}cmp_{k}_{i}" for i in range(len(node.ops) - 1)]
        parts: list[ast.expr] = []
        left = node.left
        for i, (op, right) in enumerate(zip(node.ops, node.comparators, strict=True)):
            if i < len(temps):  # a middle operand: kept in a temporary for the next part
                right_expr: ast.expr = ast.NamedExpr(
                    target=ast.Name(id=temps[i], ctx=ast.Store()), value=right)
            else:
                right_expr = right
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right_expr]))
            left = ast.Name(id=temps[i], ctx=ast.Load()) if i < len(temps) else right
        result = parts[-1]
        for part in reversed(parts[:-1]):
            result = _call("and_", part, _lambda(result), self._where(node))
        return ast.copy_location(result, node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.body = _single_return(node.body)
        self.generic_visit(node)
        return node

    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)
        why = _blocker([*node.body, *node.orelse])
        if why:
            node.test = _call("python_only", node.test, self._where(node), ast.Constant(why))
            return node
        k = next(_counter)
        names = _stored_names([*node.body, *node.orelse])
        state = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in names], ctx=ast.Load())
        params = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names],
                               vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                               defaults=[])
        defs = []
        for label, body in (("true", node.body), ("false", node.orelse)):
            defs.append(ast.FunctionDef(
                name=f"{_PREFIX}{label}_{k}", args=params, decorator_list=[], returns=None,
                body=[*(body or [ast.Pass()]), ast.Return(value=state)]))
        call = _call("if_stmt", node.test,
                     ast.Name(id=defs[0].name, ctx=ast.Load()),
                     ast.Name(id=defs[1].name, ctx=ast.Load()),
                     ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load()),
                     ast.Tuple(elts=[_call("get", _lambda(ast.Name(id=n, ctx=ast.Load())),
                                           ast.Constant(n)) for n in names], ctx=ast.Load()),
                     self._where(node))
        if names:
            target = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names],
                               ctx=ast.Store())
            tail: ast.stmt = ast.Assign(targets=[target], value=call)
        else:
            tail = ast.Expr(value=call)
        out = [*defs, tail]
        for stmt in out:
            ast.copy_location(stmt, node)
            for child in ast.walk(stmt):
                if not hasattr(child, "lineno") or child is stmt:
                    ast.copy_location(child, node)
        return out


# -- converting functions -------------------------------------------------------------------


def _convertible(function: Any) -> bool:
    code = getattr(function, "__code__", None)
    if code is None or getattr(function, runtime.NO_CONVERT, False):
        return False
    if function.__name__ == "<lambda>" or code.co_flags & (inspect.CO_GENERATOR |
                                                            inspect.CO_COROUTINE):
        return False
    path = os.path.abspath(code.co_filename)
    return not (code.co_filename.startswith("<") or path.startswith(_STOKER_DIR + os.sep)
                or path.startswith(_LIBRARY_DIRS))


@functools.lru_cache(maxsize=1024)
def _converted_code(code: types.CodeType) -> types.CodeType:
    """The code object of the rewritten function (raises when its source is unavailable)."""
    lines, first = inspect.findsource(code)
    source = textwrap.dedent("".join(inspect.getblock(lines[code.co_firstlineno - 1:])))
    tree = ast.parse(source)
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef) or func.name != code.co_name:
        raise ValueError(f"cannot find the source of {code.co_name}")
    func.decorator_list = []
    func = _Rewrite(code.co_filename).visit(func)
    # Wrapped in a factory whose parameters are the function's free variables, so that
    # they stay free variables (the real cells are put back in `convert`).
    factory = ast.FunctionDef(
        name="__stoker_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in code.co_freevars],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=[func, ast.Return(value=ast.Name(id=func.name, ctx=ast.Load()))],
        decorator_list=[], returns=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, func)
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return next(c for c in factory_code.co_consts
                if isinstance(c, types.CodeType) and c.co_name == code.co_name)


def convert(function: Any) -> Any:
    """``function`` rewritten (raises when its source cannot be read or parsed)."""
    if isinstance(function, types.MethodType):
        return types.MethodType(convert(function.__func__), function.__self__)
    code = _converted_code(function.__code__)
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    closure = tuple(cells[name] for name in code.co_freevars)
    function.__globals__.setdefault(AG, NAMESPACE)
    new = types.FunctionType(code, function.__globals__, function.__name__,
                             function.__defaults__, closure or None)
    new.__kwdefaults__ = function.__kwdefaults__
    functools.update_wrapper(new, function)
    return new


def converted_call(function: Any) -> Any:
    """``function`` with its ``if`` statements rewritten, where it is the user's own Python
    function (not stoker's, the standard library's or an installed package's, nor marked
    with ``do_not_convert``); else ``function`` itself."""
    target = function.__func__ if isinstance(function, types.MethodType) else function
    if not isinstance(target, types.FunctionType) or not _convertible(target):
        return function
    try:
        return convert(function)
    except (OSError, TypeError, ValueError, SyntaxError, KeyError, StopIteration):
        return function  # no source to read (a REPL, a built function): called as it is


# What the rewritten code reaches as `__stoker_ag__`.
NAMESPACE = types.SimpleNamespace(
    **{name: getattr(runtime, name) for name in runtime.__all__},
    converted_call=converted_call)
