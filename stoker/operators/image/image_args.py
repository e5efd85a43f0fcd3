"""Glue shared by the pixel operator families (color, filters, noise, erase, lut).

Per-sample argument values arrive stacked on axis 0 in a dense chunk, or as a sample's
scalar on the per-sample path; ``column`` turns either (or a constant) into one value per
sample. ``given`` tells a default from a value the user passed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types


def given(args: dict, name: str) -> bool:
    """Whether the user passed argument ``name`` (rather than getting its default).

    Some of DALI's documented defaults are not what DALI does when the argument is left
    out: contrast_center=0.5 pivots uint8 images at 128, noise.shot's factor=20 draws with
    12, erase's axes=[1, 0] gives way to axis_names. Kernels ask this to do the same.
    """
    return name in args.get("_given", ())


def column(value: Any, n: int, name: str = "argument") -> np.ndarray:
    """A constant or a per-sample argument as an (n,) float64 array."""
    arr = np.asarray(value, np.float64)
    if arr.size == 1:
        return np.full(n, float(arr.reshape(-1)[0]))
    if arr.ndim >= 1 and arr.shape[0] == n and arr[0].size == 1:
        return arr.reshape(n)
    raise ValueError(f"'{name}' must be one number per sample, got shape {arr.shape}")


def out_dtype(args: dict, in_dtype: np.dtype) -> np.dtype:
    """The 'dtype' argument as numpy, or the input's type when it is not given."""
    dt = args.get("dtype")
    return np.dtype(in_dtype) if dt is None else types.to_numpy(dt)


def dtype_rule(dtypes: list, args: dict) -> np.dtype:
    """Schema dtype function: 'dtype' when given, else the first input's type."""
    return out_dtype(args, dtypes[0])


def check_input_type(x: np.ndarray, allowed: tuple, what: str = "input") -> None:
    if x.dtype not in [np.dtype(a) for a in allowed]:
        names = ", ".join(np.dtype(a).name for a in allowed)
        raise TypeError(f"{what} type {x.dtype.name} is not supported; expected one of {names}")


def layout_of(args: dict, sample_ndim: int, default: dict[int, str]) -> str:
    """The input's layout, or a default guessed from the sample's number of dimensions."""
    layout = args["_in_layouts"][0] or default.get(sample_ndim, "")
    if layout and len(layout) != sample_ndim:
        raise ValueError(f"layout {layout!r} does not fit {sample_ndim}-D samples")
    return layout


CHANNEL_LAST = {3: "HWC", 4: "FHWC"}


def rgb_images(x: np.ndarray, args: dict) -> None:
    """Checks that a chunk holds channel-last 3-channel images (HWC, FHWC or DHWC)."""
    layout = layout_of(args, x.ndim - 1, CHANNEL_LAST)
    if layout not in ("HWC", "FHWC", "DHWC"):
        raise ValueError(f"expects channel-last images (HWC, FHWC or DHWC), got layout "
                         f"{layout!r}")
    if x.shape[-1] != 3:
        raise ValueError(f"expects 3 channels (RGB), got {x.shape[-1]}")
