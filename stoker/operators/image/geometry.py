"""Geometric image operators: crop and flip (the resampling ones join with the images issue).

Images are HWC, CHW or HW samples; sequences (FHWC, FCHW, CFHW) and volumes (DHWC, CDHW,
FDHWC, ...) too. The glue here resolves DALI's crop arguments into pixel windows and cuts
them with the kernels in ``kernels/cpu/image/crop.py``, through the planes of ``crop_planes.py``.
Window arguments are shared with crop_mirror_normalize.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import crop as K
from stoker.kernels.cpu.tensor.tensor import c_cast, convert_saturate
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.image import crop_planes as P
from stoker.operators.machinery.base import SampleOp
from stoker.operators.machinery.layouts import NdimLayout, image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

IMAGE = Input("input", "Images (HWC, CHW or HW), sequences (FHWC, FCHW, CFHW) or volumes "
                       "(DHWC, CDHW, FDHWC, FCDHW, CFDHW).")

WINDOW_ARGS = (
    Arg("crop", "floats", None, "Window size (height, width), or (depth, height, width); "
        "0 in an axis keeps it whole.", per_sample=True),
    Arg("crop_h", "float", 0.0, "Window height (instead of crop).", per_sample=True,
        range=(0, None)),
    Arg("crop_w", "float", 0.0, "Window width (instead of crop).", per_sample=True,
        range=(0, None)),
    Arg("crop_d", "float", 0.0, "Window depth (with crop_h and crop_w): of the D axis, or "
        "of the frames of a sequence without one.", per_sample=True, range=(0, None)),
    Arg("crop_pos_x", "float", 0.5, "Relative horizontal position: 0 left, 1 right.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_y", "float", 0.5, "Relative vertical position: 0 top, 1 bottom.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_z", "float", 0.5, "Relative depth position: 0 front, 1 back (ignored "
        "without a depth window).", per_sample=True, range=(0, 1)),
    Arg("out_of_bounds_policy", "str", "error", "A window leaving the image: 'error', 'pad' "
        "with fill_values, or 'trim_to_shape'.", choices=("error", "pad", "trim_to_shape")),
    Arg("fill_values", "floats", [0.0], "Values of padded pixels, one or one per channel."),
    Arg("rounding", "str", "round", "How the window's anchor becomes an integer: 'round' "
        "(half away from zero) or 'truncate'.", choices=("round", "truncate")),
)


def check_window(args: dict, op: str = "fn.crop") -> None:
    """DALI's rules on which window arguments go together (it checks them at build)."""
    crop = args.get("crop")
    given = args.get("_given", ())
    if isinstance(crop, list) and len(crop) not in (1, 2, 3):
        raise ArgumentError(f"{op}: argument 'crop' must have 2 values (height, width) or 3 "
                            f"(depth, height, width), got {crop!r}")
    if crop is not None and any(k in given for k in ("crop_h", "crop_w", "crop_d")):
        raise ArgumentError(f"{op}: give either 'crop' or 'crop_h'/'crop_w'(/'crop_d'), "
                            "not both")
    if ("crop_h" in given) != ("crop_w" in given):
        raise ArgumentError(f"{op}: arguments 'crop_h' and 'crop_w' go together; got only "
                            f"'{'crop_h' if 'crop_h' in given else 'crop_w'}'")
    if "crop_d" in given and "crop_w" not in given:
        raise ArgumentError(f"{op}: argument 'crop_d' needs 'crop_h' and 'crop_w' too")


def window_size(args: dict, n: int, h: int, w: int) -> tuple[int, int]:
    """The (height, width) of the windows of a chunk of h x w images."""
    _, ch, cw = P.requested_sizes(args)
    return (ch if ch > 0 else h), (cw if cw > 0 else w)


def resolve_windows(n: int, h: int, w: int, args: dict) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Pixel anchors (n,), (n,) and the window size for n images of h x w."""
    ch, cw = window_size(args, n, h, w)
    rounding = args.get("rounding", "round")
    pos_y = np.broadcast_to(np.asarray(args.get("crop_pos_y", 0.5), np.float64).reshape(-1), (n,))
    pos_x = np.broadcast_to(np.asarray(args.get("crop_pos_x", 0.5), np.float64).reshape(-1), (n,))
    ay = K.window_anchor(pos_y, h, ch, rounding)
    ax = K.window_anchor(pos_x, w, cw, rounding)
    if args.get("out_of_bounds_policy") == "trim_to_shape":
        ay, ch = K.trim_window(ay, ch, h)
        ax, cw = K.trim_window(ax, cw, w)
    return ay, ax, ch, cw


def sample_kernel(batch_kernel: Any) -> Any:
    """The per-sample kernel: the batch kernel on a chunk of one."""
    def kernel(ins: list, args: dict, ctx: Any) -> Any:
        one = {k: (np.asarray(v)[None] if isinstance(v, np.ndarray | np.generic) else v)
               for k, v in args.items()}
        return batch_kernel([np.asarray(x)[None] for x in ins], one, ctx)[0]

    return kernel


def image_instance(op: Any, pipeline: Any) -> SampleOp:
    """At build, a layout known to be one the operator cannot cut is refused (DALI: at
    the first run, a ValueError)."""
    layout = op.inputs[0].layout or ""
    if layout and layout not in P.LAYOUTS and layout != "HW":
        raise ArgumentError(f"{op.schema.fn_name}: {P.bad_layout(layout)}")
    if op.schema.name == "crop_mirror_normalize" and layout:
        try:
            P.out_letters(layout, op.args.get("output_layout"))
        except ValueError as e:
            raise ArgumentError(f"{op.schema.fn_name}: {e}") from None
    return SampleOp(op, pipeline)


# -- crop -------------------------------------------------------------------------------------

def crop_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    images = ins[0]
    layout = P.sample_layout(args["_in_layouts"][0], images.ndim - 1)
    cut = P.cut(images, layout, args)
    planes = cut.planes
    dtype = images.dtype if args.get("dtype") is None else types.to_numpy(args["dtype"])
    if dtype != images.dtype:  # (rare) converted as DALI converts: saturated, truncated
        converted = convert_saturate(planes, dtype)
        if args["out_of_bounds_policy"] == "pad":
            # DALI's padding copy casts as C++ does (wrapped): so for windows that leave
            # their image, measured on 2.4 (300.5 -> 44 as UINT8, but 255 when inside).
            out_h, out_w = planes.shape[1:3]
            pads = (cut.ay < 0) | (cut.ax < 0) | (cut.ay + cut.ch > out_h) | \
                (cut.ax + cut.cw > out_w)
            if cut.outside is not None:
                pads |= cut.outside.reshape(-1)
            pads = np.repeat(pads.reshape(cut.n, -1).any(axis=1), cut.per_sample)
            if pads.any():
                converted[pads] = c_cast(planes[pads], dtype)
        planes = converted
    fill = P.fill_cast(P.fill_or_zero(args["fill_values"], planes.shape[-1],
                                      args["out_of_bounds_policy"] == "pad"), dtype)
    windows = K.crop(planes, cut.ay, cut.ax, cut.ch, cut.cw, fill, allow_pad=True)
    return cut.finish(windows, "HWC", layout, fill)


# DALI names an unnamed input by its number of dimensions: an image or a volume.
_UNNAMED = NdimLayout({3: "HWC", 4: "DHWC"})


def _crop_layout(layouts: list, args: dict) -> str:
    return layouts[0] or _UNNAMED


register(OpSchema(
    name="crop",
    renamed={"output_dtype": "dtype", "image_type": None},
    doc="Cuts a window out of each image, sequence or volume; the window's position is "
        "relative (crop_pos_x/y/z).",
    inputs=(IMAGE,),
    args=(*WINDOW_ARGS, Arg("dtype", "dtype", None, "Output type (default: the input's): "
                                                    "FLOAT, FLOAT16, UINT8 (stoker also gives "
                                                    "the other numeric types).")),
    kernel=sample_kernel(crop_batch), batch_kernel=crop_batch, check=check_window,
    instance=image_instance, layout=_crop_layout,
    dtype=lambda d, a: types.to_numpy(a["dtype"]) if a.get("dtype") is not None else d[0],
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.geometry", "crop"),
    examples=(
        Example(args={"crop": [2, 2]}, inputs=([np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
                                                np.arange(60, dtype=np.uint8).reshape(5, 4, 3)],)),
        Example(args={"crop": [6, 6], "out_of_bounds_policy": "pad", "fill_values": [7.0],
                      "crop_pos_x": 0.0},
                inputs=([np.ones((4, 4, 3), np.uint8)] * 2,)),
        Example(args={"crop_d": 2, "crop_h": 2, "crop_w": 3, "crop_pos_z": 0.0},
                inputs=([np.arange(60, dtype=np.float32).reshape(5, 4, 3, 1)] * 2,)),
        Example(args={"crop": [2, 2], "crop_pos_x": 1.5}, inputs=([np.ones((4, 4, 3), np.uint8)],),
                raises=ArgumentError, match="'crop_pos_x' must be in [0, 1]"),
        Example(args={"crop_h": 2}, inputs=([np.ones((4, 4, 3), np.uint8)],),
                raises=ArgumentError, match="'crop_h' and 'crop_w' go together"),
    ),
))


# -- flip -------------------------------------------------------------------------------------

def flip_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    images = ins[0]
    layout = args["_in_layouts"][0] or {3: "HW", 4: "HWC", 5: "FHWC"}.get(images.ndim, "")
    n = images.shape[0]
    out = images.copy()
    for letter, key in (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise")):
        if letter not in layout:
            continue
        axis = 1 + layout.index(letter)
        flags = np.broadcast_to(np.asarray(args[key]).reshape(-1), (n,)).astype(bool)
        if flags.all():
            out = np.flip(out, axis=axis)
        elif flags.any():
            out[flags] = np.flip(out[flags], axis=axis)
    return np.ascontiguousarray(out)


register(OpSchema(
    name="flip",
    doc="Mirrors images horizontally, vertically and/or in depth, per sample.",
    inputs=(IMAGE,),
    args=(Arg("horizontal", "int", 1, "Flip along the width.", per_sample=True, range=(0, 1)),
          Arg("vertical", "int", 0, "Flip along the height.", per_sample=True, range=(0, 1)),
          Arg("depthwise", "int", 0, "Flip along the depth.", per_sample=True, range=(0, 1))),
    kernel=sample_kernel(flip_batch), batch_kernel=flip_batch, layout=image_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.geometry", "flip"),
    examples=(
        Example(inputs=([np.arange(12, dtype=np.uint8).reshape(2, 2, 3)] * 2,)),
        Example(args={"horizontal": 0, "vertical": 1},
                inputs=([np.arange(24, dtype=np.float32).reshape(2, 4, 3),
                         np.arange(36, dtype=np.float32).reshape(3, 4, 3)],)),
        Example(args={"horizontal": 2}, inputs=([np.ones((2, 2, 3), np.uint8)],),
                raises=ArgumentError, match="'horizontal' must be in [0, 1]"),
    ),
))
