"""``fn.experimental.warp_perspective``: projective warps of images and sequences.

The 3x3 matrix is the 'matrix' argument (9 values, or per sample) or the second input (a
3x3 tensor per sample). By default (inverse_map=True) it maps output points to input
points; pixel_origin "corner" (DALI's default) puts pixel (x, y)'s center at (x + 0.5,
y + 0.5), "center" at (x, y). 'size' is the output's (height, width) (default: the
input's). Points outside the input read 'fill_value' (border_mode "constant"; one value
or one per channel, default 0) or the border rule. Layouts HW, HWC, CHW, FHWC, FHW and
FCHW; the output keeps the input's type and layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import perspective as K
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_IN_TYPES = tuple(np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32))
_LAYOUTS = ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")


def _frames(x: np.ndarray, layout: str) -> tuple[np.ndarray, str]:
    """The sample as (frames, H, W, C) and its layout."""
    layout = layout or {2: "HW", 3: "HWC", 4: "FHWC"}.get(x.ndim, "")
    if layout not in _LAYOUTS or len(layout) != x.ndim:
        raise ValueError(f"expects a layout among {', '.join(_LAYOUTS)}, got {layout!r} for "
                         f"a {x.ndim}-D sample")
    v = x if "F" in layout else x[None]
    inner = layout.replace("F", "")
    if inner == "HW":
        v = v[..., None]
    elif inner == "CHW":
        v = np.moveaxis(v, 1, -1)
    return v, layout


def _unframe(out: np.ndarray, layout: str) -> np.ndarray:
    inner = layout.replace("F", "")
    if inner == "HW":
        out = out[..., 0]
    elif inner == "CHW":
        out = np.moveaxis(out, -1, 1)
    return np.ascontiguousarray(out if "F" in layout else out[0])


def warp_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.dtype not in _IN_TYPES:
        raise TypeError(f"input type {x.dtype.name} is not supported; expected one of "
                        f"{', '.join(t.name for t in _IN_TYPES)}")
    frames, layout = _frames(x, args["_in_layouts"][0])
    source = ins[1] if len(ins) > 1 and ins[1] is not None else args.get("matrix")
    matrix = np.asarray(source if source is not None else [], np.float64).ravel()
    if matrix.size != 9:
        raise ValueError(f"the matrix must have 9 values (3x3), got {matrix.size}: give it "
                         "as 'matrix' or as the second input")
    interp = int(args["interp_type"])
    if interp not in K.INTERP:
        raise ValueError(f"'interp_type' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, "
                         f"got {types.DALIInterpType(interp).name}")
    size = np.ravel(np.asarray(args.get("size") if args.get("size") is not None else [],
                               np.float64))
    if size.size == 1:  # one value stands for both extents, as DALI reads it
        size = np.repeat(size, 2)
    if size.size not in (0, 2):
        raise ValueError(f"'size' must be (height, width), got {size.tolist()}")
    out_hw = (frames.shape[1], frames.shape[2]) if size.size == 0 else \
        (int(size[0]), int(size[1]))
    channels = frames.shape[3]
    fill = np.ravel(np.asarray(args.get("fill_value") or [0.0], np.float64))
    if fill.size == 1:
        fill = np.repeat(fill, channels)
    if fill.size != channels:
        raise ValueError(f"'fill_value' has {fill.size} values for {channels} channels; "
                         "give one value or one per channel")
    m = K.opencv_matrix(matrix, args["pixel_origin"] == "corner")
    out = np.stack([K.warp_perspective_hwc(f, m, out_hw, bool(args["inverse_map"]), interp,
                                           args["border_mode"], fill) for f in frames])
    return _unframe(out, layout)


def _check(args: dict) -> None:
    if args.get("border_mode") not in K.BORDERS:
        raise ArgumentError(f"fn.experimental.warp_perspective: argument 'border_mode' must "
                            f"be one of {', '.join(repr(b) for b in K.BORDERS)}, got "
                            f"{args.get('border_mode')!r}")
    if args.get("pixel_origin") not in ("corner", "center"):
        raise ArgumentError(f"fn.experimental.warp_perspective: argument 'pixel_origin' must "
                            f"be 'corner' or 'center', got {args.get('pixel_origin')!r}")
    matrix = args.get("matrix")
    if isinstance(matrix, list) and len(matrix) not in (0, 9):
        raise ArgumentError(f"fn.experimental.warp_perspective: argument 'matrix' must have "
                            f"9 values (a 3x3 matrix), got {len(matrix)}")


_RNG = np.random.default_rng(9)
_IMG = [_RNG.integers(0, 256, (12, 15, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (9, 8, 3), dtype=np.uint8)]
_M = [0.9, 0.1, 2.0, -0.05, 1.1, -1.0, 0.001, 0.002, 1.0]

register(OpSchema(
    name="experimental.warp_perspective",
    doc="Warps images by a 3x3 projective matrix (output to input by default).",
    inputs=(Input("input", "Images or sequences: HW, HWC, CHW, FHW, FHWC or FCHW."),
            Input("matrix_input", "A 3x3 float matrix per sample (instead of the argument).",
                  optional=True)),
    args=(Arg("matrix", "floats", [], "The 3x3 matrix, 9 values in row order.",
              per_sample=True),
          Arg("size", "floats", [], "Output (height, width); default: the input's.",
              per_sample=True),
          Arg("inverse_map", "bool", True, "The matrix maps output points to input points."),
          Arg("pixel_origin", "str", "corner", "'corner': pixel centers at +0.5; 'center': "
              "at integer coordinates."),
          Arg("border_mode", "str", "constant", "constant, replicate, reflect, reflect_101 "
              "or wrap."),
          Arg("fill_value", "floats", [], "Value(s) of points outside with border_mode "
              "'constant': one or one per channel (default 0)."),
          Arg("interp_type", "interp_type", types.INTERP_LINEAR, "INTERP_NN, INTERP_LINEAR "
              "or INTERP_CUBIC.")),
    kernel=warp_sample, check=_check,
    examples=(
        Example(args={"matrix": _M}, inputs=(_IMG,)),
        Example(args={"matrix": _M, "size": [7.0, 9.0], "interp_type": types.INTERP_NN,
                      "fill_value": [10.0, 20.0, 30.0]}, inputs=(_IMG,)),
        Example(args={"border_mode": "wrap", "pixel_origin": "center"},
                inputs=([x.astype(np.float32) for x in _IMG],
                        [np.array(_M, np.float32).reshape(3, 3)] * 2)),
        Example(inputs=(_IMG,), raises=RuntimeError, match="the matrix must have 9 values"),
        Example(args={"matrix": _M[:6]}, inputs=(_IMG,), raises=ArgumentError,
                match="must have 9 values"),
        Example(args={"matrix": _M, "border_mode": "mirror"}, inputs=(_IMG,),
                raises=ArgumentError, match="'border_mode' must be one of"),
    ),
))
