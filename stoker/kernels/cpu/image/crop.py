"""Crop windows, mirroring and normalization on batches of HWC images with a sample axis.

``window_anchor`` turns DALI's relative crop positions into pixel anchors. ``crop`` and
``crop_mirror_normalize`` run one fused numba loop per chunk (``fused.py``); uint8 input
is normalized through a per-channel lookup table built once per argument set.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from stoker.kernels.cpu import buffers


def window_anchor(pos: np.ndarray, extent: int, crop: int | np.ndarray, rounding: str
                  ) -> np.ndarray:
    """Anchor of a ``crop``-long window at relative position ``pos`` in ``extent``.

    As DALI 2.4 does (measured): the position is a float32 argument, ``pos * (extent -
    crop)`` is taken exactly (in float64) and rounded half away from zero, or truncated. So
    0.7 of a 5-pixel slack is 3 (0.7 as float32 is 0.69999999), and a window 43 rows taller
    than the image, centred, starts 22 rows above it (-21.5 rounds to -22).
    """
    start = np.asarray(pos, np.float32).astype(np.float64) * (np.asarray(extent) -
                                                               np.asarray(crop))
    if rounding == "truncate":
        return np.trunc(start).astype(np.int64)
    return np.copysign(np.floor(np.abs(start) + 0.5), start).astype(np.int64)


def anchor_of(pos: float, extent: int, crop: int, rounding: str) -> int:
    """``window_anchor`` of one window (Python numbers: the same arithmetic, exactly)."""
    start = float(np.float32(pos)) * (extent - crop)
    if rounding == "truncate":
        return math.trunc(start)
    return int(math.copysign(math.floor(abs(start) + 0.5), start))


def trim_window(anchor: np.ndarray, size: int, extent: int) -> tuple[np.ndarray, int]:
    """Anchors and a common size for windows clipped to the image (trim_to_shape)."""
    lo = np.clip(anchor, 0, extent)
    hi = np.clip(anchor + size, 0, extent)
    sizes = hi - lo
    if len(sizes) and (sizes != sizes[0]).any():
        raise ValueError("trimmed windows differ in size within the chunk")
    return lo, int(sizes[0]) if len(sizes) else size


# DALI's words for a window that leaves the sample under out_of_bounds_policy="error"
# (programs and tests match them).
OUT_OF_BOUNDS = "Slice can't be placed out of bounds with current policy."


def _dims(values: Any) -> str:
    return "{" + " x ".join(str(int(v)) for v in values) + "}"


def out_of_bounds(shape: Any, anchor: Any, size: Any) -> ValueError:
    """The error of a window at ``anchor`` of ``size`` leaving a sample of ``shape``."""
    return OutOfBoundsError(f"{OUT_OF_BOUNDS} Got: input_shape={_dims(shape)}, slice_anchor="
                            f"{_dims(anchor)}, slice_shape={_dims(size)}; use "
                            "out_of_bounds_policy='pad' or 'trim_to_shape' to allow it")


class OutOfBoundsError(ValueError):
    """A window leaves its sample under out_of_bounds_policy='error' (a run-time error:
    the executor reports it as a SampleError, a RuntimeError, as DALI raises)."""


def check_inside(ay: np.ndarray, ax: np.ndarray, ch: int, cw: int, h: int, w: int) -> None:
    if not len(ay):
        return
    bad = (ay < 0) | (ax < 0) | (ay + ch > h) | (ax + cw > w)
    if bad.any():
        j = int(np.argmax(bad))
        raise out_of_bounds((h, w), (ay[j], ax[j]), (ch, cw))


def convert(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float values to ``dtype``: integers are rounded half away from zero (measured on
    DALI's CPU conversions: 2.5 -> 3, -2.5 -> -3) and saturated."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        rounded = np.copysign(np.floor(np.abs(values) + 0.5), values)
        return np.clip(rounded, info.min, info.max).astype(dtype)
    return values.astype(dtype)


def _mirror(mirror: np.ndarray | None, n: int) -> np.ndarray:
    if mirror is None:
        return np.zeros(n, np.bool_)
    return np.ascontiguousarray(np.broadcast_to(mirror, (n,)), dtype=np.bool_)


def fill_vector(fill: Any, c: int, dtype: np.dtype) -> np.ndarray:
    """The fill value of each of ``c`` channels (one value: all of them) as ``dtype``."""
    return convert(np.broadcast_to(np.asarray(fill, np.float64).reshape(-1), (c,)), dtype)


def crop(images: np.ndarray, ay: np.ndarray, ax: np.ndarray, ch: int, cw: int,
         fill: np.ndarray, allow_pad: bool, mirror: np.ndarray | None = None) -> np.ndarray:
    """(n, ch, cw, C) windows of (n, H, W, C) images; outside pixels are ``fill``."""
    n, h, w, c = images.shape
    if not allow_pad:
        check_inside(ay, ax, ch, cw, h, w)
    from stoker.kernels.cpu.image import fused  # numba loads on first use, not at import

    out = np.empty((n, ch, cw, c), images.dtype)
    fill = fill_vector(fill, c, images.dtype)
    if images.dtype.itemsize == 2 and images.dtype.kind == "f":  # numba has no float16:
        images, fill, dest = images.view(np.uint16), fill.view(np.uint16), out.view(np.uint16)
    else:  # the loop copies its bits
        dest = out
    fused.crop_windows(images, ay.astype(np.int64), ax.astype(np.int64), _mirror(mirror, n),
                       fill, dest)
    return out


@functools.lru_cache(maxsize=64)
def _table(mean: tuple, std: tuple, scale: float, shift: float, fill: tuple,
           dtype: np.dtype) -> np.ndarray:
    table = _make_table(np.array(mean), np.array(std), scale, shift, np.array(fill), dtype)
    table.flags.writeable = False
    return table


def normalize_table(mean: np.ndarray, std: np.ndarray, scale: float, shift: float,
                    fill: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """(C, 257) table: entry v is ``normalize_factors``' (v - mean) * (scale / std) + shift;
    entry 256 is the fill. Built once per argument set: pipelines call this per chunk."""
    return _table(tuple(np.asarray(mean, np.float64).tolist()),
                  tuple(np.asarray(std, np.float64).tolist()), float(scale), float(shift),
                  tuple(np.asarray(fill, np.float64).tolist()), np.dtype(dtype))


def normalize_factors(mean: np.ndarray, std: np.ndarray, scale: float, shift: float
                      ) -> tuple[np.ndarray, np.ndarray, np.float32]:
    """float32 (mean, scale / std, shift): crop_mirror_normalize computes in float32, as
    DALI's CPU operator does (measured on DALI 2.4: bit-identical results with the default
    scale and shift; a float64 computation matched 44% of the uint8 values)."""
    mean32 = np.ascontiguousarray(mean, np.float32)
    inv32 = np.ascontiguousarray(np.float32(scale) / np.asarray(std, np.float64), np.float32)
    return mean32, inv32, np.float32(shift)


def normalize_values(values: np.ndarray, mean32: np.ndarray, inv32: np.ndarray,
                     shift32: np.float32) -> np.ndarray:
    """float32 (values - mean) * inv + shift, with the numba loops' rounding
    (``fused.normalize_value``): the difference in float32, the product exact in float64."""
    diff = np.asarray(values, np.float32) - mean32
    return (diff.astype(np.float64) * inv32.astype(np.float64) + np.float64(shift32)
            ).astype(np.float32)


def _make_table(mean: np.ndarray, std: np.ndarray, scale: float, shift: float,
                fill: np.ndarray, dtype: np.dtype) -> np.ndarray:
    m, inv, sh = normalize_factors(mean, std, scale, shift)
    v = np.arange(256, dtype=np.float32)
    table = np.empty((len(mean), 257), np.float64)
    table[:, :256] = normalize_values(v[None, :], m[:, None], inv[:, None], sh)
    table[:, 256] = fill
    return convert(table, dtype)


# numba computes in these; other output types are converted after the loop.
NATIVE_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def table_type(dtype: np.dtype) -> np.dtype:
    """The type the uint8 lookup table of crop_mirror_normalize stores: the output type
    when it is an integer, a native float or float16 (each entry converted once, as each
    output would be: numpy's cast of float32 outputs took as long as the rest of a CIFAR
    batch), else float32 (converted after)."""
    return dtype if dtype.kind in "iu" or dtype in NATIVE_TYPES or dtype == np.float16 \
        else np.dtype(np.float32)


def crop_mirror_normalize(images: np.ndarray, ay: np.ndarray, ax: np.ndarray, ch: int, cw: int,
                          mirror: np.ndarray, mean: np.ndarray, std: np.ndarray, scale: float,
                          shift: float, fill: np.ndarray, allow_pad: bool,
                          channels_first: bool, dtype: np.dtype,
                          empty: Callable = buffers.empty) -> np.ndarray:
    """Crop, mirror, normalize and lay out (n, H, W, C) images in one pass.

    ``mean``/``std`` are (C,) for the whole chunk or (n, C) per sample. ``empty(shape,
    dtype)`` makes the output (the executor's rows of a batch block: ``ChunkContext.rows``).
    """
    n, h, w, c = images.shape
    if not allow_pad:
        check_inside(ay, ax, ch, cw, h, w)
    from stoker.kernels.cpu.image import fused  # numba loads on first use, not at import

    dtype = np.dtype(dtype)
    shape = (n, c, ch, cw) if channels_first else (n, ch, cw, c)
    ay, ax, mirror = ay.astype(np.int64), ax.astype(np.int64), _mirror(mirror, n)
    if images.dtype == np.uint8 and mean.ndim == 1 and std.ndim == 1:
        stored = table_type(dtype)
        table = normalize_table(mean, std, scale, shift, fill, stored)
        out = (empty if stored == dtype else buffers.empty)(shape, stored)
        loop = fused.crop_normalize_table_chw if channels_first else fused.crop_normalize_table_hwc
        if stored == np.float16:  # (numba has no float16: the loop copies its bits)
            loop(images, ay, ax, mirror, table.view(np.uint16), out.view(np.uint16))
        else:
            loop(images, ay, ax, mirror, table, out)
        return out if out.dtype == dtype else out.astype(dtype)
    mean2, inv, shift32 = normalize_factors(np.broadcast_to(mean, (n, c)),
                                            np.broadcast_to(std, (n, c)), scale, shift)
    work = dtype if dtype in NATIVE_TYPES else np.dtype(np.float32)
    out = (empty if work == dtype else buffers.empty)(shape, work)
    fused.crop_normalize_float(images, ay, ax, mirror, mean2, inv, shift32,
                               np.asarray(fill, np.float32), out, channels_first)
    return out if work == dtype else convert(out, dtype)
