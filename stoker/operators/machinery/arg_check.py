"""Constant argument values: the forms DALI accepts, turned into one canonical form.

DALI converts an argument value with the Python builtin of its type (``int(v)``,
``float(v)``, a list of them for vectors) after unwrapping ``types.Constant`` and reading
numpy scalars, 0-d arrays and one-element arrays through ``.item()``. So bools serve as
integers, integers as floats, numpy scalars and arrays anywhere a number goes, and tuples
or arrays wherever a list goes. The checker here accepts the same forms (the acceptance
table recorded from DALI, tests/data/dali_arg_forms.json, is replayed against it) but
refuses what DALI would silently mangle: a fractional float for an integer (DALI
truncates), a list for a boolean (DALI reads any non-empty list as True), a number for a
string (DALI takes ``str(4)``), a bool for an enum (DALI takes ``True`` as type 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError, ArgumentTypeError

if TYPE_CHECKING:
    from stoker.operators.machinery.schema import Arg, OpSchema

# What each argument type accepts; check_arg turns a user's value into this form.
ARG_TYPES = {
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "str": "a string",
    "dtype": "a data type (types.FLOAT, types.UINT8, ...)",
    "dtypes": "a data type or a list of data types",
    "layout": "a layout string such as 'HWC'",
    "ints": "an integer or a list of integers",
    "floats": "a number or a list of numbers",
    "strs": "a string or a list of strings",
    "image_type": "an image type (types.RGB, types.BGR, ...)",
    "interp_type": "an interpolation type (types.INTERP_LINEAR, ...)",
    "array": "a number or an array of numbers",
    "any": "any value",
}

_ENUMS = {"image_type": types.DALIImageType, "interp_type": types.DALIInterpType}


def _fail(schema: OpSchema, arg: Arg, value: Any, rule: str) -> ArgumentError:
    return ArgumentError(f"{schema.fn_name}: argument '{arg.name}' {rule}, got {value!r}")


def _type_fail(schema: OpSchema, arg: Arg, value: Any) -> ArgumentTypeError:
    return ArgumentTypeError(
        f"{schema.fn_name}: argument '{arg.name}' must be {ARG_TYPES[arg.type]}, "
        f"got {value!r} of type {type(value).__name__}"
    )


def plain(value: Any) -> Any:
    """The Python value DALI reads: a ScalarConstant's value; a numpy scalar, 0-d array or
    one-element 1-d array through ``.item()``; anything else unchanged."""
    if isinstance(value, types.ScalarConstant):
        value = value.value
    if isinstance(value, np.generic) or (
            isinstance(value, np.ndarray) and value.ndim <= 1 and value.size == 1):
        return value.item()
    return value


def _int(v: Any) -> int | None:
    """An integer value, or None: bools count (as in DALI), fractional floats do not."""
    v = plain(v)
    if isinstance(v, bool | int):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _float(v: Any) -> float | None:
    v = plain(v)
    return float(v) if isinstance(v, bool | int | float) else None


def _bool(v: Any) -> bool | None:
    v = plain(v)
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float) and v in (0, 1):
        return bool(v)
    return None


def _str(v: Any) -> str | None:
    v = plain(v)
    if isinstance(v, types.TensorLayout):
        return v.value
    return v if isinstance(v, str) else None


def _items(value: Any) -> list | None:
    """The elements of a vector value: a scalar is a list of one, as in DALI."""
    if isinstance(value, np.ndarray):
        return None if value.ndim > 1 else list(value.reshape(-1))
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def _check_range(schema: OpSchema, arg: Arg, values: Sequence[Any], shown: Any) -> None:
    if arg.range is None:
        return
    lo, hi = arg.range
    for v in values:
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            lo_s = "-inf" if lo is None else repr(lo)
            hi_s = "inf" if hi is None else repr(hi)
            raise _fail(schema, arg, shown, f"must be in [{lo_s}, {hi_s}]")


def _enum(schema: OpSchema, arg: Arg, value: Any) -> Any:
    v = plain(value)
    if isinstance(v, bool):  # DALI would take True as the enum member 1
        raise _type_fail(schema, arg, value)
    if arg.type == "dtype":
        # As in DALI, a name is refused: "float" is float64 to numpy but FLOAT32 to DALI.
        # numpy dtypes and scalar types (np.float32) are stoker's convenience.
        if isinstance(v, str):
            raise _type_fail(schema, arg, value)
        number = _int(v)
        try:
            return types.DALIDataType(number) if number is not None else types.to_dali(v)
        except (TypeError, ValueError):
            raise _type_fail(schema, arg, value) from None
    number = _int(v)
    try:
        return _ENUMS[arg.type](number)
    except (TypeError, ValueError):
        raise _type_fail(schema, arg, value) from None


def check_arg(schema: OpSchema, arg: Arg, value: Any) -> Any:
    """Checks one constant argument value; returns it in canonical form."""
    t = arg.type
    if t in ("int", "float", "bool"):
        got = {"int": _int, "float": _float, "bool": _bool}[t](value)
        if got is None:
            raise _type_fail(schema, arg, value)
        if t != "bool":
            _check_range(schema, arg, [got], got)
        value = got
    elif t in ("str", "layout"):
        got = _str(value)
        if got is None:
            raise _type_fail(schema, arg, value)
        value = got
    elif t == "strs":
        seq = _items(value)
        got = None if seq is None else [_str(v) for v in seq]
        if got is None or any(v is None for v in got):
            raise _type_fail(schema, arg, value)
        value = got
    elif t in ("ints", "floats"):
        seq = _items(value)
        convert = _int if t == "ints" else _float
        got = None if seq is None else [convert(v) for v in seq]
        if got is None or any(v is None for v in got):
            raise _type_fail(schema, arg, value)
        if arg.broadcast and arg.length is not None and len(got) == 1:
            got = got * arg.length
        if arg.length is not None and len(got) != arg.length:
            raise _fail(schema, arg, value, f"must have {arg.length} elements")
        _check_range(schema, arg, got, value)
        value = got
    elif t in ("dtype", "image_type", "interp_type"):
        value = _enum(schema, arg, value)
    elif t == "dtypes":
        seq = _items(value)
        if seq is None:
            raise _type_fail(schema, arg, value)
        one = replace(arg, type="dtype")
        value = [_enum(schema, one, v) for v in seq]
    elif t == "array":
        if isinstance(value, types.ScalarConstant):
            value = value.value
        try:
            arr = np.asarray(value)
        except Exception:
            raise _type_fail(schema, arg, value) from None
        if arr.dtype.kind not in "biuf":
            raise _type_fail(schema, arg, value)
        value = arr
    if arg.choices is not None and value not in arg.choices:
        allowed = ", ".join(repr(c) for c in arg.choices)
        raise _fail(schema, arg, value, f"must be one of {allowed}")
    return value
