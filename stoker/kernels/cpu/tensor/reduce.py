"""Reductions along axes: sum, min, max, mean, mean_square, rms, variance, std_dev.

On one sample or a dense batch (the batch axis is then never reduced). Sums run in
float64 through the normalize kernels' loop (``stats._sums``: a 4-D view of kept and
reduced axes, one pass in memory order) and are rounded once to the output type, so they
do not drift with the sample's size; min and max have a loop of their own
(``reduce_loops``). An integer output type is also the accumulator, as in DALI 2.4: a sum
wraps around, a mean or rms is the wrapped sum divided and truncated (the float64 sum is
exact for 8- to 32-bit inputs, and wrapping once at the end equals wrapping each step);
64-bit integer inputs sum in numpy's integers. Empty reductions give DALI's answers: 0
for a sum, NaN for a mean, the type's extreme for min (its largest value) and max (its
lowest).
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.tensor.stats import _sums, _widen, four_axes, reduced_shape

F64 = np.float64


def _extremes(dtype: np.dtype) -> tuple:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.max, info.min


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _extreme(x: np.ndarray, axes: tuple[int, ...], largest: bool) -> np.ndarray:
    """min or max over ``axes`` in the keepdims shape."""
    top, bottom = _extremes(x.dtype)
    initial = bottom if largest else top
    view = four_axes(x.shape, axes) if x.size else None
    if view is None:
        ufunc = np.maximum if largest else np.minimum
        return ufunc.reduce(x, axis=axes, keepdims=True, initial=initial)
    shape4, inner_kept = view
    kept = (shape4[1], shape4[3]) if inner_kept else (shape4[0], shape4[2])
    wide, r = _widen(shape4, inner_kept)
    acc = np.full((kept[0], kept[1] * r) if inner_kept else kept, initial, x.dtype)
    loops("tensor.reduce_loops").group_extreme(np.ascontiguousarray(x).reshape(wide), largest,
                                                inner_kept, acc)
    if r > 1:
        fold = np.maximum if largest else np.minimum
        acc = fold.reduce(acc.reshape(kept[0], r, kept[1]), axis=1)
    return acc.reshape(reduced_shape(x.shape, axes))


def _total(x: np.ndarray, axes: tuple[int, ...], squares: bool) -> np.ndarray:
    """Sum of x (or x^2) over ``axes`` in the keepdims shape: float64, or the exact integer
    for 64-bit integer inputs."""
    if x.dtype.kind in "iu" and x.dtype.itemsize == 8:
        v = x * x if squares else x
        return np.add.reduce(v, axis=axes, keepdims=True)
    if x.size == 0:
        return np.zeros(reduced_shape(x.shape, axes), F64)
    center = np.zeros(reduced_shape(x.shape, axes), F64) if squares else None
    return _sums(x, axes, center)


def _wrap(total: np.ndarray, out_type: np.dtype) -> np.ndarray:
    """An exact integer total wrapped into ``out_type`` (modulo 2^bits)."""
    wide = np.int64 if out_type.kind == "i" or total.dtype.kind == "i" else np.uint64
    return np.asarray(total).astype(wide).astype(out_type)


def reduce_cpu(x: np.ndarray, kind: str, axes: tuple[int, ...], keep_dims: bool,
               out_type: np.dtype) -> np.ndarray:
    """``kind`` ("sum", "min", "max", "mean", "mean_square", "rms") of ``x`` over ``axes``
    (non-negative, distinct) as ``out_type``."""
    if not axes:  # nothing reduced: each element is its own sum, mean, ...
        axes_shape = x.shape
    else:
        axes_shape = tuple(s for a, s in enumerate(x.shape) if a not in axes)
    if kind in ("min", "max"):
        out = _extreme(x, axes, kind == "max") if axes else x.copy()
    else:
        squares = kind in ("mean_square", "rms")
        total = _total(x, axes, squares) if axes else \
            (x.astype(F64) * x if squares else x.astype(F64))
        integer_out = out_type.kind in "iu"
        if kind == "sum":
            out = _wrap(total, out_type) if integer_out else total.astype(out_type)
        else:
            count = _count(x.shape, axes)
            if integer_out:
                total = _wrap(total, out_type).astype(F64)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = total / count if count else np.full(total.shape, np.nan)
                value = np.sqrt(mean) if kind == "rms" else mean
            out = (np.trunc(np.nan_to_num(value)).astype(out_type) if integer_out
                   else value.astype(out_type))
    return out if keep_dims else out.reshape(axes_shape)


def variance_cpu(x: np.ndarray, mean: np.ndarray, axes: tuple[int, ...], keep_dims: bool,
                 ddof: int, root: bool) -> np.ndarray:
    """Variance (``root``: standard deviation) of ``x`` over ``axes`` around ``mean`` (shaped
    as the reduction with kept dimensions), dividing by count - ddof, as float32."""
    if x.size and axes:
        sq = _sums(x, axes, np.broadcast_to(mean, reduced_shape(x.shape, axes)))
    else:
        diff = x.astype(F64) - mean.astype(F64)
        sq = np.add.reduce(diff * diff, axis=axes, keepdims=True)
    if not keep_dims:
        sq = sq.reshape(tuple(s for a, s in enumerate(x.shape) if a not in axes))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = sq / np.float64(_count(x.shape, axes) - ddof)
        return (np.sqrt(var) if root else var).astype(np.float32)
