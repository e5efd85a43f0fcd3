"""Affine transforms and coordinates: ``fn.transforms.*``, ``coord_transform``, ``coord_flip``.

``transforms.*`` make one (ndim, ndim + 1) float32 matrix per sample (DALI's layout of an
affine transform); given a matrix as input they compose with it: by default the new
transform is applied after the input one, ``reverse_order`` applies it before. The
matrices feed ``warp_affine`` and ``coord_transform``. The math is
``kernels/cpu/image/affine.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import affine as A
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

_PRIOR = Input("input", "Optional transform (ndim, ndim + 1) to compose with.", optional=True)
_REVERSE = Arg("reverse_order", "bool", False, "Apply this transform before the input one "
               "instead of after it.")
_CENTER = Arg("center", "floats", None, "The point the transform keeps fixed.",
              per_sample=True)


def _vec(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(value, np.float64).reshape(-1)


def _matrix_layout(layouts: list, args: dict) -> str:
    # DALI 2.4 labels its transform matrices "**" (measured); stoker does the same.
    return "**"


def _finish(matrix: np.ndarray, ins: list, args: dict) -> np.ndarray:
    if ins:
        prior = np.asarray(ins[0], np.float64)
        if prior.shape != matrix.shape:
            raise ValueError(f"the input transform has shape {prior.shape}, this one "
                             f"{matrix.shape}")
        matrix = A.compose(matrix, prior) if args.get("reverse_order") else \
            A.compose(prior, matrix)
    return matrix.astype(np.float32)


def _register(name: str, doc: str, args: tuple, make: Any, examples: tuple,
              check: Any = None) -> None:
    def kernel(ins: list, a: dict, ctx: Any) -> np.ndarray:
        return _finish(make(a), ins, a)

    register(OpSchema(
        name=f"transforms.{name}", doc=doc, inputs=(_PRIOR,), args=(*args, _REVERSE),
        kernel=kernel, layout=_matrix_layout, dtype=lambda d, a: np.dtype(np.float32),
        examples=examples, check=check,
    ))


_MAT = [np.array([[1, 0, 2], [0, 1, 3]], np.float32), np.array([[2, 0, 0], [0, 2, 0]],
                                                               np.float32)]

_register(
    "translation", "Translation by 'offset' (one value per axis).",
    (Arg("offset", "floats", REQUIRED, "Shift per axis.", per_sample=True),),
    lambda a: A.translation(a["offset"]),
    (Example(args={"offset": [3.0, 4.0]}),
     Example(args={"offset": [1.0, -1.0], "reverse_order": True}, inputs=(_MAT,)),
     Example(args={"offset": "x"}, raises=TypeError, match="'offset' must be")),
)


def _scale(a: dict) -> np.ndarray:
    s, center = _vec(a["scale"]), _vec(a.get("center"))
    ndim = a.get("ndim")
    if ndim is None and s.size == 1 and center is not None and center.size != 1:
        raise ValueError(f"'scale' has 1 value but 'center' {center.size}; give 'ndim'")
    return A.scale(s, center, ndim)


_register(
    "scale", "Scaling by 'scale' per axis, about 'center' (default: the origin).",
    (Arg("scale", "floats", REQUIRED, "Factor per axis (one value needs 'ndim').",
         per_sample=True),
     _CENTER,
     Arg("ndim", "int", None, "Number of axes when 'scale' is one value.", range=(1, 6))),
    _scale,
    (Example(args={"scale": [2.0, 3.0], "center": [1.0, 1.0]}),
     Example(args={"scale": [2.0], "ndim": 2}, inputs=(_MAT,)),
     Example(args={"scale": [2.0], "ndim": 0}, raises=ArgumentError,
             match="'ndim' must be in [1, 6]")),
)

_register(
    "rotation", "Rotation by 'angle' degrees about 'center'; 3-D rotations need 'axis'.",
    (Arg("angle", "float", REQUIRED, "Angle in degrees.", per_sample=True),
     Arg("axis", "floats", None, "Axis of a 3-D rotation.", per_sample=True),
     _CENTER),
    lambda a: A.rotation(float(a["angle"]), _vec(a.get("axis")), _vec(a.get("center"))),
    (Example(args={"angle": 30.0, "center": [10.0, 20.0]}),
     Example(args={"angle": 90.0}, inputs=(_MAT,)),
     Example(args={}, raises=TypeError, match="missing required argument 'angle'")),
)


def _check_shear(args: dict) -> None:
    if ("shear" in args) == ("angles" in args):
        raise ArgumentError("fn.transforms.shear: give exactly one of 'shear' or 'angles'")


_register(
    "shear", "Shear by factors 'shear' (2-D: sx, sy) or by 'angles' in degrees.",
    (Arg("shear", "floats", None, "Shear factors: 2 (2-D) or 6 (3-D).", per_sample=True),
     Arg("angles", "floats", None, "Shear angles in degrees (tangents give the factors).",
         per_sample=True),
     _CENTER),
    lambda a: A.shear(_vec(a.get("shear")), _vec(a.get("angles")), _vec(a.get("center"))),
    (Example(args={"shear": [0.5, 0.25], "center": [10.0, 20.0]}),
     Example(args={"angles": [30.0, 10.0]}, inputs=(_MAT,)),
     Example(args={"shear": [0.5, 0.25], "angles": [1.0, 2.0]}, raises=ArgumentError,
             match="exactly one of 'shear' or 'angles'")),
    check=_check_shear,
)

_register(
    "crop", "Maps the box [from_start, from_end] onto [to_start, to_end] (e.g. pixel "
    "coordinates of a crop window onto [0, 1]).",
    (Arg("from_start", "floats", [0.0], "Source box start.", per_sample=True),
     Arg("from_end", "floats", [1.0], "Source box end.", per_sample=True),
     Arg("to_start", "floats", [0.0], "Destination box start.", per_sample=True),
     Arg("to_end", "floats", [1.0], "Destination box end.", per_sample=True),
     Arg("absolute", "bool", False, "Swap start and end where start > end.")),
    lambda a: A.crop(a["from_start"], a["from_end"], a["to_start"], a["to_end"],
                     bool(a.get("absolute"))),
    (Example(args={"from_start": [10.0, 20.0], "from_end": [110.0, 70.0]}),
     Example(args={"from_start": [0.0, 0.0], "from_end": [2.0, 4.0], "absolute": True},
             inputs=(_MAT,)),
     Example(args={"absolute": "yes"}, raises=TypeError, match="'absolute' must be")),
)


# -- combine ----------------------------------------------------------------------------------


def _combine(ins: list, args: dict, ctx: Any) -> np.ndarray:
    mats = [np.asarray(m, np.float64) for m in ins]
    if args.get("reverse_order"):
        mats = mats[::-1]
    out = mats[0]
    for m in mats[1:]:
        out = A.compose(out, m)
    return out.astype(np.float32)


register(OpSchema(
    name="transforms.combine",
    doc="Combines transforms: the result applies input_0, then input_1, ... "
        "(reverse_order: the last input first).",
    # DALI takes 2 to 99 transforms.
    inputs=(Input("input_0", "First transform."), Input("input_1", "Second transform."),
            *(Input(f"input_{i}", "Further transforms.", optional=True) for i in range(2, 99))),
    args=(_REVERSE,), kernel=_combine, layout=_matrix_layout,
    dtype=lambda d, a: np.dtype(np.float32),
    examples=(
        Example(inputs=(_MAT, _MAT[::-1])),
        Example(args={"reverse_order": True}, inputs=(_MAT, _MAT[::-1], _MAT)),
        Example(args={"reverse_order": 3}, inputs=(_MAT, _MAT), raises=TypeError,
                match="'reverse_order' must be"),
    ),
))


# -- coord_transform --------------------------------------------------------------------------


def _matrix(value: Any, rows_in: int, name: str) -> np.ndarray:
    """M as a matrix: one value is a uniform scale, else row-major with D columns."""
    arr = np.asarray(value, np.float64)
    if arr.size == 1:
        return np.eye(rows_in) * float(arr.reshape(-1)[0])
    if arr.ndim == 2 and arr.shape[1] == rows_in:
        return arr
    if arr.size % rows_in:
        raise ValueError(f"'{name}' has {arr.size} values, not a multiple of the "
                         f"{rows_in} components of the input points")
    return arr.reshape(-1, rows_in)


def coord_transform_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    points = np.asarray(ins[0])
    if points.ndim < 2:
        raise ValueError(f"the input must be points (N, D), got shape {points.shape}")
    d = points.shape[-1]
    flat = points.reshape(-1, d)
    m = t = None
    if args.get("MT") is not None:
        mt = np.asarray(args["MT"], np.float64)
        if mt.size == 1:  # a scalar MT is a uniform scale (DALI adds no offset)
            m = np.eye(d) * float(mt.reshape(-1)[0])
        else:
            mt = mt.reshape(-1, d + 1) if mt.ndim != 2 else mt
            if mt.shape[1] != d + 1:
                raise ValueError(f"'MT' must have {d + 1} columns for {d}-D points, got "
                                 f"shape {mt.shape}")
            m, t = mt[:, :d], mt[:, d]
    else:
        if args.get("M") is not None:
            m = _matrix(args["M"], d, "M")
        if args.get("T") is not None:
            t = np.asarray(args["T"], np.float64).reshape(-1)
            rows = m.shape[0] if m is not None else d
            if t.size not in (1, rows):
                raise ValueError(f"'T' has {t.size} values for {rows}-D output points")
    out = A.transform_points(flat, m, t)
    dtype = types.to_numpy(args["dtype"])
    if dtype != np.float32 and dtype != points.dtype:
        raise ValueError(f"'dtype' must be FLOAT or the input type ({points.dtype}), got "
                         f"{dtype}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        # Round half away from zero, as DALI converts to integers.
        out = np.clip(np.copysign(np.floor(np.abs(out) + 0.5), out), info.min, info.max)
    return out.astype(dtype).reshape((*points.shape[:-1], out.shape[-1]))


def _check_ct(args: dict) -> None:
    if args.get("MT") is not None and (args.get("M") is not None or args.get("T") is not None):
        raise ArgumentError("fn.coord_transform: 'MT' cannot be combined with 'M' or 'T'")


def _ct_dtype(in_dtypes: list, args: dict) -> np.dtype:
    return np.dtype(types.to_numpy(args["dtype"]))


_PTS = [np.array([[1, 2], [3, 4], [0.5, 0.25]], np.float32),
        np.array([[5, 6]], np.float32)]

register(OpSchema(
    name="coord_transform",
    doc="Applies out = M @ p + T to every point p (rows of the input). M may be one value "
        "(uniform scale) or a matrix with D columns; MT is [M | T] in one.",
    inputs=(Input("input", "Points (N, D)."),),
    args=(Arg("M", "floats", None, "Matrix (row-major) or one scale factor.", per_sample=True),
          Arg("T", "floats", None, "Translation (one value for all axes).", per_sample=True),
          Arg("MT", "floats", None, "[M | T] as one matrix.", per_sample=True),
          Arg("dtype", "dtype", types.FLOAT, "Output type: FLOAT or the input's type.")),
    kernel=coord_transform_kernel, check=_check_ct, dtype=_ct_dtype,
    layout=lambda layouts, a: layouts[0],
    examples=(
        Example(args={"M": [1.0, 2.0, 3.0, 4.0], "T": [10.0, 20.0]}, inputs=(_PTS,)),
        Example(args={"MT": [1.0, 0.0, 5.0, 0.0, 2.0, 6.0]}, inputs=(_PTS,)),
        Example(args={"M": [2.0, 0.0, 0.0, 3.0, 1.0, 1.0]}, inputs=(_PTS,)),
        Example(args={"MT": [1.0, 0.0, 5.0, 0.0, 2.0, 6.0], "T": [1.0]}, inputs=(_PTS,),
                raises=ArgumentError, match="'MT' cannot be combined"),
    ),
))


# -- coord_flip -------------------------------------------------------------------------------


def coord_flip_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    points = np.asarray(ins[0])
    if points.dtype != np.float32:
        raise ValueError(f"coordinates must be float32, got {points.dtype}")
    if points.ndim != 2 or points.shape[1] > 3:
        raise ValueError(f"coordinates must be (N, D) with D <= 3, got shape {points.shape}")
    d = points.shape[1]
    layout = args.get("layout") or "xyz"[:d]
    if len(layout) != d or set(layout) - set("xyz"):
        raise ValueError(f"layout {layout!r} does not describe {d}-D coordinates")
    out = points.copy()
    for axis in "xyz":
        if axis in layout and int(args.get(f"flip_{axis}", 0)):
            k = layout.index(axis)
            out[:, k] = np.float32(2.0 * float(args.get(f"center_{axis}", 0.5))) - out[:, k]
    return out


register(OpSchema(
    name="coord_flip",
    doc="Mirrors normalized coordinates: x -> 2 * center_x - x where flip_x (and y, z).",
    inputs=(Input("input", "Coordinates (N, D), D <= 3, float32."),),
    args=(Arg("layout", "layout", "", "Order of the coordinates ('xy', 'yx', 'xyz', ...); "
              "default x, y, z by count."),
          Arg("flip_x", "int", 1, "Flip horizontally.", per_sample=True, range=(0, 1)),
          Arg("flip_y", "int", 0, "Flip vertically.", per_sample=True, range=(0, 1)),
          Arg("flip_z", "int", 0, "Flip in depth.", per_sample=True, range=(0, 1)),
          Arg("center_x", "float", 0.5, "Mirror axis position in x.", per_sample=True),
          Arg("center_y", "float", 0.5, "Mirror axis position in y.", per_sample=True),
          Arg("center_z", "float", 0.5, "Mirror axis position in z.", per_sample=True)),
    kernel=coord_flip_kernel, layout=lambda layouts, a: layouts[0],
    examples=(
        Example(inputs=(_PTS,)),
        Example(args={"flip_x": 1, "flip_y": 1, "layout": "yx", "center_x": 0.3},
                inputs=(_PTS,)),
        Example(args={"flip_x": 3}, inputs=(_PTS,), raises=ArgumentError,
                match="'flip_x' must be in [0, 1]"),
    ),
))
