"""Masking kernels: erase boxes from a sample, and GridMask's rotated grid of squares.

Erase boxes are given per region as float anchors and shapes along some axes; a box covers
``floor(anchor) <= i < floor(anchor + shape)``, clipped to the sample (DALI's rule,
measured with fractional and negative anchors).
"""

from __future__ import annotations

import math

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.saturate import cast_like_c


def erase(sample: np.ndarray, axes: list[int], anchors: np.ndarray, shapes: np.ndarray,
          fill: np.ndarray, channel_axis: int | None, out: np.ndarray | None = None
          ) -> np.ndarray:
    """A copy of ``sample`` (into ``out`` if given) with boxes set to ``fill``.

    ``anchors`` and ``shapes`` are (regions, len(axes)) in elements; ``fill`` holds one
    value, or one per channel along ``channel_axis``.
    """
    if out is None:
        out = sample.copy()
    else:
        out[...] = sample
    fill = cast_like_c(np.asarray(fill, np.float64).reshape(-1), sample.dtype)
    if fill.size > 1:
        shape = [1] * sample.ndim
        shape[channel_axis] = fill.size  # type: ignore[index]
        fill = fill.reshape(shape)
    else:
        fill = fill.reshape(())
    for anchor, extent in zip(anchors, shapes, strict=True):
        index: list[slice] = [slice(None)] * sample.ndim
        empty = False
        for axis, a, s in zip(axes, anchor, extent, strict=True):
            lo = max(math.floor(a), 0)
            hi = min(math.floor(a + s), sample.shape[axis])
            empty |= hi <= lo
            index[axis] = slice(lo, max(hi, lo))
        if empty:
            continue
        box = tuple(index)
        if fill.ndim:
            sl = [slice(None)] * sample.ndim
            sl[channel_axis] = index[channel_axis]  # type: ignore[index]
            out[box] = fill[tuple(sl)]
        else:
            out[box] = fill
    return out


def grid_mask(images: np.ndarray, tile: np.ndarray, ratio: np.ndarray, angle: np.ndarray,
              shift_x: np.ndarray, shift_y: np.ndarray) -> np.ndarray:
    """(n, H, W, C) images with GridMask's squares zeroed, one parameter set per sample.

    A pixel (x, y) is kept when either coordinate of its position in the rotated, shifted
    grid, in tile units, has a fractional part >= ratio (float32 math as in DALI).
    """
    L = loops("image.pixel_loops")

    out = np.empty_like(images)
    f32 = np.float32
    L.grid_mask(np.ascontiguousarray(images), tile.astype(np.int64), ratio.astype(f32),
                angle.astype(f32), shift_x.astype(f32), shift_y.astype(f32), out)
    return out
