"""Reductions along axes: sum, min, max, mean, mean_square, rms, variance, std_dev.

Plain numpy over a tuple of axes, on one sample or on a dense batch (the batch axis is
then never reduced). Float results are summed in float64 and rounded once to float32, so
they do not drift with the sample's size. An integer output type is also the accumulator,
as in DALI 2.4: a sum wraps around, a mean or rms is the wrapped sum divided and truncated.
Empty reductions give DALI's answers: 0 for a sum, NaN for a mean, the type's extreme for
min (its largest value) and max (its lowest).
"""

from __future__ import annotations

import numpy as np

F64 = np.float64


def _extremes(dtype: np.dtype) -> tuple:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.max, info.min


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def reduce_cpu(x: np.ndarray, kind: str, axes: tuple[int, ...], keep_dims: bool,
               out_type: np.dtype) -> np.ndarray:
    """``kind`` ("sum", "min", "max", "mean", "mean_square", "rms") of ``x`` over ``axes``
    (non-negative, distinct) as ``out_type``."""
    if kind in ("min", "max"):
        largest, lowest = _extremes(x.dtype)
        ufunc = np.minimum if kind == "min" else np.maximum
        initial = largest if kind == "min" else lowest
        return ufunc.reduce(x, axis=axes, keepdims=keep_dims, initial=initial)
    integer_out = out_type.kind in "iu"
    if kind == "sum":
        acc = out_type if integer_out else F64
        return np.add.reduce(x, axis=axes, dtype=acc, keepdims=keep_dims).astype(out_type)
    src = x
    if kind in ("mean_square", "rms"):
        # Squares in the accumulator's type: a wide int (mean_square's outputs), the
        # output int (rms, wrapping as DALI's does) or float64.
        src = x.astype(out_type if integer_out else F64)
        src = src * src
    total = np.add.reduce(src, axis=axes, dtype=out_type if integer_out else F64,
                          keepdims=keep_dims)
    count = _count(x.shape, axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total.astype(F64) / count if count else np.full(total.shape, np.nan)
        value = np.sqrt(mean) if kind == "rms" else mean
    if integer_out:
        return np.trunc(np.nan_to_num(value)).astype(out_type)
    return value.astype(out_type)


def variance_cpu(x: np.ndarray, mean: np.ndarray, axes: tuple[int, ...], keep_dims: bool,
                 ddof: int, root: bool) -> np.ndarray:
    """Variance (``root``: standard deviation) of ``x`` over ``axes`` around ``mean`` (shaped
    as the reduction with kept dimensions), dividing by count - ddof, as float32."""
    diff = x.astype(F64) - mean.astype(F64)
    sq = np.add.reduce(diff * diff, axis=axes, keepdims=keep_dims)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = sq / np.float64(_count(x.shape, axes) - ddof)
        return (np.sqrt(var) if root else var).astype(np.float32)
