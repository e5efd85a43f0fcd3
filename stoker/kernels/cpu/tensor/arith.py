"""Element-wise arithmetic with DALI's type promotion and C++-style integer semantics.

``result_type`` says what type an expression has; ``apply`` computes it on arrays whose
first axis may be the sample axis (``sample_axis=True``), broadcasting within samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_INT_ORDER = [np.int8, np.int16, np.int32, np.int64]
_UINT_ORDER = [np.uint8, np.uint16, np.uint32, np.uint64]
_FLOAT_ORDER = [np.float16, np.float32, np.float64]

BINARY = ("add", "sub", "mul", "fdiv", "div", "mod", "pow", "fpow", "min", "max", "atan2",
          "bitand", "bitor", "bitxor", "eq", "neq", "lt", "leq", "gt", "geq")
COMPARISON = ("eq", "neq", "lt", "leq", "gt", "geq")
BITWISE = ("bitand", "bitor", "bitxor")
UNARY = ("minus", "abs", "bitnot", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "floor",
         "ceil", "sin", "cos", "tan", "tanh", "asin", "acos", "atan", "sinh", "cosh",
         "asinh", "acosh", "atanh", "fabs")
FLOAT_UNARY = frozenset(UNARY) - {"minus", "abs", "bitnot"}


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """DALI's binary type promotion for two tensor operands."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.itemsize >= b.itemsize else b
        return a if a.kind == "f" else b
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if unsigned.itemsize < signed.itemsize:
        return signed
    wider = min(unsigned.itemsize * 2, 8)
    return np.dtype(f"i{wider}")


def scalar_type(tensor: np.dtype, value: Any, declared: np.dtype | None) -> np.dtype:
    """Type of a scalar operand. As in DALI, Python literals are typed, not "weak": an int
    is int32, a float float32, a bool bool; numpy scalars and typed Constants keep theirs."""
    if declared is not None:
        return np.dtype(declared)
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        if not -(2**31) <= value < 2**31:
            raise OverflowError(f"integer constant {value} does not fit in int32; use "
                                "types.Constant(value, dtype=types.INT64)")
        return np.dtype(np.int32)
    return np.dtype(np.float32)


_BOOL_ARITH = ("add", "sub", "fdiv", "div", "mod", "pow", "fpow", "atan2", "min", "max")


def with_scalar_types(tensor_dtypes: list[np.dtype], scalars: Any) -> list[np.dtype]:
    """Every operand's type, in order: the tensors', with each scalar operand's
    (``scalar_type``) inserted at its position. ``scalars``: (position, value, declared)."""
    dts = list(tensor_dtypes)
    for pos, value, declared in scalars:
        dts.insert(pos, scalar_type(dts[0] if dts else np.float32, value, declared))
    return dts


def result_type(op: str, dtypes: list[np.dtype]) -> np.dtype:
    t = dtypes[0]
    for d in dtypes[1:]:
        t = promote(t, d)
    if t.kind == "b" and (op in _BOOL_ARITH or op in FLOAT_UNARY or op in ("minus", "abs")):
        raise TypeError(f"arithmetic '{op}' is not defined for boolean operands")
    if op in COMPARISON:
        return np.dtype(np.bool_)
    if op in ("fdiv", "atan2", "fpow") or op in FLOAT_UNARY:
        return t if t.kind == "f" else np.dtype(np.float32)
    if op in BITWISE + ("bitnot",) and t.kind == "f":
        raise TypeError(f"bitwise operation '{op}' needs integer or boolean operands, got {t}")
    return t


def _align(x: np.ndarray, ndim: int, sample_axis: bool) -> np.ndarray:
    """Pads a sample's shape with leading 1s so samples broadcast against each other."""
    if x.ndim >= ndim:
        return x
    if sample_axis:
        return x.reshape((x.shape[0],) + (1,) * (ndim - x.ndim) + x.shape[1:])
    return x


def _check_divisor(b: np.ndarray, op: str) -> None:
    if (b == 0).any():
        raise ZeroDivisionError(f"integer '{op}' by zero")


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (C++), as DALI does."""
    _check_divisor(b, "//")
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    return q.astype(a.dtype, copy=False)


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer power; a negative exponent gives 0 (DALI: even 1 ** -1 is 0)."""
    neg = b < 0 if b.dtype.kind == "i" else np.zeros(b.shape, bool)
    out = np.power(a, np.where(neg, 0, b))
    return np.where(neg, 0, out).astype(a.dtype, copy=False)


_NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "fdiv": np.true_divide,
              "min": np.minimum, "max": np.maximum, "atan2": np.arctan2,
              "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor,
              "eq": np.equal, "neq": np.not_equal, "lt": np.less, "leq": np.less_equal,
              "gt": np.greater, "geq": np.greater_equal}
_NP_UNARY = {"sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "log": np.log, "log2": np.log2,
             "log10": np.log10, "floor": np.floor, "ceil": np.ceil, "sin": np.sin,
             "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "asin": np.arcsin,
             "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
             "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
             "abs": np.abs, "fabs": np.abs, "minus": np.negative, "bitnot": np.invert}


def work_type(op: str, dtypes: list[np.dtype], out_type: np.dtype) -> np.dtype:
    """The type ``op`` computes in: its result type, but for comparisons the operands'
    common type (their result is bool)."""
    if op not in COMPARISON:
        return out_type
    t = dtypes[0]
    for d in dtypes[1:]:
        t = promote(t, d)
    return t


def apply(op: str, operands: list[Any], out_type: np.dtype, sample_axis: bool) -> np.ndarray:
    """Computes ``op`` on arrays/scalars; operands are first converted to the common type."""
    arrays = [np.asarray(x) for x in operands]
    work = work_type(op, [x.dtype for x in arrays], out_type)
    ndim = max(x.ndim for x in arrays)
    arrays = [_align(x.astype(work, copy=False), ndim, sample_axis and x.ndim > 0)
              for x in arrays]
    with np.errstate(all="ignore"):
        if len(arrays) == 1:
            x = arrays[0]
            if op == "rsqrt":
                return (1.0 / np.sqrt(x)).astype(out_type, copy=False)
            return _NP_UNARY[op](x).astype(out_type, copy=False)
        if op == "clamp":
            x, lo, hi = arrays
            return np.minimum(np.maximum(x, lo), hi).astype(out_type, copy=False)
        a, b = arrays
        if op == "div":
            if work.kind in "iu":
                return _int_div(a, b)
            return np.true_divide(a, b).astype(out_type, copy=False)  # DALI: no floor
        if op == "mod":
            if work.kind in "iu":
                _check_divisor(b, "%")
            return np.fmod(a, b).astype(out_type, copy=False)
        if op == "pow":
            if work.kind in "iu":
                return _int_pow(a, b)
            return np.power(a, b).astype(out_type, copy=False)
        if op == "fpow":
            return np.power(a, b).astype(out_type, copy=False)
        if work.kind == "b" and op in ("add", "sub", "mul"):
            ufunc = {"add": np.logical_or, "sub": np.logical_xor, "mul": np.logical_and}[op]
            return ufunc(a, b)
        return _NP_BINARY[op](a, b).astype(out_type, copy=False)
