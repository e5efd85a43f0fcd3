"""Tensor kernels: conversions, reshaping, transposing, joining, one-hot, indexing.

Plain numpy on one sample or, where a function takes ``lead=1``, on a dense batch whose
axis 0 is the sample. Errors are ``ValueError``s that state the rule and the values; the
operator glue adds the operator's name, the user's line and the sample. Padding and
slicing windows are in ``window.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from stoker.kernels.cpu import saturate


def rows_contiguous(image: np.ndarray) -> bool:
    """Each row of an (H, W, C) image one block of memory (rows may lie apart): a view of
    whole pixels."""
    return image.strides[1:] == (image.shape[2] * image.itemsize, image.itemsize)

# -- conversions --------------------------------------------------------------------------------

def c_cast(value: object, dtype: np.dtype) -> np.ndarray:
    """A fill value converted as C++'s static_cast does: toward zero, then wrapped.

    DALI 2.4 converts fill/on/off values this way (measured: -1.0 -> 255 and 300.6 -> 44
    for uint8), unlike the saturating conversion it uses for data.
    """
    dtype = np.dtype(dtype)
    v = np.asarray(value, dtype=np.float64)
    if dtype.kind == "b":
        return v != 0
    if dtype.kind in "iu":
        return np.trunc(v).astype(np.int64).astype(dtype)
    return v.astype(dtype)


def convert_saturate(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Data converted to ``dtype``: clamped to its range; floats to integers truncate."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    if dtype.kind in "iu" and x.dtype.kind in "iuf":
        info = np.iinfo(dtype)
        x = np.clip(x, info.min, info.max)
    return x.astype(dtype)


def round_half_away(v: np.ndarray | float) -> np.ndarray:
    return np.copysign(np.floor(np.abs(v) + 0.5), v)


def cast_cpu(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """fn.cast as DALI 2.4 converts (measured): floats to integers round half away from
    zero and saturate (NaN becomes 0; DALI gives the type's minimum for 32/64-bit types),
    integers saturate, and bool is "not zero" after that rounding (0.3 -> False)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iub" or x.dtype == dtype:
        with np.errstate(over="ignore"):  # beyond float16's range is inf, as in DALI
            return x.astype(dtype)
    if x.ndim == 0:  # numpy's ufuncs give scalars for 0-d arrays, and copyto needs an array
        return cast_cpu(x.reshape(1), dtype).reshape(())
    if x.dtype.kind == "f":
        v = saturate.round_half_away(x)
        if dtype.kind == "b":
            return v != 0
        info = np.iinfo(dtype)
        out = np.clip(v, float(info.min), float(info.max))
        np.copyto(out, 0.0, where=np.isnan(out))  # (nan_to_num: 4x the time on a batch)
        if info.max < 2**53:
            return out.astype(dtype)
        top = out >= float(info.max)  # 2**63 (or 2**64) itself does not convert
        res = np.where(top, 0, out).astype(dtype)
        res[top] = info.max
        return res
    if dtype.kind == "b" or x.dtype.kind == "b":
        return x.astype(dtype)
    src, info = np.iinfo(x.dtype), np.iinfo(dtype)
    lo, hi = max(src.min, info.min), min(src.max, info.max)
    return np.clip(x, np.array(lo, x.dtype), np.array(hi, x.dtype)).astype(dtype)


def scaled_extent(rel: float, extent: int) -> float:
    # float32 products, as DALI computes them: 0.35 * 10 rounds to 4, not 3.
    return float(np.float32(rel) * np.float32(extent))


def shape_str(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(int(e)) for e in shape) + ")"


def check_axes(axes: Sequence[int], ndim: int) -> list[int]:
    """``axes`` (each in [-ndim, ndim), none twice) as non-negative indices; the errors
    are worded as DALI's (pad, slice), since code written for DALI may look for them."""
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"'axes' {list(axes)}: Axis {a} out of range. Expected range is "
                             f"[{-ndim}, {ndim - 1}] for a {ndim}D input")
        a = a + ndim if a < 0 else a
        if a in out:
            raise ValueError(f"'axes' {list(axes)}: Axis index {a} occurs more than once "
                             "(negative indices count from the back)")
        out.append(a)
    return out


def normalize_axis(axis: int, ndim: int, name: str, allow_end: bool = False) -> int:
    """``axis`` in [-ndim, ndim) (or [-ndim, ndim] with ``allow_end``) as a non-negative index."""
    hi = ndim if allow_end else ndim - 1
    if not -ndim <= axis <= hi:
        raise ValueError(f"'{name}' {axis} is out of range for {ndim}-D samples "
                         f"(valid: {-ndim}..{hi})")
    return axis + ndim if axis < 0 else axis


# -- reshape, reinterpret -----------------------------------------------------------------------

def _src_extent(in_shape: Sequence[int], d: int) -> int:
    if not -1 <= d < len(in_shape):
        raise ValueError(f"'src_dims' entry {d} is out of range for a {len(in_shape)}-D sample "
                         f"of shape {shape_str(in_shape)} (valid: 0..{len(in_shape) - 1}, "
                         "or -1 for a new axis)")
    return 1 if d < 0 else int(in_shape[d])


def reshape_target(in_shape: Sequence[int], shape: Sequence[int] | None = None,
                   rel_shape: Sequence[float] | None = None,
                   src_dims: Sequence[int] | None = None, in_itemsize: int = 1,
                   out_itemsize: int = 1) -> tuple[int, ...]:
    """The output shape of reshape / reinterpret; one negative extent is inferred."""
    ndim = len(in_shape)
    if shape is not None:
        want = [int(v) for v in shape]
        if 0 in want:
            raise ValueError(f"'shape' {want} has an extent of 0, which is not allowed")
    elif rel_shape is not None:
        rel = [float(r) for r in rel_shape]
        if src_dims is not None:
            if len(src_dims) != len(rel):
                raise ValueError(f"'src_dims' has {len(src_dims)} entries but 'rel_shape' has "
                                 f"{len(rel)}; they must match")
            base = [_src_extent(in_shape, int(d)) for d in src_dims]
        else:
            if len(rel) > ndim and not (len(rel) == ndim + 1 and rel[-1] < 0):
                raise ValueError(f"'rel_shape' has {len(rel)} entries, more than the "
                                 f"{ndim} dimensions of the sample {shape_str(in_shape)}; "
                                 "use 'src_dims' to add dimensions")
            base = [int(e) for e in in_shape[:len(rel)]] + [1] * (len(rel) - ndim)
        want = [-1 if r < 0 else int(round_half_away(scaled_extent(r, b)))
                for r, b in zip(rel, base, strict=True)]
    elif src_dims is not None:
        want = [_src_extent(in_shape, int(d)) for d in src_dims]
    elif in_itemsize != out_itemsize:
        if ndim == 0:
            raise ValueError(f"a scalar of {in_itemsize} bytes cannot be reinterpreted as "
                             f"{out_itemsize}-byte elements without a 'shape'")
        inner = int(in_shape[-1]) * in_itemsize
        if inner % out_itemsize:
            raise ValueError(f"the innermost dimension ({in_shape[-1]} x {in_itemsize} bytes) "
                             f"is not a multiple of the {out_itemsize}-byte output type")
        want = [int(e) for e in in_shape[:-1]] + [inner // out_itemsize]
    else:
        want = [int(e) for e in in_shape]

    in_bytes = math.prod(in_shape) * in_itemsize
    negative = [i for i, v in enumerate(want) if v < 0]
    if len(negative) > 1:
        raise ValueError(f"at most one extent may be negative (inferred), got {want}")
    if negative:
        rest = math.prod(v for v in want if v >= 0) * out_itemsize
        if rest == 0 or in_bytes % rest:
            raise ValueError(f"cannot infer the negative extent of {want} for a sample of "
                             f"shape {shape_str(in_shape)}: its size does not divide")
        want[negative[0]] = in_bytes // rest
    if math.prod(want) * out_itemsize != in_bytes:
        raise ValueError(f"cannot reshape a sample of shape {shape_str(in_shape)} "
                         f"({math.prod(in_shape)} elements) to {shape_str(want)} "
                         f"({math.prod(want)} elements)" if in_itemsize == out_itemsize else
                         f"a sample of {in_bytes} bytes cannot be viewed as shape "
                         f"{shape_str(want)} of {out_itemsize}-byte elements")
    return tuple(want)


# -- transpose, expand_dims, squeeze ------------------------------------------------------------

def transpose_axes(shape: Sequence[int], perm: Sequence[int] | None, lead: int = 0) -> list[int]:
    """The axis order transposing an array of ``shape`` whose first ``lead`` axes are kept
    (the sample axis of a batch): ``perm`` (default: reversed) over the sample's axes."""
    ndim = len(shape) - lead
    perm = list(range(ndim))[::-1] if perm is None else list(perm)
    if len(perm) != ndim:
        raise ValueError(f"'perm' {perm} has {len(perm)} entries, but the sample "
                         f"{shape_str(shape[lead:])} has {ndim} dimensions")
    return list(range(lead)) + [p + lead for p in perm]


def transpose_cpu(x: np.ndarray, perm: Sequence[int] | None, lead: int = 0) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, transpose_axes(x.shape, perm, lead)))


def expand_dims_cpu(x: np.ndarray, axes: Sequence[int], lead: int = 0) -> np.ndarray:
    out_ndim = x.ndim - lead + len(axes)
    for a in axes:
        if a >= out_ndim:
            raise ValueError(f"'axes' entry {a} is out of range: a {x.ndim - lead}-D sample "
                             f"with {len(axes)} new axes has {out_ndim} dimensions")
    return np.expand_dims(x, tuple(a + lead for a in axes))


def squeeze_axes(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    """``axes`` normalized and checked: in range, distinct, of extent 1 (or empty data)."""
    ndim = len(shape)
    out = [normalize_axis(int(a), ndim, "axes") for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"'axes' {list(axes)} names an axis more than once")
    kept = [e for i, e in enumerate(shape) if i not in out]
    empty = math.prod(shape) == 0 and math.prod(kept) == 0
    for a in out:
        if shape[a] != 1 and not empty:
            raise ValueError(f"cannot squeeze axis {a} of extent {shape[a]} (sample shape "
                             f"{shape_str(shape)}); only axes of extent 1 can be removed")
    return out


def squeeze_cpu(x: np.ndarray, axes: Sequence[int], lead: int = 0) -> np.ndarray:
    shape = x.shape[lead:]
    drop = squeeze_axes(shape, axes)
    kept = tuple(e for i, e in enumerate(shape) if i not in drop)
    return x.reshape(x.shape[:lead] + kept)


# -- cat, stack ---------------------------------------------------------------------------------

def _check_alike(ins: Sequence[np.ndarray], lead: int) -> int:
    first = ins[0]
    for k, x in enumerate(ins[1:], start=1):
        if x.dtype != first.dtype or x.ndim != first.ndim:
            raise ValueError(f"all inputs must have the same type and number of dimensions; "
                             f"input 0 is {first.dtype} {first.ndim - lead}-D, input {k} is "
                             f"{x.dtype} {x.ndim - lead}-D")
    return first.ndim - lead


def cat_cpu(ins: Sequence[np.ndarray], axis: int, lead: int = 0) -> np.ndarray:
    ndim = _check_alike(ins, lead)
    if ndim == 0:
        raise ValueError("cannot concatenate scalars (0-D samples); use fn.stack")
    a = normalize_axis(axis, ndim, "axis")
    ref = ins[0].shape[lead:]
    for k, x in enumerate(ins[1:], start=1):
        shape = x.shape[lead:]
        if any(e != r for i, (e, r) in enumerate(zip(shape, ref, strict=True)) if i != a):
            raise ValueError(f"input {k} has shape {shape_str(shape)} and input 0 has "
                             f"{shape_str(ref)}; they may differ only in axis {a}")
    return np.concatenate(ins, axis=a + lead)


def stack_cpu(ins: Sequence[np.ndarray], axis: int, lead: int = 0) -> np.ndarray:
    ndim = _check_alike(ins, lead)
    a = normalize_axis(axis, ndim + 1, "axis") if axis < 0 else axis
    if a > ndim:
        raise ValueError(f"'axis' {axis} is out of range for {ndim}-D samples "
                         f"(valid: {-ndim}..{ndim})")
    ref = ins[0].shape[lead:]
    for k, x in enumerate(ins[1:], start=1):
        if x.shape[lead:] != ref:
            raise ValueError(f"input {k} has shape {shape_str(x.shape[lead:])} and input 0 "
                             f"has {shape_str(ref)}; stacked tensors must have equal shapes")
    return np.stack(ins, axis=a + lead)


# -- one_hot ------------------------------------------------------------------------------------

def one_hot_cpu(x: np.ndarray, num_classes: int, axis: int, on_value: float, off_value: float,
                dtype: np.dtype, lead: int = 0) -> np.ndarray:
    """``on_value`` where the class index (truncated toward zero) equals the position along
    a new axis of ``num_classes``, else ``off_value``; out-of-range classes give all-off."""
    ndim = x.ndim - lead
    if not -1 <= axis <= ndim:
        raise ValueError(f"'axis' {axis} is out of range for {ndim}-D samples "
                         f"(valid: -1..{ndim})")
    cls = (np.trunc(x) if x.dtype.kind == "f" else x).astype(np.int64)
    hot = cls[..., None] == np.arange(num_classes)
    out = np.where(hot, c_cast(on_value, dtype), c_cast(off_value, dtype))
    at = ndim if axis < 0 else axis
    return np.ascontiguousarray(np.moveaxis(out, -1, at + lead))


# -- indexing (``node[...]``) ---------------------------------------------------------------------

def subscript_cpu(x: np.ndarray, items: Sequence[tuple], lead: int = 0) -> np.ndarray:
    """Indexes each sample with ``items``: ("at", i), ("slice", lo, hi, step), ("new", name)
    or ("...",); integers drop their axis, out-of-range integers raise."""
    shape = x.shape[lead:]
    consumed = sum(1 for it in items if it[0] in ("at", "slice"))
    if not shape and consumed:
        raise ValueError("cannot index a scalar (0-D) sample")
    if consumed > len(shape):
        raise ValueError(f"too many indices ({consumed}) for a {len(shape)}-D sample of shape "
                         f"{shape_str(shape)}")
    index: list = [slice(None)] * lead
    axis = 0
    for it in items:
        if it[0] == "...":
            skip = len(shape) - consumed
            index += [slice(None)] * skip
            axis += skip
        elif it[0] == "new":
            index.append(None)
        elif it[0] == "at":
            i, ext = int(it[1]), shape[axis]
            if not -ext <= i < ext:
                raise ValueError(f"index {i} is out of range for axis {axis} with extent "
                                 f"{ext} (sample shape {shape_str(shape)})")
            index.append(i)
            axis += 1
        else:
            lo, hi, step = it[1:]
            if step == 0:
                raise ValueError(f"slice step on axis {axis} is 0")
            index.append(slice(lo, hi, step))
            axis += 1
    # Not np.ascontiguousarray: it turns the 0-d result of indexing a 1-d sample (x[0],
    # a conditional's condition) into shape (1,).
    out = np.asarray(x[tuple(index)])
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)
