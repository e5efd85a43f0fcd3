"""Float results to an output type the way DALI's CPU operators convert them.

DALI rounds to the nearest integer with halves away from zero (``std::round``), then clamps
to the type's range. numpy's ``rint`` rounds halves to even, so 2.5 would become 2 instead
of DALI's 3: these helpers exist so every operator of the family rounds alike.
"""

from __future__ import annotations

import numpy as np


def round_half_away(values: np.ndarray) -> np.ndarray:
    """Nearest integer, halves away from zero, as float64 (exact for float32 input)."""
    v = np.asarray(values, np.float64)
    return np.trunc(v + np.copysign(0.5, v))


def round_sat(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` as ``dtype``: integers rounded half away from zero and saturated."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.asarray(values).astype(dtype, copy=False)
    if dtype.kind == "b":
        return np.asarray(values) != 0
    info = np.iinfo(dtype)
    r = np.asarray(round_half_away(values))
    np.clip(r, info.min, info.max, out=r)
    return r.astype(dtype)


def type_range(dtype: np.dtype) -> tuple[float, float]:
    """(lowest, highest) value of an integer type; (-inf, inf) for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.min), float(info.max)
    return -np.inf, np.inf


def cast_like_c(values: np.ndarray | float, dtype: np.dtype) -> np.ndarray:
    """A C ``static_cast`` from float: truncates toward zero and wraps integers.

    DALI converts some constants (erase's fill value, salt and pepper values) this way
    rather than with rounding and saturation; 300.0 as uint8 is 44 there, and so here.
    """
    dtype = np.dtype(dtype)
    v = np.asarray(values, np.float64)
    if dtype.kind == "f":
        return v.astype(dtype)
    return np.trunc(v).astype(np.int64).astype(dtype)
