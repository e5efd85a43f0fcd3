"""Geometric image operators: crop and flip (the resampling ones join with the images issue).

Images are HWC, CHW or HW samples (sequences with a leading F too). The glue here maps a
layout to an HWC view, resolves DALI's crop arguments into pixel windows, and calls the
kernels in ``kernels/cpu/crop.py``. Window arguments are shared with crop_mirror_normalize.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu import crop as K
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.registry import register
from stoker.operators.schema import Arg, Example, Input, OpSchema

IMAGE = Input("input", "Images (HWC, CHW or HW; FHWC/FCHW sequences).")

WINDOW_ARGS = (
    Arg("crop", "floats", None, "Window size (height, width); 0 in an axis keeps it whole.",
        per_sample=True, range=(0, None)),
    Arg("crop_h", "float", 0.0, "Window height (instead of crop).", per_sample=True,
        range=(0, None)),
    Arg("crop_w", "float", 0.0, "Window width (instead of crop).", per_sample=True,
        range=(0, None)),
    Arg("crop_pos_x", "float", 0.5, "Relative horizontal position: 0 left, 1 right.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_y", "float", 0.5, "Relative vertical position: 0 top, 1 bottom.",
        per_sample=True, range=(0, 1)),
    Arg("out_of_bounds_policy", "str", "error", "A window leaving the image: 'error', 'pad' "
        "with fill_values, or 'trim_to_shape'.", choices=("error", "pad", "trim_to_shape")),
    Arg("fill_values", "floats", [0.0], "Values of padded pixels, one or one per channel."),
    Arg("rounding", "str", "round", "How the window's anchor becomes an integer.",
        choices=("round", "truncate")),
)


def check_window(args: dict) -> None:
    crop = args.get("crop")
    if isinstance(crop, list) and len(crop) not in (1, 2, 3):
        raise ArgumentError(f"argument 'crop' must have 2 values (height, width), got {crop!r}")
    if isinstance(crop, list) and (args.get("crop_h") or args.get("crop_w")):
        raise ArgumentError("give either 'crop' or 'crop_h'/'crop_w', not both")


def hwc_view(images: np.ndarray, layout: str) -> tuple[np.ndarray, str]:
    """A (n, H, W, C) view of a dense chunk, and the input layout it came from."""
    layout = layout or {3: "HW", 4: "HWC", 5: "FHWC"}.get(images.ndim, "")
    if layout == "HW":
        return images[..., None], layout
    if layout == "CHW":
        return images.transpose(0, 2, 3, 1), layout
    if layout == "HWC":
        return images, layout
    if layout in ("FHWC", "FCHW"):
        n, f = images.shape[:2]
        flat = images.reshape((n * f, *images.shape[2:]))
        return (flat if layout == "FHWC" else flat.transpose(0, 2, 3, 1)), layout
    raise ValueError(f"unsupported layout {layout!r}; expected HWC, CHW, HW, FHWC or FCHW")


def per_frame(value: Any, n: int, frames: int) -> Any:
    """Repeats per-sample argument values for each frame of a sequence."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n and frames > 1:
        return np.repeat(value, frames, axis=0)
    return value


def _scalar_column(value: Any, n: int) -> np.ndarray:
    arr = np.asarray(value, np.float64)
    return np.broadcast_to(arr.reshape(-1)[:1] if arr.ndim == 0 else arr.reshape(-1), (n,)) \
        if arr.size in (1, n) else arr.reshape(n)


def _common(value: Any, what: str) -> float:
    arr = np.asarray(value, np.float64).reshape(-1)
    if (arr != arr[0]).any():
        raise ValueError(f"per-sample {what} differs within the chunk")
    return float(arr[0])


def window_size(args: dict, n: int, h: int, w: int) -> tuple[int, int]:
    crop = args.get("crop")
    if crop is not None:
        crop = np.asarray(crop, np.float64)
        if crop.ndim == 2:  # per-sample crop values
            ch, cw = _common(crop[:, -2], "crop"), _common(crop[:, -1], "crop")
        else:
            ch, cw = float(crop[-2]) if crop.size >= 2 else float(crop[0]), float(crop[-1])
    else:
        ch, cw = _common(args.get("crop_h", 0.0), "crop_h"), _common(args.get("crop_w", 0.0),
                                                                      "crop_w")
    # DALI truncates a fractional window size (crop=20.9 gives 20 rows; measured 2.4).
    ch_i = h if ch <= 0 else int(ch)
    cw_i = w if cw <= 0 else int(cw)
    return ch_i, cw_i


def resolve_windows(n: int, h: int, w: int, args: dict) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Pixel anchors (n,), (n,) and the window size for n images of h x w."""
    ch, cw = window_size(args, n, h, w)
    pos_y = _scalar_column(args.get("crop_pos_y", 0.5), n)
    pos_x = _scalar_column(args.get("crop_pos_x", 0.5), n)
    ay = K.window_anchor(pos_y, h, ch, args.get("rounding", "round"))
    ax = K.window_anchor(pos_x, w, cw, args.get("rounding", "round"))
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


def restore_layout(out_hwc: np.ndarray, layout: str, n: int, out_layout: str) -> np.ndarray:
    """Turns (n*F, h, w, C) results back into the requested sample layout."""
    frames = out_hwc.shape[0] // max(n, 1)
    target = out_layout or layout
    base = target.replace("F", "")
    arr = out_hwc
    if base == "HW":
        arr = arr[..., 0]
    elif base == "CHW":
        arr = arr.transpose(0, 3, 1, 2)
    if "F" in layout:
        arr = arr.reshape((n, frames, *arr.shape[1:]))
    return np.ascontiguousarray(arr)


# -- crop -------------------------------------------------------------------------------------

def crop_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    images = ins[0]
    hwc, layout = hwc_view(images, args["_in_layouts"][0])
    n = images.shape[0]
    frames = hwc.shape[0] // max(n, 1)
    args = {k: per_frame(v, n, frames) for k, v in args.items()}
    ay, ax, ch, cw = resolve_windows(*hwc.shape[:3], args)
    windows = K.crop(hwc, ay, ax, ch, cw, args["fill_values"],
                     allow_pad=args["out_of_bounds_policy"] != "error")
    return restore_layout(windows, layout, n, layout)


register(OpSchema(
    name="crop",
    renamed={"output_dtype": "dtype", "image_type": None},
    doc="Cuts a window out of each image; the window's position is relative (crop_pos_x/y).",
    inputs=(IMAGE,),
    args=(*WINDOW_ARGS, Arg("dtype", "dtype", None, "Accepted for portability: the output "
                                                    "keeps the input type.")),
    kernel=sample_kernel(crop_batch), batch_kernel=crop_batch, check=check_window,
    devices=("cpu", "gpu"), gpu_kernel=lazy("geometry", "crop"),
    examples=(
        Example(args={"crop": [2, 2]}, inputs=([np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
                                                np.arange(60, dtype=np.uint8).reshape(5, 4, 3)],)),
        Example(args={"crop": [6, 6], "out_of_bounds_policy": "pad", "fill_values": [7.0],
                      "crop_pos_x": 0.0},
                inputs=([np.ones((4, 4, 3), np.uint8)] * 2,)),
        Example(args={"crop": [2, 2], "crop_pos_x": 1.5}, inputs=([np.ones((4, 4, 3), np.uint8)],),
                raises=ArgumentError, match="'crop_pos_x' must be in [0, 1]"),
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
    kernel=sample_kernel(flip_batch), batch_kernel=flip_batch,
    devices=("cpu", "gpu"), gpu_kernel=lazy("geometry", "flip"),
    examples=(
        Example(inputs=([np.arange(12, dtype=np.uint8).reshape(2, 2, 3)] * 2,)),
        Example(args={"horizontal": 0, "vertical": 1},
                inputs=([np.arange(24, dtype=np.float32).reshape(2, 4, 3),
                         np.arange(36, dtype=np.float32).reshape(3, 4, 3)],)),
        Example(args={"horizontal": 2}, inputs=([np.ones((2, 2, 3), np.uint8)],),
                raises=ArgumentError, match="'horizontal' must be in [0, 1]"),
    ),
))
