"""``crop_mirror_normalize``: crop, mirror, normalize, convert and lay out in one pass.

This is the last operator of most image classification pipelines. For uint8 input the
normalization is a per-channel table lookup fused with the (mirrored) window gather.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.executor.context import ChunkContext
from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.image import crop as K
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.image import crop_planes as P
from stoker.operators.image.geometry import (
    IMAGE,
    WINDOW_ARGS,
    check_window,
    image_instance,
    sample_kernel,
)
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema


def _channels_vector(value: Any, channels: int, name: str) -> np.ndarray:
    arr = np.asarray(value, np.float64).reshape(-1)
    if arr.size == padded_channels(channels) and arr.size > channels:
        arr = arr[:channels]  # values for pad_output's channels too (DALI ignores them)
    if arr.size == channels:
        return arr
    if arr.size != 1:
        raise ValueError(f"argument '{name}' has {arr.size} values for {channels} channels")
    return np.full(channels, arr[0])


def _per_sample_vector(value: Any, n: int, channels: int, name: str) -> np.ndarray:
    """(C,) for a constant, (n, C) for per-sample values."""
    arr = np.asarray(value, np.float64)
    if isinstance(value, np.ndarray) and arr.ndim >= 1 and arr.shape[0] == n and \
            not isinstance(value, list):
        rows = arr.reshape(n, -1)
        if rows.shape[1] == padded_channels(channels) and rows.shape[1] > channels:
            rows = rows[:, :channels]
        if rows.shape[1] not in (1, channels):
            raise ValueError(f"argument '{name}' has {rows.shape[1]} values for {channels} "
                             "channels")
        return np.broadcast_to(rows, (n, channels))
    return _channels_vector(value, channels, name)


def padded_channels(c: int) -> int:
    """pad_output's channel count: the next power of two (DALI 2.4, measured: 3 -> 4,
    5 -> 8, 1 and 2 unchanged)."""
    return 1 << max(c - 1, 0).bit_length()


def _values_per_sample(value: Any) -> int:
    """How many values a mean/std argument gives each sample (per-sample values arrive
    stacked on axis 0 as an array; constants as lists)."""
    arr = np.asarray(value)
    if isinstance(value, np.ndarray):
        return int(np.prod(arr.shape[1:])) if arr.ndim >= 2 else 1
    return arr.size


def cmn_fill(args: dict, c: int) -> np.ndarray:
    """The fill value of each output channel (pad_output's added ones too), before the cast.

    As DALI 2.4 fills (measured): nothing is filled unless the policy is "pad" (added
    channels are 0); one value fills every channel; one per output channel fills each; one
    per input channel (with pad_output) leaves the added channels 0 when mean or std are
    given per channel, and is refused otherwise."""
    c_out = padded_channels(c) if args["pad_output"] else c
    if args["out_of_bounds_policy"] != "pad":
        return np.zeros(c_out)
    fill = np.asarray(args["fill_values"], np.float64).reshape(-1)
    per_channel = any(_values_per_sample(args[k]) > 1 for k in ("mean", "std"))
    if fill.size == c and c_out > c and per_channel:
        return np.concatenate([fill, np.zeros(c_out - c)])
    return P.fill_or_zero(fill, c_out, True)


def added_channel_values(args: dict, c: int, dtype: np.dtype) -> np.ndarray:
    """The values of the channels pad_output adds to ``c`` (``cmn_fill``), as ``dtype``."""
    return P.fill_cast(cmn_fill(args, c), dtype)[c:]


def add_channels(out: np.ndarray, values: np.ndarray, axis: int) -> np.ndarray:
    """``out`` with channels of constant ``values`` appended on ``axis`` (none: as is)."""
    if not len(values):
        return out
    shape = list(out.shape)
    c = shape[axis]
    shape[axis] += len(values)
    wide = np.empty(shape, out.dtype)
    lead = (slice(None),) * axis
    wide[(*lead, slice(0, c))] = out
    wide[(*lead, slice(c, None))] = values.astype(out.dtype).reshape(
        -1, *[1] * (out.ndim - axis - 1))
    return wide


def _folded_crop(images: np.ndarray, layout: str, args: dict) -> tuple:
    """The region this op crops from, the offsets and the raw fill of a crop folded into it.

    The compiler folds ``crop -> crop_mirror_normalize`` of images into one op
    (fusion.py): the window is then placed in the crop's window, taken from the
    original image at the crop's anchor, and pixels outside the original take the crop's
    fill value, normalized like any pixel.
    """
    pre = args.get("_pre_crop")
    if pre is None:
        return None, None, None
    first = P.cut(images, layout, pre)  # raises if the crop's window may not leave the image
    return (first.ch, first.cw), (first.ay, first.ax), pre["fill_values"]


def cmn_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    images = ins[0]
    n = images.shape[0]
    layout = P.sample_layout(args["_in_layouts"][0], images.ndim - 1)
    target = P.out_letters(layout, args["output_layout"])
    region, offsets, raw_fill = _folded_crop(images, layout, args)
    cut = P.cut(images, layout, args, region, offsets)
    c = cut.planes.shape[-1]
    flags = np.asarray(args["mirror"]).reshape(-1)
    mirror = cut.repeat(flags.astype(bool) if flags.size == n else np.full(n, bool(flags[0])))
    mean = cut.repeat(_per_sample_vector(args["mean"], n, c, "mean"))
    std = cut.repeat(_per_sample_vector(args["std"], n, c, "std"))
    fill = cmn_fill(args, c)
    dtype = types.to_numpy(args["dtype"])
    # Cast as DALI casts fill values; the kernels' own conversion then leaves them as they are.
    fill = P.fill_cast(fill, dtype).astype(np.float64)
    if raw_fill is not None:  # only fused with constant mean/std (see fusion.py)
        # The crop stored its fill in the image's type; normalize it as any such pixel.
        raw = P.fill_cast(P.fill_or_zero(raw_fill, c, True), images.dtype)
        fill[:c] = K.normalize_values(raw, *K.normalize_factors(mean, std, args["scale"],
                                                                args["shift"]))
    channels_first = target.replace("F", "").replace("D", "") == "CHW" and \
        target.index("C") == len(cut.lead)
    # The samples' rows of the batch's output block, when each is one image kept as it is.
    direct = isinstance(ctx, ChunkContext) and len(cut.planes) == ctx.n == n and \
        not cut.lead and len(fill) == c
    out = K.crop_mirror_normalize(cut.planes, cut.ay, cut.ax, cut.ch, cut.cw,
                                  mirror, mean, std, args["scale"], args["shift"], fill[:c],
                                  True, channels_first, dtype,
                                  (lambda shape, dt: ctx.rows(shape[1:], dt)) if direct
                                  else buffers.empty)
    fill_out = fill.astype(dtype)
    out = add_channels(out, fill_out[c:], out.ndim - (3 if channels_first else 1))
    # Planes of a depth window outside the volume hold the raw fill, as DALI writes it.
    return cut.finish(out, "CHW" if channels_first else "HWC", target, fill_out)


def _layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    try:
        return P.out_letters(src, args.get("output_layout")) if src else \
            (args.get("output_layout") or "")
    except ValueError:  # refused at build (geometry.image_instance), as DALI does at run
        return args.get("output_layout") or src


def _check(args: dict) -> None:
    check_window(args, "fn.crop_mirror_normalize")
    out = args.get("output_layout")
    if out is not None and (len(set(out)) != len(out) or not {"H", "W", "C"} <= set(out)
                            or set(out) - set("FDHWC")):
        raise ArgumentError(f"fn.crop_mirror_normalize: argument 'output_layout' must order "
                            f"H, W, C (and F, D of sequences and volumes), e.g. 'CHW' or "
                            f"'HWC', got {out!r}")
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
          Arg("dtype", "dtype", types.FLOAT, "Output type (FLOAT, FLOAT16, UINT8, INT8; "
              "stoker also gives the other numeric types)."),
          Arg("output_layout", "layout", "CHW", "Output layout: 'CHW' or 'HWC' (an order of "
              "the input's axes; a sequence's F may be left out)."),
          Arg("pad_output", "bool", False, "Pad the channels with zeros to the next power "
              "of two (3 -> 4).")),
    kernel=sample_kernel(cmn_batch), batch_kernel=cmn_batch, check=_check, layout=_layout,
    instance=image_instance,
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.geometry", "crop_mirror_normalize"),
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(
        Example(args={"crop": [3, 3], "mean": [1.0, 2.0, 3.0], "std": [2.0, 2.0, 2.0]},
                inputs=(_IMG,)),
        Example(args={"crop": [4, 4], "mirror": 1, "dtype": types.FLOAT16,
                      "output_layout": "HWC"}, inputs=(_IMG,)),
        Example(args={"crop": [6, 6], "out_of_bounds_policy": "pad", "fill_values": [9.0],
                      "crop_pos_y": 0.0}, inputs=(_IMG,)),
        Example(args={"crop": [2, 2], "output_layout": "HW"}, inputs=(_IMG,),
                raises=ArgumentError, match="'output_layout' must order H, W, C"),
        Example(args={"crop": [2, 2], "std": [0.0]}, inputs=(_IMG,),
                raises=ArgumentError, match="'std' must not contain 0"),
    ),
))
