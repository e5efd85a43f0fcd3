"""``crop_mirror_normalize``: crop, mirror, normalize, convert and lay out in one pass.

This is the last operator of most image classification pipelines. For uint8 input the
normalization is a per-channel table lookup fused with the (mirrored) window gather.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu import crop as K
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.geometry import (
    IMAGE,
    WINDOW_ARGS,
    check_window,
    hwc_view,
    per_frame,
    resolve_windows,
    sample_kernel,
)
from stoker.operators.registry import register
from stoker.operators.schema import Arg, Example, OpSchema


def _channels_vector(value: Any, channels: int, name: str) -> np.ndarray:
    arr = np.asarray(value, np.float64).reshape(-1)
    if arr.size not in (1, channels):
        raise ValueError(f"argument '{name}' has {arr.size} values for {channels} channels")
    return np.broadcast_to(arr, (channels,))


def _per_sample_vector(value: Any, n: int, channels: int, name: str) -> np.ndarray:
    """(C,) for a constant, (n, C) for per-sample values."""
    arr = np.asarray(value, np.float64)
    if isinstance(value, np.ndarray) and arr.ndim >= 1 and arr.shape[0] == n and \
            not isinstance(value, list):
        rows = arr.reshape(n, -1)
        if rows.shape[1] not in (1, channels):
            raise ValueError(f"argument '{name}' has {rows.shape[1]} values for {channels} "
                             "channels")
        return np.broadcast_to(rows, (n, channels))
    return _channels_vector(value, channels, name)


def _folded_crop(hwc: np.ndarray, args: dict) -> tuple[int, int, np.ndarray, np.ndarray, Any]:
    """The extent this op crops from, and the offset and raw fill of a crop folded into it.

    The compiler folds ``crop -> crop_mirror_normalize`` into one op (graph/fuse.py): the
    window is then taken from the original image, offset by the crop's anchor, and pixels
    outside the original take the crop's fill value, normalized like any pixel.
    """
    m, h, w = hwc.shape[:3]
    pre = args.get("_pre_crop")
    if pre is None:
        return h, w, np.zeros(m, np.int64), np.zeros(m, np.int64), None
    ay0, ax0, ch0, cw0 = resolve_windows(m, h, w, pre)
    if pre["out_of_bounds_policy"] == "error":
        K.check_inside(ay0, ax0, ch0, cw0, h, w)
    return ch0, cw0, ay0, ax0, pre["fill_values"]


def cmn_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    images = ins[0]
    n = images.shape[0]
    hwc, layout = hwc_view(images, args["_in_layouts"][0])
    frames = hwc.shape[0] // max(n, 1)
    args = {k: per_frame(v, n, frames) for k, v in args.items()}
    m, c = hwc.shape[0], hwc.shape[-1]
    h, w, off_y, off_x, raw_fill = _folded_crop(hwc, args)
    ay, ax, ch, cw = resolve_windows(m, h, w, args)
    policy = args["out_of_bounds_policy"]
    if policy == "error":
        K.check_inside(ay, ax, ch, cw, h, w)
    mirror = np.broadcast_to(np.asarray(args["mirror"]).reshape(-1), (m,)).astype(bool)
    mean = _per_sample_vector(args["mean"], m, c, "mean")
    std = _per_sample_vector(args["std"], m, c, "std")
    fill = _channels_vector(args["fill_values"], c, "fill_values")
    if raw_fill is not None:  # only fused with constant mean/std (see graph/fuse.py)
        # The crop stored its fill in the image's type; normalize it as any such pixel.
        raw = K.convert(_channels_vector(raw_fill, c, "fill_values"), hwc.dtype)
        fill = K.normalize_values(raw, *K.normalize_factors(mean, std, args["scale"],
                                                            args["shift"]))
    out_layout = args["output_layout"] or layout
    channels_first = out_layout.replace("F", "") == "CHW"
    out = K.crop_mirror_normalize(
        hwc, ay + off_y, ax + off_x, ch, cw, mirror, mean, std, args["scale"], args["shift"],
        fill, True, channels_first, types.to_numpy(args["dtype"]))
    if args["pad_output"] and c < 4:
        widths = [(0, 0)] * 4
        widths[1 if channels_first else 3] = (0, 4 - c)
        out = np.pad(out, widths)
    if "F" in layout:
        out = out.reshape((n, frames, *out.shape[1:]))
    elif layout == "HW":
        out = out[:, 0] if channels_first else out[..., 0]
    return out


def _layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    out = args.get("output_layout") or src
    if src.startswith("F") and not out.startswith("F"):
        out = "F" + out
    return out


def _check(args: dict) -> None:
    check_window(args)
    out = args.get("output_layout")
    if out is not None and out.replace("F", "") not in ("CHW", "HWC", ""):
        raise ArgumentError(f"fn.crop_mirror_normalize: argument 'output_layout' must be 'CHW' "
                            f"or 'HWC' (with a leading 'F' for sequences), got {out!r}")
    std = args.get("std")
    if isinstance(std, list) and any(s == 0 for s in std):
        raise ArgumentError("fn.crop_mirror_normalize: argument 'std' must not contain 0, "
                            f"got {std!r}")


_IMG = [np.arange(75, dtype=np.uint8).reshape(5, 5, 3), (np.arange(96) % 251).astype(np.uint8)
        .reshape(4, 8, 3)]

register(OpSchema(
    name="crop_mirror_normalize",
    renamed={"output_dtype": "dtype", "image_type": None},
    doc="Crops a window, mirrors it horizontally where 'mirror' is 1, normalizes "
        "((x - mean) / std * scale + shift), converts to 'dtype' and lays it out as "
        "'output_layout'.",
    inputs=(IMAGE,),
    args=(*WINDOW_ARGS,
          Arg("mirror", "int", 0, "1 mirrors the sample horizontally.", per_sample=True,
              range=(0, 1)),
          Arg("mean", "floats", [0.0], "Mean per channel (or one for all).", per_sample=True),
          Arg("std", "floats", [1.0], "Standard deviation per channel (or one for all).",
              per_sample=True),
          Arg("scale", "float", 1.0, "Multiplier applied after normalizing."),
          Arg("shift", "float", 0.0, "Added after scaling."),
          Arg("dtype", "dtype", types.FLOAT, "Output type (FLOAT, FLOAT16, UINT8, INT8, ...)."),
          Arg("output_layout", "layout", "CHW", "Output layout: 'CHW' or 'HWC'."),
          Arg("pad_output", "bool", False, "Pad the channels to 4 with zeros.")),
    kernel=sample_kernel(cmn_batch), batch_kernel=cmn_batch, check=_check, layout=_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("geometry", "crop_mirror_normalize"),
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(
        Example(args={"crop": [3, 3], "mean": [1.0, 2.0, 3.0], "std": [2.0, 2.0, 2.0]},
                inputs=(_IMG,)),
        Example(args={"crop": [4, 4], "mirror": 1, "dtype": types.FLOAT16,
                      "output_layout": "HWC"}, inputs=(_IMG,)),
        Example(args={"crop": [6, 6], "out_of_bounds_policy": "pad", "fill_values": [9.0],
                      "crop_pos_y": 0.0}, inputs=(_IMG,)),
        Example(args={"crop": [2, 2], "output_layout": "WHC"}, inputs=(_IMG,),
                raises=ArgumentError, match="'output_layout' must be 'CHW' or 'HWC'"),
        Example(args={"crop": [2, 2], "std": [0.0]}, inputs=(_IMG,),
                raises=ArgumentError, match="'std' must not contain 0"),
    ),
))
