"""``fn.tensor_resize`` (and DALI's old name ``fn.experimental.tensor_resize``): resampling
of any one or two axes of a tensor, without assuming images.

The resized axes are 'axes' (negative count from the back) or 'axis_names' (default:
every axis); 'sizes' gives their new extents (0 keeps one) or 'scales' their factors
(one value or one per axis), rounded as 'size_rounding' says ("round": half away from
zero with the sub-pixel scale kept, as fn.resize; "truncate"; "ceil"). The other axes
ride along as channels: the sample is viewed as (axis0, axis1, everything else) and
resampled by fn.resize's kernels (interp_type, min_filter/mag_filter, antialias, mode,
max_size, roi_start/roi_end/roi_relative, subpixel_scale: the same rules), so for HWC
images and axes (0, 1) the result is fn.resize's, as in DALI 2.4 (measured: identical
outputs). Resampling three or more axes at once, and an 'alignment' other than 0.5
(centers), are not supported (errors).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import resize as K
from stoker.kernels.cpu.image import resize_geometry as G
from stoker.operators.image.resize import filters, out_dtype
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_ROUND = {"round": None, "truncate": math.floor, "ceil": math.ceil}


def _axes(args: dict, layout: str, ndim: int, count: int | None) -> list[int]:
    names, axes = args.get("axis_names"), args.get("axes")
    if names is not None:
        missing = [c for c in names if c not in layout]
        if missing:
            raise ValueError(f"'axis_names' {names!r} names axes that the layout {layout!r} "
                             "lacks")
        return [layout.index(c) for c in names]
    if axes is not None:
        bad = [a for a in axes if not -ndim <= a < ndim]
        if bad:
            raise ValueError(f"'axes' entry {bad[0]} is out of range for {ndim}-D samples")
        return [a % ndim for a in axes]
    return list(range(ndim))


def _values(args: dict, key: str) -> list[float] | None:
    value = args.get(key)
    return None if value is None else [float(v) for v in np.ravel(value)]


def tensor_resize_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    sizes, scales = _values(args, "sizes"), _values(args, "scales")
    given = sizes if sizes is not None else scales
    axes = _axes(args, args["_in_layouts"][0], x.ndim, None if given is None else len(given))
    if given is not None and len(given) == 1 and len(axes) > 1:  # one value for every axis
        given = given * len(axes)
        if sizes is not None:
            sizes = given
        else:
            scales = given
    if given is not None and len(given) != len(axes):
        raise ValueError(f"{'sizes' if sizes is not None else 'scales'} has {len(given)} "
                         f"values for {len(axes)} resized axes")
    if len(set(axes)) != len(axes):
        raise ValueError(f"the resized axes {axes} name an axis twice")
    if len(axes) > 2:
        raise ValueError(f"resampling {len(axes)} axes at once is not supported (at most 2; "
                         "stoker's resampler is 2-D)")
    in_ext = [x.shape[a] for a in axes]
    if sizes is None:
        sizes = [e * s for e, s in zip(in_ext, scales or [1.0] * len(axes), strict=True)]
    rounding = _ROUND[args["size_rounding"]]
    dtype = out_dtype(x.dtype, args)
    # The view: resized axes first (a single one pairs with an extent-1 axis), the rest as
    # channels.
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, axes + rest)
    kept = moved.shape[len(axes):]
    img = moved.reshape(*in_ext, 1, -1) if len(axes) == 1 else \
        moved.reshape(*in_ext, -1) if axes else moved.reshape(1, 1, -1)
    size = (sizes + [1.0]) if len(axes) == 1 else (sizes or [1.0, 1.0])
    roi = {k: _values(args, k) for k in ("roi_start", "roi_end")}
    if len(axes) == 1:
        roi = {k: (v + [0.0 if k == "roi_start" else 1.0]) if v is not None else None
               for k, v in roi.items()}
    geom = _rounded_geometry(img.shape[:2], size, rounding, args) if rounding else None
    geom = geom or G.resize_output_size(
        (img.shape[0], img.shape[1]), size=size, mode=args["mode"],
        max_size=(_values(args, "max_size") + ([0.0] if len(axes) == 1 else []))
        if args.get("max_size") is not None else None,
        roi_start=roi["roi_start"], roi_end=roi["roi_end"],
        roi_relative=bool(args["roi_relative"]), subpixel_scale=bool(args["subpixel_scale"]))
    mn, mg = filters(args)
    out = K.resize_hwc(np.ascontiguousarray(img), geom, mn, mg, bool(args["antialias"]), dtype)
    out_ext = list(out.shape[:len(axes)]) if axes else []
    result = out.reshape(*out_ext, *kept)
    return np.ascontiguousarray(np.transpose(result, np.argsort(axes + rest)))


def _rounded_geometry(in_hw: tuple[int, ...], size: list[float], rounding: Any,
                      args: dict) -> G.ResizeGeometry | None:
    """The geometry of sizes rounded down or up: the extents rounded, the scale kept as
    asked (with subpixel_scale) by reading a window of out / scale pixels about the
    center. None where fn.resize's rules apply instead (a region or a mode)."""
    if args.get("roi_start") is not None or args.get("mode") != "default" or \
            args.get("max_size") is not None:
        return None
    out, lo, hi = [], [], []
    for extent, want in zip(in_hw, size, strict=True):
        want = want or float(extent)
        n = int(rounding(want))
        length = n * extent / want if args["subpixel_scale"] else float(extent)
        out.append(n)
        lo.append((extent - length) / 2)
        hi.append((extent - length) / 2 + length)
    return G.ResizeGeometry(out[0], out[1], lo[0], lo[1], hi[0], hi[1])


def _check(args: dict) -> None:
    if args.get("sizes") is not None and args.get("scales") is not None:
        raise ArgumentError("fn.tensor_resize: arguments 'sizes' and 'scales' exclude each "
                            "other; give one")
    if args.get("axes") is not None and args.get("axis_names") is not None:
        raise ArgumentError("fn.tensor_resize: arguments 'axes' and 'axis_names' exclude "
                            "each other; give one")
    if args.get("size_rounding") not in _ROUND:
        raise ArgumentError(f"fn.tensor_resize: argument 'size_rounding' must be one of "
                            f"'round', 'truncate', 'ceil', got {args.get('size_rounding')!r}")
    if args.get("sizes") is None and args.get("scales") is None:
        raise ArgumentError("fn.tensor_resize: give the new extents as 'sizes' or 'scales'")
    if (args.get("roi_start") is None) != (args.get("roi_end") is None):
        raise ArgumentError("fn.tensor_resize: arguments 'roi_start' and 'roi_end' go "
                            "together; got only one")
    alignment = args.get("alignment")
    if isinstance(alignment, list) and any(float(a) != 0.5 for a in alignment):
        raise ArgumentError(f"fn.tensor_resize: only alignment=0.5 (centers, the default) is "
                            f"supported, got {alignment!r}")
    if args.get("mode") not in ("default", "stretch", "not_smaller", "not_larger"):
        raise ArgumentError(f"fn.tensor_resize: argument 'mode' must be one of 'default', "
                            f"'stretch', 'not_smaller', 'not_larger', got {args.get('mode')!r}")


_RNG = np.random.default_rng(31)
_HWC = [_RNG.integers(0, 256, (12, 16, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (9, 7, 3), dtype=np.uint8)]
_LINEAR = types.INTERP_LINEAR

register(OpSchema(
    name="tensor_resize",
    doc="Resamples one or two axes of a tensor to new extents (or by factors), the other "
        "axes riding along; fn.resize's filters and rules.",
    inputs=(Input("input", "A tensor of any layout."),),
    args=(Arg("sizes", "floats", None, "New extents of the resized axes (0 keeps one).",
              per_sample=True),
          Arg("scales", "floats", None, "Factors of the resized axes.", per_sample=True),
          Arg("axes", "ints", None, "Resized axes (negative count from the back); default: "
              "every axis."),
          Arg("axis_names", "layout", None, "Resized axes by layout letter."),
          Arg("size_rounding", "str", "round", "round, truncate or ceil."),
          Arg("alignment", "floats", [0.5], "Where the axes align: 0.5 (centers) only.",
              per_sample=True),
          Arg("interp_type", "interp_type", _LINEAR, "Interpolation, both ways.",
              per_sample=True),
          Arg("min_filter", "interp_type", _LINEAR, "Filter when shrinking.",
              per_sample=True),
          Arg("mag_filter", "interp_type", _LINEAR, "Filter when enlarging.",
              per_sample=True),
          Arg("antialias", "bool", True, "Widen the filter when shrinking."),
          Arg("dtype", "dtype", None, "Output type: the input's (default) or FLOAT."),
          Arg("mode", "str", "default", "default, stretch, not_smaller or not_larger."),
          Arg("max_size", "floats", None, "Largest extents allowed."),
          Arg("roi_start", "floats", None, "Source window start per resized axis.",
              per_sample=True),
          Arg("roi_end", "floats", None, "Source window end per resized axis.",
              per_sample=True),
          Arg("roi_relative", "bool", False, "roi_start/roi_end relative to the extents."),
          Arg("subpixel_scale", "bool", True, "Keep the exact scale of fractional sizes."),
          Arg("minibatch_size", "int", 32, "Accepted for portability."),
          Arg("temp_buffer_hint", "int", 0, "Accepted for portability.")),
    kernel=tensor_resize_sample, check=_check,
    dtype=lambda d, a: out_dtype(d[0], a),
    examples=(
        Example(args={"sizes": [6.0, 20.0], "axes": [0, 1]}, inputs=(_HWC,)),
        Example(args={"scales": [0.5], "axes": [1], "interp_type": types.INTERP_NN},
                inputs=(_HWC,)),
        Example(args={"sizes": [5.0, 4.0, 3.0][:2], "axes": [1, 2],
                      "dtype": types.FLOAT}, inputs=([x.astype(np.float32) for x in _HWC],)),
        Example(args={"sizes": [4.0, 4.0, 2.0]}, inputs=(_HWC,), raises=RuntimeError,
                match="resampling 3 axes at once is not supported"),
        Example(args={"sizes": [4.0], "scales": [2.0], "axes": [0]}, inputs=(_HWC,),
                raises=ArgumentError, match="'sizes' and 'scales' exclude each other"),
        Example(args={"sizes": [4.0], "axes": [0], "alignment": [0.0]}, inputs=(_HWC,),
                raises=ArgumentError, match="only alignment=0.5"),
    ),
))
