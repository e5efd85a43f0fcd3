"""Tensor kernels for windows: padding (``pad``) and slicing (``slice``, the window decoders).

Plain numpy on one sample or, where a function takes ``lead=1``, on a dense batch whose
axis 0 is the sample. Errors are ``ValueError``s that state the rule and the values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stoker.kernels.cpu.tensor.tensor import (
    c_cast,
    convert_saturate,
    round_half_away,
    scaled_extent,
    shape_str,
)

# out_of_bounds_policy -> how indices outside the input map back into it (None: they don't).
POLICY_MODES = {"error": None, "trim_to_shape": None, "pad": "constant", "constant": "constant",
                "edge": "edge", "clamp": "edge", "reflect": "symmetric",
                "reflect_1001": "symmetric", "reflect_101": "reflect", "wrap": "wrap"}


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
        a0 = start[i] if start else scaled_extent(rel_start[i], ext) if rel_start else 0.0
        if end:
            a1 = end[i]
        elif rel_end:
            a1 = scaled_extent(rel_end[i], ext)
        elif shape or rel_shape:
            size = shape[i] if shape else scaled_extent(rel_shape[i], ext)
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
        anc = [scaled_extent(v, e) if normalized_anchor else v
               for v, e in zip(anc, ext, strict=True)]
        shp = [scaled_extent(v, e) if normalized_shape else v
               for v, e in zip(shp, ext, strict=True)]
    return slice_window(in_shape, axes, start=anc, shape=shp)


def check_window(in_shape: Sequence[int], lo: list[int], hi: list[int],
                 policy: str) -> tuple[list[int], list[int]]:
    """Applies the out-of-bounds policy to a window: 'error' raises, 'trim_to_shape' clips."""
    inside = all(0 <= lo_ and hi_ <= e for lo_, hi_, e in zip(lo, hi, in_shape, strict=True))
    mode = POLICY_MODES[policy]
    if inside or mode is not None:
        if not inside and mode != "constant" and 0 in in_shape:
            raise ValueError(f"out_of_bounds_policy={policy!r} cannot fill from an empty "
                             f"sample of shape {shape_str(in_shape)}")
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
                     f"{shape_str(in_shape)}; use out_of_bounds_policy='pad' or "
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
