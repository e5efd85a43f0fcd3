"""Resampling operators: ``resize``, ``resize_crop_mirror`` and ``random_resized_crop``.

Glue only: argument resolution per sample, layouts and sequences. The size rules and the
resampler are ``kernels/cpu/image/resize.py``; the random window is
``kernels/cpu/image/crop_window.py``. Images are HWC, CHW, FHWC, FCHW or CFHW (and HW, which
DALI refuses); every frame of a sequence gets the same geometry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.graph.node import DataNode
from stoker.kernels.cpu.image import crop as crop_kernels
from stoker.kernels.cpu.image import resize as K
from stoker.kernels.cpu.image import resize_geometry as G
from stoker.kernels.cpu.image.crop_window import random_crop_window
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

IMAGE = Input("input", "Images: HWC, CHW, FHWC, FCHW or CFHW (HW too).")
LINEAR = types.DALIInterpType.INTERP_LINEAR

RESAMPLING_ARGS = (
    Arg("interp_type", "interp_type", LINEAR, "Filter for both directions (NN, LINEAR, "
        "CUBIC, LANCZOS3, GAUSSIAN, TRIANGULAR); min_filter/mag_filter override it.",
        per_sample=True),
    Arg("min_filter", "interp_type", LINEAR, "Filter used when shrinking.", per_sample=True),
    Arg("mag_filter", "interp_type", LINEAR, "Filter used when enlarging.", per_sample=True),
    Arg("antialias", "bool", True, "Widen the filter by the shrink factor when shrinking."),
    Arg("dtype", "dtype", None, "Output type: the input type (default) or FLOAT."),
    Arg("minibatch_size", "int", 32, "Accepted for portability; stoker's GPU resize takes "
        "the whole batch at once."),
    Arg("temp_buffer_hint", "int", 0, "Accepted for portability (GPU scratch size)."),
)

SIZE_ARGS = (
    Arg("resize_x", "float", 0.0, "Output width; 0 keeps the aspect ratio from resize_y. "
        "Negative flips.", per_sample=True),
    Arg("resize_y", "float", 0.0, "Output height; 0 keeps the aspect ratio from resize_x.",
        per_sample=True),
    Arg("resize_z", "float", 0.0, "Output depth of volumes (not supported yet: 2-D only).",
        per_sample=True),
    Arg("size", "floats", None, "Output (height, width); a 0 extent is derived by 'mode'.",
        per_sample=True),
    Arg("resize_shorter", "float", 0.0, "Length of the shorter side; keeps the aspect ratio.",
        per_sample=True),
    Arg("resize_longer", "float", 0.0, "Length of the longer side; keeps the aspect ratio.",
        per_sample=True),
    Arg("max_size", "floats", None, "Upper limit of the output extents (one or per axis)."),
    Arg("mode", "str", "default", "How given extents combine: 'default', 'stretch', "
        "'not_larger' or 'not_smaller'.",
        choices=("default", "stretch", "not_larger", "not_smaller")),
    Arg("subpixel_scale", "bool", True, "Keep the exact scale of fractional sizes by "
        "adjusting the input window."),
    Arg("roi_start", "floats", None, "Input window origin (y, x); with roi_end.",
        per_sample=True),
    Arg("roi_end", "floats", None, "Input window end (y, x); before roi_start flips.",
        per_sample=True),
    Arg("roi_relative", "bool", False, "roi_start/roi_end are fractions of the input size."),
)

# Per layout, the axis order that makes a sample (F, H, W, C) frames (HW gains C after),
# and back from frames for the layouts with F (the others drop F first).
TO_FRAMES = {"HWC": (0, 1, 2), "CHW": (1, 2, 0), "FHWC": (0, 1, 2, 3), "FCHW": (0, 2, 3, 1),
             "CFHW": (1, 2, 3, 0), "HW": (0, 1)}
FROM_FRAMES = {"FHWC": (0, 1, 2, 3), "FCHW": (0, 3, 1, 2), "CFHW": (3, 0, 1, 2)}
DEFAULT_LAYOUT = {2: "HW", 3: "HWC", 4: "FHWC"}  # by sample dimensions
_SIZE_KEYS = ("size", "resize_x", "resize_y", "resize_shorter", "resize_longer",
              "max_size", "mode", "roi_start", "roi_end", "roi_relative", "subpixel_scale")


# -- layouts ----------------------------------------------------------------------------------


def frame_layout(layout: str, ndim: int) -> str:
    """A sample's layout (its default when none is given), checked against the ones the
    resize operators take."""
    layout = layout or DEFAULT_LAYOUT.get(ndim, "")
    if layout not in TO_FRAMES or len(layout) != ndim:
        raise ValueError(f"unsupported layout {layout!r} for a {ndim}-D sample; "
                         f"expected one of {', '.join(TO_FRAMES)}")
    return layout


def as_frames(sample: np.ndarray, layout: str) -> tuple[np.ndarray, str]:
    """The sample as (F, H, W, C) frames (a view where possible) and its layout."""
    layout = frame_layout(layout, sample.ndim)
    arr = sample.transpose(TO_FRAMES[layout])
    if layout == "HW":
        arr = arr[..., None]
    return (arr if arr.ndim == 4 else arr[None]), layout


def from_frames(frames: list[np.ndarray] | np.ndarray, layout: str) -> np.ndarray:
    """Inverse of ``as_frames`` for (F, H', W', C) results."""
    if isinstance(frames, list):
        arr = frames[0][None] if len(frames) == 1 else np.stack(frames)
    else:
        arr = frames
    if layout == "HW":
        return np.ascontiguousarray(arr[0, ..., 0])
    if layout == "HWC":
        return arr[0]
    if layout == "CHW":
        return np.ascontiguousarray(arr[0].transpose(2, 0, 1))
    return np.ascontiguousarray(arr.transpose(FROM_FRAMES[layout]))


# -- argument resolution ----------------------------------------------------------------------


def filters(args: dict) -> tuple[int, int]:
    """(min filter, mag filter): min_filter/mag_filter when set, else interp_type."""
    interp = int(args.get("interp_type", LINEAR))
    given = args.get("_given", ())
    mn = int(args["min_filter"]) if "min_filter" in given else interp
    mg = int(args["mag_filter"]) if "mag_filter" in given else interp
    return mn, mg


def out_dtype(in_dtype: np.dtype, args: dict) -> np.dtype:
    dtype = args.get("dtype")
    if dtype is None:
        return np.dtype(in_dtype)
    want = np.dtype(types.to_numpy(dtype))
    if want != in_dtype and want != np.float32:
        raise ValueError(f"'dtype' must be the input type ({np.dtype(in_dtype)}) or FLOAT, "
                         f"got {types.DALIDataType(dtype).name}")
    return want


def _value(v: Any) -> Any:
    if isinstance(v, np.ndarray | np.generic):
        return v.tolist()
    return v


def geometry(in_hw: tuple[int, int], args: dict) -> G.ResizeGeometry:
    """The output size and source window for one sample (per-sample values resolved)."""
    kw = {k: _value(args[k]) for k in _SIZE_KEYS if args.get(k) is not None}
    return G.resize_output_size(in_hw, **kw)


def resample_frames(frames: np.ndarray, geom: G.ResizeGeometry, args: dict,
                    dtype: np.dtype) -> np.ndarray:
    mn, mg = filters(args)
    compute = frames if frames.dtype != np.float16 else frames.astype(np.float32)
    antialias = args.get("antialias", True)
    if len(compute) == 1:  # an image: no stacking copy
        return K.resize_hwc(compute[0], geom, mn, mg, antialias, dtype)[None]
    return np.stack([K.resize_hwc(f, geom, mn, mg, antialias, dtype) for f in compute])


def _given(value: Any) -> bool:
    """Set by the user: a per-sample node, or a constant other than the default 0."""
    if value is None:
        return False
    return isinstance(value, DataNode | list) or value != 0


def check_size_args(name: str, args: dict) -> None:
    methods = [k for k in ("size", "resize_shorter", "resize_longer") if _given(args.get(k))]
    if _given(args.get("resize_x")) or _given(args.get("resize_y")):
        methods.append("resize_x/resize_y")
    if len(methods) != 1:
        raise ArgumentError(f"fn.{name}: give exactly one of 'size', 'resize_x'/'resize_y', "
                            f"'resize_shorter' or 'resize_longer', got "
                            f"{', '.join(methods) or 'none'}")
    if methods[0] in ("resize_shorter", "resize_longer") and args.get("mode") != "default":
        raise ArgumentError(f"fn.{name}: argument 'mode' cannot be combined with "
                            f"'{methods[0]}', got mode={args.get('mode')!r}")
    if (args.get("roi_start") is None) != (args.get("roi_end") is None):
        raise ArgumentError(f"fn.{name}: arguments 'roi_start' and 'roi_end' go together; "
                            "got only one")
    size = args.get("size")
    if isinstance(size, list) and len(size) not in (1, 2):
        raise ArgumentError(f"fn.{name}: argument 'size' must have 1 or 2 values (height, "
                            f"width), got {size!r}")
    if _given(args.get("resize_z")):
        raise ArgumentError(f"fn.{name}: argument 'resize_z' needs volumetric input, which "
                            "stoker does not support yet")


# -- resize -----------------------------------------------------------------------------------


def resize_kernel(ins: list, args: dict, ctx: Any) -> Any:
    frames, layout = as_frames(ins[0], args["_in_layouts"][0])
    dtype = out_dtype(frames.dtype, args)
    geom = geometry(frames.shape[1:3], args)
    out = from_frames(resample_frames(frames, geom, args, dtype), layout)
    if args.get("save_attrs"):
        return out, np.array(frames.shape[1:3], np.int32)
    return out


def _dtype_rule(in_dtypes: list, args: dict) -> Any:
    main = np.dtype(types.to_numpy(args["dtype"])) if args.get("dtype") is not None \
        else in_dtypes[0]
    return [main, np.dtype(np.int32)] if args.get("save_attrs") else main


def _layout_rule(layouts: list, args: dict) -> Any:
    layout = image_layout(layouts, args)  # an unnamed input: HWC or FHWC by rank, as DALI
    return [layout, ""] if args.get("save_attrs") else layout


_IMG = [np.arange(120, dtype=np.uint8).reshape(5, 8, 3),
        (np.arange(108, dtype=np.uint8) * 7).reshape(6, 6, 3)]

register(OpSchema(
    name="resize",
    renamed={"image_type": None},
    doc="Resizes images: size from resize_x/resize_y, size, resize_shorter or resize_longer "
        "(with mode and max_size), an optional input region (roi_start/roi_end), and a "
        "filter per direction; antialiased when shrinking.",
    inputs=(IMAGE,),
    args=(*SIZE_ARGS, *RESAMPLING_ARGS,
          Arg("save_attrs", "bool", False, "Also output the input's (height, width), int32.")),
    num_outputs=lambda a: 2 if a.get("save_attrs") else 1,
    kernel=resize_kernel, check=lambda a: check_size_args("resize", a),
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.resize", "resize"),
    dtype=_dtype_rule, layout=_layout_rule,
    examples=(
        Example(args={"resize_shorter": 4.0}, inputs=(_IMG,)),
        Example(args={"size": [7, 3], "interp_type": types.INTERP_CUBIC, "save_attrs": True},
                inputs=(_IMG,)),
        Example(args={"resize_x": 9.0, "dtype": types.FLOAT, "mode": "stretch"},
                inputs=(_IMG,)),
        Example(args={"size": [3, 3], "roi_start": [1.0, 1.0], "roi_end": [4.0, 0.0],
                      "interp_type": types.INTERP_NN}, inputs=(_IMG,)),
        Example(args={"size": [4, 4], "resize_shorter": 3.0}, inputs=(_IMG,),
                raises=ArgumentError, match="give exactly one of"),
        Example(args={"resize_shorter": 3.0, "mode": "stretch"}, inputs=(_IMG,),
                raises=ArgumentError, match="'mode' cannot be combined"),
    ),
))


# -- resize_crop_mirror -----------------------------------------------------------------------


def crop_geometry(geom: G.ResizeGeometry, args: dict, mirror: bool) -> G.ResizeGeometry:
    """The resize geometry of only the crop window (of the resized image), mirrored."""
    crop = _value(args.get("crop"))
    if crop is not None:
        crop = [float(v) for v in np.asarray(crop, np.float64).reshape(-1)]
        ch, cw = (crop[0], crop[0]) if len(crop) == 1 else (crop[-2], crop[-1])
    else:
        ch, cw = float(args.get("crop_h", 0.0)), float(args.get("crop_w", 0.0))
    ch_i = geom.out_h if ch <= 0 else int(round(ch))
    cw_i = geom.out_w if cw <= 0 else int(round(cw))
    rounding = args.get("rounding", "round")
    ay = int(crop_kernels.window_anchor(np.array([float(args.get("crop_pos_y", 0.5))]),
                                        geom.out_h, ch_i, rounding)[0])
    ax = int(crop_kernels.window_anchor(np.array([float(args.get("crop_pos_x", 0.5))]),
                                        geom.out_w, cw_i, rounding)[0])
    sy = (geom.hi_y - geom.lo_y) / geom.out_h
    sx = (geom.hi_x - geom.lo_x) / geom.out_w
    lo_y, hi_y = geom.lo_y + ay * sy, geom.lo_y + (ay + ch_i) * sy
    lo_x, hi_x = geom.lo_x + ax * sx, geom.lo_x + (ax + cw_i) * sx
    if mirror:
        lo_x, hi_x = hi_x, lo_x
    return G.ResizeGeometry(ch_i, cw_i, lo_y, lo_x, hi_y, hi_x)


def resize_crop_mirror_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    frames, layout = as_frames(ins[0], args["_in_layouts"][0])
    dtype = out_dtype(frames.dtype, args)
    geom = crop_geometry(geometry(frames.shape[1:3], args), args, bool(args.get("mirror")))
    return from_frames(resample_frames(frames, geom, args, dtype), layout)


_CROP_ARGS = (
    Arg("crop", "floats", None, "Window (height, width) cut from the resized image.",
        per_sample=True, range=(0, None)),
    Arg("crop_h", "float", 0.0, "Window height (instead of crop).", per_sample=True),
    Arg("crop_w", "float", 0.0, "Window width (instead of crop).", per_sample=True),
    Arg("crop_d", "float", 0.0, "Window depth of volumes (not supported yet).",
        per_sample=True),
    Arg("crop_pos_x", "float", 0.5, "Relative horizontal position: 0 left, 1 right.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_y", "float", 0.5, "Relative vertical position: 0 top, 1 bottom.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_z", "float", 0.5, "Relative depth position of volumes (not supported).",
        per_sample=True, range=(0, 1)),
    Arg("rounding", "str", "round", "How the window's anchor becomes an integer.",
        choices=("round", "truncate")),
    Arg("mirror", "int", 0, "1 mirrors the result horizontally.", per_sample=True,
        range=(0, 1)),
)

register(OpSchema(
    name="resize_crop_mirror",
    doc="Resize, then crop, then mirror horizontally, as one resampling of the crop window "
        "only.",
    inputs=(IMAGE,),
    args=(*SIZE_ARGS, *RESAMPLING_ARGS, *_CROP_ARGS),
    kernel=resize_crop_mirror_kernel, check=lambda a: check_size_args("resize_crop_mirror", a),
    layout=image_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.resize", "resize_crop_mirror"),
    dtype=lambda d, a: np.dtype(types.to_numpy(a["dtype"])) if a.get("dtype") is not None
    else d[0],
    examples=(
        Example(args={"resize_shorter": 6.0, "crop": [4.0, 4.0], "mirror": 1},
                inputs=(_IMG,)),
        Example(args={"size": [9, 9], "crop_h": 5.0, "crop_w": 3.0, "crop_pos_x": 0.0},
                inputs=(_IMG,)),
        Example(args={"size": [4, 4], "mirror": 2}, inputs=(_IMG,), raises=ArgumentError,
                match="'mirror' must be in [0, 1]"),
    ),
))


# -- random_resized_crop ----------------------------------------------------------------------


def random_resized_geometry(in_hw: tuple[int, int], args: dict, ctx: Any) -> G.ResizeGeometry:
    """Draws the sample's window (its stream: operator seed, sample index) and maps it onto
    'size'."""
    h, w = in_hw
    y, x, ch, cw = random_crop_window(ctx.seed, ctx.index, h, w, args["random_area"],
                                      args["random_aspect_ratio"], args["num_attempts"])
    size = args["size"]
    oh, ow = (size[0], size[0]) if len(size) == 1 else (size[0], size[1])
    return G.ResizeGeometry(int(oh), int(ow), float(y), float(x), float(y + ch), float(x + cw))


def random_resized_crop_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    frames, layout = as_frames(ins[0], args["_in_layouts"][0])
    dtype = out_dtype(frames.dtype, args)
    geom = random_resized_geometry(frames.shape[1:3], args, ctx)
    return from_frames(resample_frames(frames, geom, args, dtype), layout)


def _check_rrc(args: dict) -> None:
    for key in ("random_area", "random_aspect_ratio"):
        lo_hi = args.get(key)
        if isinstance(lo_hi, list) and (len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]):
            raise ArgumentError(f"fn.random_resized_crop: argument '{key}' must be [lo, hi] "
                                f"with lo <= hi, got {lo_hi!r}")
    size = args.get("size")
    if isinstance(size, list) and len(size) not in (1, 2):
        raise ArgumentError("fn.random_resized_crop: argument 'size' must have 2 values "
                            f"(height, width), got {size!r}")


register(OpSchema(
    name="random_resized_crop",
    doc="Cuts a random window (area fraction from random_area, aspect ratio log-uniform "
        "in random_aspect_ratio) and resizes it to 'size'.",
    inputs=(IMAGE,),
    args=(Arg("size", "ints", REQUIRED, "Output (height, width).", range=(1, None)),
          Arg("random_area", "floats", [0.08, 1.0], "Range of the window's area fraction.",
              range=(0, None), length=2, broadcast=True),
          Arg("random_aspect_ratio", "floats", [0.75, 1.333333], "Range of the window's "
              "width/height ratio.", range=(0, None), length=2, broadcast=True),
          Arg("num_attempts", "int", 10, "Draws before falling back to the whole image.",
              range=(1, None)),
          *RESAMPLING_ARGS),
    kernel=random_resized_crop_kernel, random=True, check=_check_rrc, layout=image_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.resize", "random_resized_crop"),
    dtype=lambda d, a: np.dtype(types.to_numpy(a["dtype"])) if a.get("dtype") is not None
    else d[0],
    examples=(
        Example(args={"size": [4, 4]}, inputs=(_IMG,)),
        Example(args={"size": [3, 5], "random_area": [0.5, 1.0],
                      "interp_type": types.INTERP_NN}, inputs=(_IMG,)),
        Example(args={"size": [4, 4], "random_area": [0.9, 0.1]}, inputs=(_IMG,),
                raises=ArgumentError, match="'random_area' must be [lo, hi]"),
    ),
))
