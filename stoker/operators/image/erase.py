"""Masking operators: erase (boxes set to a fill value) and grid_mask (GridMask).

erase, as measured on DALI 2.4: boxes are given along 'axis_names' (default "HW") or, when
only 'axes' is given, along those axis indices; 'anchor' and 'shape' hold one or more boxes
back to back (k * number of axes values); a box covers floor(anchor) up to
floor(anchor + shape), clipped to the sample; 'normalized_anchor'/'normalized_shape'
(or 'normalized' for both) count in fractions of the extent; 'centered_anchor' makes the
anchor the box's center. 'fill_value' is one value or one per channel, converted to the
data type as C converts (truncated; 300 becomes 44 in uint8).

grid_mask zeroes a grid of squares (HWC images): tile size in pixels, the fraction
'ratio' of each tile's side that is masked, rotated by 'angle' radians and shifted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import mask as K
from stoker.operators.image.geometry import sample_kernel
from stoker.operators.image.image_args import column, given, layout_of
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_GUESS = {2: "HW", 3: "HWC", 4: "FHWC"}


def _row(value: Any, j: int) -> np.ndarray:
    """Sample j's values of a list argument (constants are lists, per-sample values rows)."""
    row = value[j] if isinstance(value, np.ndarray) else value
    return np.asarray(row if row is not None else [], np.float64).reshape(-1)


def _axes(args: dict, layout: str, ndim: int) -> list[int]:
    names, axes = args["axis_names"], args["axes"]
    if given(args, "axes") and not given(args, "axis_names"):
        out = [a + ndim if a < 0 else a for a in axes]
        bad = [a for a in out if not 0 <= a < ndim]
        if bad:
            raise ValueError(f"'axes' {axes} out of range for {ndim}-D samples")
        return out
    missing = [c for c in names if c not in layout]
    if missing:
        raise ValueError(f"'axis_names' {names!r} names axes that layout {layout!r} lacks; "
                         "give the input a layout or pass 'axes'")
    return [layout.index(c) for c in names]


def _boxes(args: dict, j: int, shape: tuple, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    anchor, extent = _row(args.get("anchor"), j), _row(args.get("shape"), j)
    naxes = len(axes)
    if extent.size == 0:
        if anchor.size:
            raise ValueError("'anchor' is given but 'shape' is not")
        return np.zeros((0, naxes)), np.zeros((0, naxes))
    if anchor.size == 0:
        anchor = np.zeros(extent.size)
    if anchor.size != extent.size or extent.size % naxes:
        raise ValueError(f"'anchor' ({anchor.size} values) and 'shape' ({extent.size} values) "
                         f"must both hold k * {naxes} values, {naxes} per box")
    sizes = np.array([shape[a] for a in axes], np.float64)
    anchor, extent = anchor.reshape(-1, naxes), extent.reshape(-1, naxes)
    if args["normalized_anchor"] or args["normalized"]:
        anchor = anchor * sizes
    if args["normalized_shape"] or args["normalized"]:
        extent = extent * sizes
    if args["centered_anchor"]:
        anchor = anchor - extent / 2
    return anchor, extent


def erase_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    layout = layout_of(args, x.ndim - 1, _GUESS)
    axes = _axes(args, layout, x.ndim - 1)
    channel_axis = layout.index("C") if "C" in layout else None
    out = np.empty_like(x)
    for j in range(x.shape[0]):
        fill = _row(args["fill_value"], j)
        if fill.size > 1 and (channel_axis is None or fill.size != x.shape[1 + channel_axis]):
            have = "no channel axis" if channel_axis is None else \
                f"{x.shape[1 + channel_axis]} channels"
            raise ValueError(f"'fill_value' has {fill.size} values but the data has {have}")
        anchors, extents = _boxes(args, j, x.shape[1:], axes)
        K.erase(x[j], axes, anchors, extents, fill, channel_axis, out=out[j])
    return out


def _erase_check(args: dict) -> None:
    anchor, shape = args.get("anchor"), args.get("shape")
    if isinstance(anchor, list) and isinstance(shape, list) and anchor and not shape:
        raise ArgumentError("fn.erase: argument 'anchor' is given but 'shape' is not; a box "
                            "needs a shape")


_RNG = np.random.default_rng(5)
_IMG = [_RNG.integers(1, 256, (8, 10, 3), dtype=np.uint8),
        _RNG.integers(1, 256, (6, 9, 3), dtype=np.uint8)]

register(OpSchema(
    name="erase",
    doc="Sets boxes of the data to a fill value (e.g. random erasing / cutout).",
    inputs=(Input("input", "Data with a layout naming the axes of 'axis_names' (HWC, CHW, "
                           "FHWC, ...)."),),
    args=(Arg("anchor", "floats", [], "Start of each box along the chosen axes, boxes back "
              "to back; empty: all zeros.", per_sample=True),
          Arg("shape", "floats", [], "Extent of each box along the chosen axes.",
              per_sample=True),
          Arg("axis_names", "str", "HW", "Layout letters of the axes the boxes span "
              "(takes precedence over 'axes')."),
          Arg("axes", "ints", [1, 0], "Axis indices the boxes span, used when "
              "'axis_names' is not given."),
          Arg("fill_value", "floats", [0.0], "Value of erased elements, one or one per "
              "channel.", per_sample=True),
          Arg("normalized_anchor", "bool", False, "Anchors are fractions of the extent."),
          Arg("normalized_shape", "bool", False, "Shapes are fractions of the extent."),
          Arg("normalized", "bool", False, "Both anchors and shapes are fractions."),
          Arg("centered_anchor", "bool", False, "The anchor is the box's center.")),
    kernel=sample_kernel(erase_batch), batch_kernel=erase_batch, check=_erase_check,
    examples=(
        Example(args={"anchor": [2, 3], "shape": [3, 4]}, inputs=(_IMG,)),
        Example(args={"anchor": [0.1, 0.2, 0.5, 0.5], "shape": [0.3, 0.3, 0.2, 0.4],
                      "normalized": True, "fill_value": [1.0, 2.0, 3.0]}, inputs=(_IMG,)),
        Example(args={"anchor": [4.0, 5.0], "shape": [2.5, 3.5], "centered_anchor": True,
                      "axes": [0, 1]}, inputs=([x.astype(np.float32) for x in _IMG],)),
        Example(args={"anchor": [2, 3]}, inputs=(_IMG,), raises=ArgumentError,
                match="'anchor' is given but 'shape' is not"),
        Example(args={"anchor": [2, 3], "shape": [3, 4], "fill_value": [1.0, 2.0]},
                inputs=(_IMG,), raises=RuntimeError, match="'fill_value' has 2 values"),
    ),
))


# -- grid_mask --------------------------------------------------------------------------------

def grid_mask_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    layout = layout_of(args, x.ndim - 1, {3: "HWC"})
    if layout != "HWC":
        raise ValueError(f"expects HWC images, got layout {layout!r}")
    n = x.shape[0]
    tile = column(args["tile"], n, "tile")
    if (tile <= 0).any():
        raise ValueError(f"'tile' must be positive, got {tile.min():g}")
    return K.grid_mask(x, tile, *(column(args[k], n, k) for k in
                                  ("ratio", "angle", "shift_x", "shift_y")))


register(OpSchema(
    name="grid_mask",
    doc="GridMask: zeroes a rotated, shifted grid of squares in HWC images.",
    inputs=(Input("input", "HWC images of any type."),),
    args=(Arg("tile", "int", 100, "Side of a grid tile, in pixels.", per_sample=True,
              range=(1, None)),
          Arg("ratio", "float", 0.5, "Fraction of the tile's side that is masked.",
              per_sample=True),
          Arg("angle", "float", 0.0, "Rotation of the grid, in radians.", per_sample=True),
          Arg("shift_x", "float", 0.0, "Horizontal shift of the grid, in pixels.",
              per_sample=True),
          Arg("shift_y", "float", 0.0, "Vertical shift of the grid, in pixels.",
              per_sample=True)),
    kernel=sample_kernel(grid_mask_batch), batch_kernel=grid_mask_batch,
    examples=(
        Example(args={"tile": 4, "ratio": 0.4}, inputs=(_IMG,)),
        Example(args={"tile": 5, "angle": 0.6, "shift_x": 1.5, "shift_y": -2.0},
                inputs=([x.astype(np.float32) for x in _IMG],)),
        Example(args={"tile": 0}, inputs=(_IMG,), raises=ArgumentError,
                match="'tile' must be in [1, inf]"),
        Example(args={"tile": 4}, inputs=([x[..., 0].copy() for x in _IMG],),
                raises=RuntimeError, match="expects HWC images"),
    ),
))
