"""Filters and distortions: gaussian_blur, jpeg_compression_distortion.

gaussian_blur blurs the spatial axes of the layout (D, H, W; with no layout every axis is
spatial, as in DALI), never frames or channels. 'sigma' and 'window_size' take one value
or one per spatial axis in layout order; either may be 0 (derived from the other, see
kernels/cpu/image/blur.py) but not both. The output keeps the input type or is FLOAT.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import blur as B
from stoker.kernels.cpu.image.distort import jpeg_roundtrip
from stoker.operators.image.geometry import sample_kernel
from stoker.operators.image.image_args import check_input_type, column, dtype_rule, out_dtype
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_SPATIAL = "DHW"


def spatial_axes(layout: str, ndim: int) -> list[int]:
    if not layout:
        if ndim > 3:
            raise ValueError(f"a {ndim}-D sample without a layout: give a layout naming its "
                             "spatial axes (D, H, W)")
        return list(range(ndim))
    axes = [i for i, ch in enumerate(layout) if ch in _SPATIAL]
    if not axes:
        raise ValueError(f"layout {layout!r} has no spatial axis (D, H or W) to blur")
    return axes


def _per_axis(value: Any, j: int, count: int, name: str) -> list[float]:
    """The sample's values of 'sigma' or 'window_size', one per spatial axis."""
    # Constants are lists; per-sample values come stacked, one row per sample.
    row = value[j] if isinstance(value, np.ndarray) else value
    arr = np.asarray(row, np.float64).reshape(-1)
    if arr.size == 1:
        arr = np.repeat(arr, count)
    if arr.size != count:
        raise ValueError(f"'{name}' has {arr.size} values for {count} spatial axes; give one "
                         f"value or {count}")
    return [float(v) for v in arr]


def _sample_taps(args: dict, j: int, count: int) -> list[np.ndarray]:
    sigmas = _per_axis(args["sigma"], j, count, "sigma")
    windows = _per_axis(args["window_size"], j, count, "window_size")
    taps = []
    for axis, (s, w) in enumerate(zip(sigmas, windows, strict=True)):
        if s < 0 or w < 0:
            raise ValueError(f"'sigma' and 'window_size' must not be negative, got sigma={s}, "
                             f"window_size={w}")
        if s == 0 and w == 0:
            raise ValueError(f"'sigma' and 'window_size' are both 0 for spatial axis {axis}; "
                             "give at least one")
        if w and int(w) % 2 == 0:
            raise ValueError(f"'window_size' must be odd, got {int(w)}")
        taps.append(B.gaussian_taps(s, int(w)))
    return taps


def blur_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    out_type = out_dtype(args, x.dtype)
    if out_type not in (x.dtype, np.dtype(np.float32)):
        raise ValueError(f"'dtype' must be the input type ({x.dtype.name}) or FLOAT, got "
                         f"{out_type.name}")
    axes = spatial_axes(args["_in_layouts"][0], x.ndim - 1)
    out = np.empty(x.shape, out_type)
    for j in range(x.shape[0]):
        out[j] = B.gaussian_blur(x[j], axes, _sample_taps(args, j, len(axes)), out_type)
    return out


def _blur_check(args: dict) -> None:
    for key in ("window_size",):
        value = args.get(key)
        if isinstance(value, list) and any(v % 2 == 0 and v != 0 for v in value):
            raise ArgumentError(f"fn.gaussian_blur: argument '{key}' must hold odd numbers "
                                f"(or 0), got {value!r}")


_RNG = np.random.default_rng(7)
_IMG = [_RNG.integers(0, 256, (9, 8, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (6, 11, 3), dtype=np.uint8)]

register(OpSchema(
    name="gaussian_blur",
    doc="Blurs images, sequences and volumes with a Gaussian kernel along their spatial "
        "axes (D, H, W); borders are mirrored.",
    inputs=(Input("input", "Data with a layout naming its spatial axes (HW, HWC, CHW, "
                           "DHWC, FHWC, ...)."),),
    args=(Arg("sigma", "floats", [0.0], "Standard deviation, one or one per spatial axis; "
              "0 derives it from window_size.", per_sample=True, range=(0, None)),
          Arg("window_size", "ints", [0], "Odd kernel size, one or one per spatial axis; 0 "
              "derives it from sigma.", per_sample=True, range=(0, None)),
          Arg("dtype", "dtype", None, "Output type: the input's (default) or FLOAT.")),
    kernel=sample_kernel(blur_batch), batch_kernel=blur_batch, dtype=dtype_rule,
    check=_blur_check,
    examples=(
        Example(args={"sigma": 1.0}, inputs=(_IMG,)),
        Example(args={"window_size": 5, "dtype": types.FLOAT}, inputs=([_IMG[0]] * 2,)),
        # Without a layout every axis is spatial (as in DALI): these 2-D samples are HW.
        Example(args={"sigma": [0.7, 2.0]}, inputs=([x[..., 0].astype(np.float32)
                                                     for x in _IMG],)),
        Example(args={"sigma": 1.0}, inputs=([x.astype(np.int32) for x in _IMG],)),
        Example(args={"window_size": 4}, inputs=(_IMG,), raises=ArgumentError,
                match="must hold odd numbers"),
        Example(args={"sigma": -1.0}, inputs=(_IMG,), raises=ArgumentError,
                match="'sigma' must be in"),
        Example(inputs=(_IMG,), raises=RuntimeError, match="are both 0"),
        Example(args={"sigma": 1.0, "dtype": types.INT16}, inputs=(_IMG,), raises=RuntimeError,
                match="must be the input type (uint8) or FLOAT"),
    ),
))


# -- jpeg_compression_distortion ---------------------------------------------------------------

def jpeg_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    check_input_type(x, (np.uint8,))
    if x.ndim not in (4, 5) or x.shape[-1] != 3:
        raise ValueError(f"expects uint8 HWC (or FHWC) images with 3 channels, got samples of "
                         f"shape {x.shape[1:]}")
    quality = column(args["quality"], x.shape[0], "quality")
    out = np.empty_like(x)
    for j in range(x.shape[0]):
        frames = x[j] if x.ndim == 5 else x[j][None]
        dst = out[j] if x.ndim == 5 else out[j][None]
        for f in range(frames.shape[0]):
            dst[f] = jpeg_roundtrip(frames[f], int(quality[j]))
    return out


register(OpSchema(
    name="jpeg_compression_distortion",
    doc="Adds JPEG compression artifacts: each image is encoded as JPEG at 'quality' and "
        "decoded again.",
    inputs=(Input("input", "uint8 RGB images, HWC (or FHWC sequences)."),),
    args=(Arg("quality", "int", 50, "JPEG quality, 1 (worst) to 100; values outside are "
              "clamped.", per_sample=True),),
    kernel=sample_kernel(jpeg_batch), batch_kernel=jpeg_batch,
    layout=image_layout,  # HWC/FHWC for an input without a layout, as in DALI
    examples=(
        Example(inputs=(_IMG,)),
        Example(args={"quality": 5}, inputs=([np.stack([_IMG[0]] * 2)],)),
        Example(inputs=([x[..., :1].copy() for x in _IMG],), raises=RuntimeError,
                match="with 3 channels"),
        Example(args={"quality": 2.5}, inputs=(_IMG,), raises=TypeError,
                match="'quality' must be an integer"),
    ),
))
