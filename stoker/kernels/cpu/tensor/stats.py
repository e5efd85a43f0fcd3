"""Mean / standard deviation normalization: ``(x - mean) * scale / sqrt(var + eps) + shift``.

Statistics are reduced over some axes of each sample, or of every sample of a batch
together. A sample is viewed as four axes alternating kept and reduced ones - adjacent
axes of one kind merge, missing ones have extent 1 - so one numba loop serves the usual
choices of axes (all, HW of HWC or CHW, C, FHWC's HW, ...) and walks memory in order. Sums run in
float64 (two passes: mean, then squared deviations); the output pass is float32.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops

F32 = np.float32


def four_axes(shape: tuple[int, ...], axes: tuple[int, ...]
              ) -> tuple[tuple[int, ...], bool] | None:
    """A 4-D view of ``shape`` alternating kept (K) and reduced (R) axes, and whether the
    innermost is kept: (K0, R0, K1, R1) or (R0, K0, R1, K1). None if that cannot hold it."""
    groups: list[list] = []  # [reduced?, extent], adjacent axes of one kind merged
    for a, extent in enumerate(shape):
        reduced = a in axes
        if groups and groups[-1][0] == reduced:
            groups[-1][1] *= extent
        else:
            groups.append([reduced, extent])
    if not groups or len(groups) > 4:
        return None
    while len(groups) < 4:  # pad in front: the innermost loop stays the longest
        groups.insert(0, [not groups[0][0], 1])
    return tuple(int(e) for _, e in groups), not groups[-1][0]


def _widen(shape4: tuple[int, ...], inner_kept: bool) -> tuple[tuple[int, ...], int]:
    """Makes a short kept innermost axis long: (R0, K0, R1, K1) -> (R0, K0, R1 / r, r * K1),
    so the inner loop runs over r * K1 contiguous elements (e.g. a whole row of an HWC
    image instead of its 3 channels). Returns the view and r (1 when nothing changes)."""
    r0, k0, r1, k1 = shape4
    if not inner_kept or k1 >= 64:
        return shape4, 1
    for r in range(min(r1, max(1, 512 // k1)), 0, -1):
        if r1 % r == 0:
            return (r0, k0, r1 // r, r * k1), r
    return shape4, 1


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if a in axes else s for a, s in enumerate(shape))


def _sums(x: np.ndarray, axes: tuple[int, ...], center: np.ndarray | None) -> np.ndarray:
    """Sum of x, or of (x - center)^2, over ``axes``, in the reduced (keepdims) shape."""
    L = loops("image.pixel_loops")

    red = reduced_shape(x.shape, axes)
    view = four_axes(x.shape, axes)
    if view is None:  # rare layouts: numpy
        v = x.astype(np.float64)
        if center is not None:
            v = (v - center) ** 2
        return v.sum(axis=axes, keepdims=True)
    shape4, inner_kept = view
    kept = (shape4[1], shape4[3]) if inner_kept else (shape4[0], shape4[2])
    wide, r = _widen(shape4, inner_kept)
    c = np.zeros(kept, np.float64) if center is None else \
        np.ascontiguousarray(np.broadcast_to(center, red), np.float64).reshape(kept)
    acc = np.zeros((kept[0], kept[1] * r) if inner_kept else kept, np.float64)
    L.group_sums(np.ascontiguousarray(x).reshape(wide), np.tile(c, (1, r)),
                 center is not None, inner_kept, acc)
    if r > 1:
        acc = acc.reshape(kept[0], r, kept[1]).sum(axis=1)
    return acc.reshape(red)


def _count(x: np.ndarray, axes: tuple[int, ...]) -> int:
    return int(np.prod([x.shape[a] for a in axes]))


def variance(sq: np.ndarray, dof: int) -> np.ndarray:
    """Squared deviations summed to ``sq`` over ``dof`` degrees of freedom (count - ddof).
    None left (ddof at or past the count): 0, as DALI 2.4 takes it (measured: [5.0] with
    mean=1, ddof=2, epsilon=0.25 gives (5 - 1) / sqrt(0 + 0.25) = 8)."""
    return sq / np.float64(dof) if dof > 0 else np.zeros_like(sq)


def moments(samples: list[np.ndarray], axes: tuple[int, ...], mean: list | None,
            ddof: int, together: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per-sample (or, when ``together``, batch-wide) mean and variance over ``axes``.

    A given ``mean`` (one per sample, broadcastable to the reduced shape) is the center of
    the variance instead of the computed mean; ``ddof`` is subtracted from the count.
    """
    if not together:
        means, variances = [], []
        for j, x in enumerate(samples):
            m = _sums(x, axes, None) / _count(x, axes) if mean is None else \
                np.broadcast_to(mean[j], reduced_shape(x.shape, axes))
            means.append(m)
            variances.append(variance(_sums(x, axes, m), _count(x, axes) - ddof))
        return means, variances
    count = sum(_count(x, axes) for x in samples)
    m = sum(_sums(x, axes, None) for x in samples) / count if mean is None else \
        np.broadcast_to(mean[0], reduced_shape(samples[0].shape, axes))
    var = variance(sum(_sums(x, axes, m) for x in samples), count - ddof)
    return [m] * len(samples), [var] * len(samples)


def inverse_std(var: np.ndarray, epsilon: float, scale: float, computed: bool) -> np.ndarray:
    """``scale / sqrt(var + epsilon)``. Where a computed variance (plus epsilon) is 0, the
    result is 0, so constant regions come out as 'shift' (DALI's output) rather than NaN;
    a given stddev of 0 gives inf, as in DALI."""
    denom = np.sqrt(np.asarray(var, np.float64) + epsilon)
    with np.errstate(divide="ignore"):
        inv = scale / denom
    return np.where(denom == 0, 0.0, inv) if computed else inv


def normalize(x: np.ndarray, axes: tuple[int, ...], mean: np.ndarray, inv: np.ndarray,
              shift: float, out_dtype: np.dtype, out: np.ndarray | None = None) -> np.ndarray:
    """``(x - mean) * inv + shift`` in float32 (mean, inv in the reduced shape), converted to
    ``out_dtype`` rounding half away from zero and saturating; written to ``out`` if given
    (a contiguous array of x's shape)."""
    L = loops("image.pixel_loops")
    from stoker.kernels.cpu.saturate import round_sat, type_range

    out_dtype = np.dtype(out_dtype)
    red = reduced_shape(x.shape, axes)
    view = four_axes(x.shape, axes)
    if view is None:
        v = (x.astype(F32) - np.asarray(mean, F32)) * np.asarray(inv, F32) + F32(shift)
        if out is None:
            return round_sat(v, out_dtype)
        out[...] = round_sat(v, out_dtype)
        return out
    shape4, inner_kept = view
    kept = (shape4[1], shape4[3]) if inner_kept else (shape4[0], shape4[2])
    wide, r = _widen(shape4, inner_kept)
    m = np.tile(np.ascontiguousarray(np.broadcast_to(mean, red), F32).reshape(kept), (1, r))
    s = np.tile(np.ascontiguousarray(np.broadcast_to(inv, red), F32).reshape(kept), (1, r))
    if out is None:
        out = np.empty(x.shape, out_dtype)
    lo, hi = type_range(out_dtype)
    L.group_normalize(np.ascontiguousarray(x).reshape(wide), m, s, F32(shift), lo, hi,
                      out_dtype.kind in "iu", inner_kept, out.reshape(wide))
    return out
