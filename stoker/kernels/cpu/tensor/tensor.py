"""Tensor kernels: reshaping, transposing, joining, padding, slicing, one-hot, indexing.

Plain numpy on one sample or, where a function takes ``lead=1``, on a dense batch whose
axis 0 is the sample. Errors are ``ValueError``s that state the rule and the values; the
operator glue adds the operator's name, the user's line and the sample.
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

# out_of_bounds_policy -> how indices outside the input map back into it (None: they don't).
POLICY_MODES = {"error": None, "trim_to_shape": None, "pad": "constant", "constant": "constant",
                "edge": "edge", "clamp": "edge", "reflect": "symmetric",
                "reflect_1001": "symmetric", "reflect_101": "reflect", "wrap": "wrap"}


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


def _scaled(rel: float, extent: int) -> float:
    # float32 products, as DALI computes them: 0.35 * 10 rounds to 4, not 3.
    return float(np.float32(rel) * np.float32(extent))


def _shape_str(shape: Sequence[int]) -> str:
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
                         f"of shape {_shape_str(in_shape)} (valid: 0..{len(in_shape) - 1}, "
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
                                 f"{ndim} dimensions of the sample {_shape_str(in_shape)}; "
                                 "use 'src_dims' to add dimensions")
            base = [int(e) for e in in_shape[:len(rel)]] + [1] * (len(rel) - ndim)
        want = [-1 if r < 0 else int(round_half_away(_scaled(r, b)))
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
                             f"shape {_shape_str(in_shape)}: its size does not divide")
        want[negative[0]] = in_bytes // rest
    if math.prod(want) * out_itemsize != in_bytes:
        raise ValueError(f"cannot reshape a sample of shape {_shape_str(in_shape)} "
                         f"({math.prod(in_shape)} elements) to {_shape_str(want)} "
                         f"({math.prod(want)} elements)" if in_itemsize == out_itemsize else
                         f"a sample of {in_bytes} bytes cannot be viewed as shape "
                         f"{_shape_str(want)} of {out_itemsize}-byte elements")
    return tuple(want)


# -- transpose, expand_dims, squeeze ------------------------------------------------------------

def transpose_axes(shape: Sequence[int], perm: Sequence[int] | None, lead: int = 0) -> list[int]:
    """The axis order transposing an array of ``shape`` whose first ``lead`` axes are kept
    (the sample axis of a batch): ``perm`` (default: reversed) over the sample's axes."""
    ndim = len(shape) - lead
    perm = list(range(ndim))[::-1] if perm is None else list(perm)
    if len(perm) != ndim:
        raise ValueError(f"'perm' {perm} has {len(perm)} entries, but the sample "
                         f"{_shape_str(shape[lead:])} has {ndim} dimensions")
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
                             f"{_shape_str(shape)}); only axes of extent 1 can be removed")
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
            raise ValueError(f"input {k} has shape {_shape_str(shape)} and input 0 has "
                             f"{_shape_str(ref)}; they may differ only in axis {a}")
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
            raise ValueError(f"input {k} has shape {_shape_str(x.shape[lead:])} and input 0 "
                             f"has {_shape_str(ref)}; stacked tensors must have equal shapes")
    return np.stack(ins, axis=a + lead)


# -- pad ----------------------------------------------------------------------------------------

def pad_targets(shapes: Sequence[Sequence[int]], axes: Sequence[Sequence[int]],
                min_shape: Sequence[Sequence[int]] | None,
                align: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """Each sample's padded shape. Sample j pads its own ``axes[j]``: the i-th of them
    to the batch's largest extent of that axis (over every sample, as DALI does), or to
    the sample's own extent raised to a positive ``min_shape[j][i]``, then up to a
    multiple of ``align[j][i]``."""
    ndim = len(shapes[0]) if shapes else 0
    batch_max = [max(int(s[d]) for s in shapes) for d in range(ndim)]
    out = [list(s) for s in shapes]
    for j, s in enumerate(shapes):
        for i, d in enumerate(axes[j]):
            want = int(min_shape[j][i]) if min_shape is not None else -1
            extent = max(want, int(s[d])) if want > 0 else batch_max[d]
            out[j][d] = -(-extent // align[j][i]) * align[j][i]
    return [tuple(s) for s in out]


def pad_cpu(x: np.ndarray, out_shape: Sequence[int], fill: np.ndarray | float) -> np.ndarray:
    """``x`` at the start of an ``out_shape`` array of ``fill``."""
    if x.shape == tuple(out_shape):
        return x
    out = np.empty(tuple(out_shape), x.dtype)
    out[...] = fill
    out[tuple(slice(0, e) for e in x.shape)] = x
    return out


def pad_batch_cpu(samples: np.ndarray | Sequence[np.ndarray], out_shape: Sequence[int],
                  fill: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Samples (dense or a list) padded into one dense batch of ``out_shape``; ``fill`` is
    one value or one per sample."""
    n = len(samples)
    if isinstance(samples, np.ndarray) and samples.shape[1:] == tuple(out_shape):
        return samples
    out = np.empty((n, *out_shape), dtype)
    out[...] = np.reshape(fill, np.shape(fill) + (1,) * len(out_shape))
    if isinstance(samples, np.ndarray):
        out[(slice(None),) + tuple(slice(0, e) for e in samples.shape[1:])] = samples
    else:
        for j, s in enumerate(samples):
            out[(j,) + tuple(slice(0, e) for e in np.shape(s))] = s
    return out


# -- slice --------------------------------------------------------------------------------------

def _per_axis(name: str, values: Sequence[float] | None, k: int) -> list[float] | None:
    if values is None:
        return None
    vals = [float(v) for v in np.ravel(values)]
    if len(vals) == 1 and k > 1:
        return vals * k
    if len(vals) != k:
        raise ValueError(f"'{name}' has {len(vals)} values for {k} sliced axes")
    return vals


def slice_window(in_shape: Sequence[int], axes: Sequence[int], *, start=None, rel_start=None,
                 end=None, rel_end=None, shape=None, rel_shape=None
                 ) -> tuple[list[int], list[int]]:
    """[lo, hi) of every axis from start/end/shape arguments (absolute or relative)."""
    lo = [0] * len(in_shape)
    hi = [int(e) for e in in_shape]
    k = len(axes)
    start, rel_start = _per_axis("start", start, k), _per_axis("rel_start", rel_start, k)
    end, rel_end = _per_axis("end", end, k), _per_axis("rel_end", rel_end, k)
    shape, rel_shape = _per_axis("shape", shape, k), _per_axis("rel_shape", rel_shape, k)
    for i, a in enumerate(axes):
        ext = int(in_shape[a])
        a0 = start[i] if start else _scaled(rel_start[i], ext) if rel_start else 0.0
        if end:
            a1 = end[i]
        elif rel_end:
            a1 = _scaled(rel_end[i], ext)
        elif shape or rel_shape:
            size = shape[i] if shape else _scaled(rel_shape[i], ext)
            if size < 0:
                raise ValueError(f"slice shape {size:g} on axis {a} is negative")
            a1 = a0 + size
        else:
            a1 = float(ext)
        lo[a], hi[a] = int(round_half_away(a0)), int(round_half_away(a1))
        if hi[a] < lo[a]:
            raise ValueError(f"slice end {hi[a]} on axis {a} is before its start {lo[a]}")
    return lo, hi


def slice_window_from_inputs(in_shape: Sequence[int], axes: Sequence[int], anchor: np.ndarray,
                             shape: np.ndarray, normalized_anchor: bool,
                             normalized_shape: bool) -> tuple[list[int], list[int]]:
    """[lo, hi) of every axis from anchor and shape inputs; floats may be normalized."""
    anchor, shape = np.asarray(anchor), np.asarray(shape)
    if (anchor.dtype.kind == "f") != (shape.dtype.kind == "f"):
        raise ValueError(f"anchor and shape inputs must both be integers or both floats, got "
                         f"{anchor.dtype} and {shape.dtype}")
    floats = anchor.dtype.kind == "f"
    anc = _per_axis("anchor", anchor, len(axes)) or []
    shp = _per_axis("shape", shape, len(axes)) or []
    if floats:
        ext = [int(in_shape[a]) for a in axes]
        anc = [_scaled(v, e) if normalized_anchor else v for v, e in zip(anc, ext, strict=True)]
        shp = [_scaled(v, e) if normalized_shape else v for v, e in zip(shp, ext, strict=True)]
    return slice_window(in_shape, axes, start=anc, shape=shp)


def check_window(in_shape: Sequence[int], lo: list[int], hi: list[int],
                 policy: str) -> tuple[list[int], list[int]]:
    """Applies the out-of-bounds policy to a window: 'error' raises, 'trim_to_shape' clips."""
    inside = all(0 <= lo_ and hi_ <= e for lo_, hi_, e in zip(lo, hi, in_shape, strict=True))
    mode = POLICY_MODES[policy]
    if inside or mode is not None:
        if not inside and mode != "constant" and 0 in in_shape:
            raise ValueError(f"out_of_bounds_policy={policy!r} cannot fill from an empty "
                             f"sample of shape {_shape_str(in_shape)}")
        return lo, hi
    if policy == "trim_to_shape":
        lo = [min(max(v, 0), e) for v, e in zip(lo, in_shape, strict=True)]
        hi = [min(max(v, lo_), e) for v, lo_, e in zip(hi, lo, in_shape, strict=True)]
        return lo, hi
    window = ", ".join(f"{a}:{b}" for a, b in zip(lo, hi, strict=True))
    # DALI's words first (code written for DALI may look for them).
    dims = [" x ".join(str(int(v)) for v in vals) for vals in
            (in_shape, lo, [b - a for a, b in zip(lo, hi, strict=True)])]
    raise ValueError(f"Slice can't be placed out of bounds with current policy. Got: "
                     f"input_shape={{{dims[0]}}}, slice_anchor={{{dims[1]}}}, slice_shape="
                     f"{{{dims[2]}}}: slice window [{window}] is outside the sample of shape "
                     f"{_shape_str(in_shape)}; use out_of_bounds_policy='pad' or "
                     "'trim_to_shape' to allow it")


def _source_index(idx: np.ndarray, ext: int, mode: str) -> np.ndarray:
    if mode == "edge":
        return np.clip(idx, 0, ext - 1)
    if mode == "wrap":
        return np.mod(idx, ext)
    if mode == "symmetric":  # edge repeated: ... 1 0 | 0 1 2 ... | 2 1 ...
        m = np.mod(idx, 2 * ext)
        return np.where(m < ext, m, 2 * ext - 1 - m)
    if ext == 1:  # "reflect", edge not repeated: ... 2 1 | 0 1 2 ... | 1 0 ...
        return np.zeros_like(idx)
    m = np.mod(idx, 2 * (ext - 1))
    return np.where(m < ext, m, 2 * (ext - 1) - m)


def slice_cpu(x: np.ndarray, lo: Sequence[int], hi: Sequence[int], policy: str,
              fill_values: Sequence[float], channel_axis: int, dtype: np.dtype,
              lead: int = 0) -> np.ndarray:
    """The window [lo, hi) of ``x`` (per sample axis), converted to ``dtype``."""
    in_shape = x.shape[lead:]
    out_shape = tuple(h - lo_ for lo_, h in zip(lo, hi, strict=True))
    inside = all(0 <= a and b <= e for a, b, e in zip(lo, hi, in_shape, strict=True))
    mode = POLICY_MODES[policy]
    if inside or mode != "constant":
        if inside:
            window = tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))
            out = x[(slice(None),) * lead + window]
        else:
            out = x
            for axis, (a, b, e) in enumerate(zip(lo, hi, in_shape, strict=True)):
                if a < 0 or b > e:
                    out = np.take(out, _source_index(np.arange(a, b), e, mode), axis=axis + lead)
                else:
                    out = out[(slice(None),) * (axis + lead) + (slice(a, b),)]
        return np.ascontiguousarray(convert_saturate(out, dtype))
    fill = c_cast(fill_values, dtype)
    if fill.size > 1:
        channels = out_shape[channel_axis] if channel_axis < len(out_shape) else 1
        if fill.size != channels:
            raise ValueError(f"'fill_values' has {fill.size} values but the output has "
                             f"{channels} channels (axis {channel_axis})")
        fill = fill.reshape((-1,) + (1,) * (len(out_shape) - 1 - channel_axis))
    out = np.empty(x.shape[:lead] + out_shape, dtype)
    out[...] = fill
    src = tuple(slice(max(a, 0), min(b, e)) for a, b, e in zip(lo, hi, in_shape, strict=True))
    dst = tuple(slice(s.start - a, s.stop - a) for s, a in zip(src, lo, strict=True))
    if all(s.stop > s.start for s in src):
        pre = (slice(None),) * lead
        out[pre + dst] = convert_saturate(x[pre + src], dtype)
    return out


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
                         f"{_shape_str(shape)}")
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
                                 f"{ext} (sample shape {_shape_str(shape)})")
            index.append(i)
            axis += 1
        else:
            lo, hi, step = it[1:]
            if step == 0:
                raise ValueError(f"slice step on axis {axis} is 0")
            index.append(slice(lo, hi, step))
            axis += 1
    return np.ascontiguousarray(x[tuple(index)])
