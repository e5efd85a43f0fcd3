"""Affine warps: ``warp_affine`` and ``rotate``.

Glue only: the size rules, matrices and sampling loops are ``kernels/cpu/image/warp.py``. Images
are HWC or FHWC (CHW/FCHW/HW too, which DALI refuses). A per-sample ``angle`` or
``matrix`` may carry one value per frame of a sequence. Passing the same ``angle`` node to
the rotate of an image (LINEAR) and of its mask (NN) turns both alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import warp as K
from stoker.operators.image.resize import as_frames, from_frames
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

IMAGE = Input("input", "Images: HWC or FHWC (CHW, FCHW and HW too).")
_INTERPS = (types.DALIInterpType.INTERP_NN, types.DALIInterpType.INTERP_LINEAR)

_COMMON = (
    Arg("size", "floats", [], "Output (height, width); empty: see the operator.",
        per_sample=True),
    Arg("fill_value", "float", None, "Value outside the source; unset repeats edge pixels."),
    Arg("interp_type", "interp_type", types.DALIInterpType.INTERP_LINEAR,
        "NN or LINEAR.", choices=_INTERPS),
    Arg("dtype", "dtype", None, "Output type; default: the input type."),
)


def _out_dtype(in_dtype: np.dtype, args: dict) -> np.dtype:
    return np.dtype(types.to_numpy(args["dtype"])) if args.get("dtype") is not None \
        else np.dtype(in_dtype)


def _size(args: dict) -> tuple[int, int] | None:
    size = args.get("size")
    if size is None:
        return None
    vals = np.asarray(size, np.float64).reshape(-1)
    if vals.size == 0:
        return None
    if vals.size != 2:
        raise ValueError(f"'size' must be (height, width), got {vals.tolist()}")
    return int(round(vals[0])), int(round(vals[1]))


def _per_frame(value: Any, frames: int, width: int, name: str) -> np.ndarray:
    """(frames, width) values: one set for all frames, or one per frame."""
    arr = np.asarray(value, np.float64).reshape(-1)
    if arr.size == width:
        return np.broadcast_to(arr, (frames, width))
    if arr.size == width * frames:
        return arr.reshape(frames, width)
    raise ValueError(f"'{name}' has {arr.size} values; expected {width} (or {width} per "
                     f"frame for {frames} frames)")


def _dtype_rule(in_dtypes: list, args: dict) -> np.dtype:
    return _out_dtype(in_dtypes[0], args)


# -- warp_affine ------------------------------------------------------------------------------


def warp_affine_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    frames, layout = as_frames(ins[0], args["_in_layouts"][0])
    n = frames.shape[0]
    source = ins[1] if len(ins) > 1 else args.get("matrix")
    if source is None or np.asarray(source).size == 0:
        raise ValueError("give the transform as the 'matrix' argument or as the second input")
    mats = _per_frame(source, n, 6, "matrix").reshape(n, 2, 3)
    if not args.get("inverse_map", True):
        mats = np.stack([K.invert_affine(m) for m in mats])
    out_hw = _size(args) or frames.shape[1:3]
    dtype = _out_dtype(frames.dtype, args)
    interp = int(args["interp_type"])
    out = [K.warp_hwc(f, m, out_hw, interp, args.get("fill_value"), dtype)
           for f, m in zip(frames, mats, strict=True)]
    return from_frames(out, layout)


def _check_warp(args: dict) -> None:
    size = args.get("size")
    if isinstance(size, list) and len(size) not in (0, 2):
        raise ArgumentError(f"fn.warp_affine: argument 'size' must be (height, width), got "
                            f"{size!r}")
    matrix = args.get("matrix")
    if isinstance(matrix, list) and len(matrix) not in (0, 6):
        raise ArgumentError(f"fn.warp_affine: argument 'matrix' must have 6 values (a 2x3 "
                            f"matrix), got {len(matrix)}")


_IMG = [np.arange(120, dtype=np.uint8).reshape(5, 8, 3),
        (np.arange(108, dtype=np.uint8) * 7).reshape(6, 6, 3)]
_M = [np.array([[1.0, 0.2, 0.5], [0.1, 0.9, -1.0]], np.float32),
      np.array([[0.5, 0.0, 1.0], [0.0, 0.5, 1.0]], np.float32)]

register(OpSchema(
    name="warp_affine",
    renamed={"output_dtype": "dtype"},
    doc="Applies an affine transform: output pixel p reads the input at matrix @ p "
        "(inverse_map=True, the default) or at inverse(matrix) @ p; the 2x3 matrix is the "
        "'matrix' argument or the second input.",
    inputs=(IMAGE, Input("mtx", "Optional per-sample 2x3 matrices.", optional=True)),
    args=(Arg("matrix", "floats", [], "2x3 matrix, row-major (6 values).", per_sample=True),
          Arg("inverse_map", "bool", True, "The matrix maps output to input coordinates."),
          *_COMMON),
    kernel=warp_affine_kernel, check=_check_warp, dtype=_dtype_rule, layout=image_layout,
    examples=(
        Example(args={"matrix": [1.0, 0.1, 0.5, 0.0, 1.0, -0.5], "fill_value": 0.0},
                inputs=(_IMG,)),
        Example(args={"size": [4.0, 7.0], "inverse_map": False,
                      "interp_type": types.INTERP_NN}, inputs=(_IMG, _M)),
        Example(args={"matrix": [1.0, 0.0, 0.0]}, inputs=(_IMG,), raises=ArgumentError,
                match="'matrix' must have 6 values"),
    ),
))


# -- rotate -----------------------------------------------------------------------------------


def rotate_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    frames, layout = as_frames(ins[0], args["_in_layouts"][0])
    n = frames.shape[0]
    if args.get("axis") is not None and np.asarray(args["axis"]).size:
        raise ValueError("'axis' is for volumetric (3-D) rotation, which stoker does not "
                         "support yet")
    angles = _per_frame(args["angle"], n, 1, "angle")[:, 0]
    in_hw = frames.shape[1:3]
    out_hw = _size(args)
    if out_hw is None:
        if args.get("keep_size"):
            out_hw = in_hw
        else:  # one canvas for the whole sequence: the largest any frame needs
            sizes = np.array([K.rotated_size(in_hw, a) for a in angles])
            out_hw = tuple(int(v) for v in sizes.max(axis=0))
    dtype = _out_dtype(frames.dtype, args)
    out = [K.warp_hwc(f, K.rotation_matrix(in_hw, out_hw, a), out_hw, int(args["interp_type"]),
                      args.get("fill_value"), dtype) for f, a in zip(frames, angles, strict=True)]
    return from_frames(out, layout)


def _check_rotate(args: dict) -> None:
    size = args.get("size")
    if isinstance(size, list) and len(size) not in (0, 2):
        raise ArgumentError(f"fn.rotate: argument 'size' must be (height, width), got {size!r}")
    if isinstance(size, list) and size and args.get("keep_size"):
        raise ArgumentError("fn.rotate: give either 'size' or keep_size=True, not both")


register(OpSchema(
    name="rotate",
    renamed={"output_dtype": "dtype"},
    doc="Rotates images counter-clockwise by 'angle' degrees about their center; the canvas "
        "fits the whole rotated image unless 'size' or keep_size says otherwise.",
    inputs=(IMAGE,),
    args=(Arg("angle", "float", REQUIRED, "Angle in degrees, counter-clockwise.",
              per_sample=True),
          Arg("axis", "floats", None, "Rotation axis of volumes (not supported yet).",
              per_sample=True),
          Arg("keep_size", "bool", False, "Keep the input size (corners are cut)."),
          *_COMMON),
    kernel=rotate_kernel, check=_check_rotate, dtype=_dtype_rule, layout=image_layout,
    examples=(
        Example(args={"angle": 30.0}, inputs=(_IMG,)),
        Example(args={"angle": 90.0, "keep_size": True, "fill_value": 5.0,
                      "interp_type": types.INTERP_NN}, inputs=(_IMG,)),
        Example(args={"angle": -10.0, "size": [4.0, 9.0], "dtype": types.FLOAT},
                inputs=(_IMG,)),
        Example(args={"angle": 10.0, "interp_type": types.INTERP_CUBIC}, inputs=(_IMG,),
                raises=ArgumentError, match="'interp_type' must be one of"),
    ),
))
