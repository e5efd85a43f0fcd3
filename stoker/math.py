"""``stoker.math``: element-wise functions on DataNodes, as ``nvidia.dali.math``."""

from __future__ import annotations

from typing import Any

from stoker.operators.tensor.arithmetic import expression


def _unary(op: str):
    def f(input: Any) -> Any:
        return expression(op, input)

    f.__name__ = op
    f.__doc__ = f"Element-wise {op} of a DataNode (integers give float32)."
    return f


sqrt, rsqrt, cbrt, exp, log, log2, log10 = map(
    _unary, ("sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10"))
abs, fabs, floor, ceil = map(_unary, ("abs", "fabs", "floor", "ceil"))
sin, cos, tan, asin, acos, atan = map(_unary, ("sin", "cos", "tan", "asin", "acos", "atan"))
sinh, cosh, tanh, asinh, acosh, atanh = map(
    _unary, ("sinh", "cosh", "tanh", "asinh", "acosh", "atanh"))


def atan2(x: Any, y: Any) -> Any:
    """Element-wise arctangent of x / y, as numpy.arctan2(x, y)."""
    return expression("atan2", x, y)


def fpow(base: Any, exponent: Any) -> Any:
    """Element-wise power computed in floating point (integers give float32)."""
    return expression("fpow", base, exponent)


def min(left: Any, right: Any) -> Any:
    """Element-wise minimum."""
    return expression("min", left, right)


def max(left: Any, right: Any) -> Any:
    """Element-wise maximum."""
    return expression("max", left, right)


def pow(base: Any, exponent: Any) -> Any:
    """Element-wise power (``base ** exponent``)."""
    return expression("pow", base, exponent)


def clamp(value: Any, lo: Any, hi: Any) -> Any:
    """Element-wise ``min(max(value, lo), hi)``."""
    return expression("clamp", value, lo, hi)
