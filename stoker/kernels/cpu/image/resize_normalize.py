"""Resize, crop, mirror, normalize and lay out one image in a single pass over the output.

The fused form of ``resize -> crop_mirror_normalize`` (also when a decoder or
random_resized_crop feeds the resize). It reuses ``resize.py``'s taps and two-pass driver:

- the crop keeps only some output rows and columns, so only their taps are kept and the
  resampler computes nothing outside the window (``Taps.window``);
- the mirror reverses the column taps (output column x takes the taps of column w-1-x);
- the normalization is the output stage of the last pass (``resample_loops.py``): each
  row is accumulated exactly as the resize accumulates it, rounded to uint8 as the resize
  stores it, and looked up in crop_mirror_normalize's per-channel table straight into
  the CHW (or HWC) output. No intermediate image is made.

So the result is bit for bit that of the unfused chain: the same taps, the same pass
order (the one ``resize_hwc`` picks for the whole resized image), the same accumulation
and rounding, the same table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.image import crop as crop_kernels
from stoker.kernels.cpu.image.resize import (
    Taps,
    first_pass_source,
    gather_pixels,
    scratch,
    two_passes,
    untranspose_planes,
)


class Normalize(NamedTuple):
    """The output stage: what crop_mirror_normalize does to each resized pixel.

    ``quantize``: the resized values are uint8 (rounded and saturated), else float32.
    With a ``table`` (C, 257) value v becomes table[k, v] (integer outputs: converted as
    crop_mirror_normalize converts); otherwise (v - mean[k]) * inv_std[k] + shift in
    float32. ``dtype`` is the stored type; others are converted after.
    """

    table: np.ndarray | None
    mean: np.ndarray
    inv_std: np.ndarray
    shift: float
    quantize: bool
    channels_first: bool
    dtype: np.dtype


def normalize_stage(mean: np.ndarray, std: np.ndarray, scale: float, shift: float,
                    channels_first: bool, dtype: np.dtype, resized_uint8: bool) -> Normalize:
    """The stage crop_mirror_normalize applies (``crop.crop_mirror_normalize``), given its
    arguments (mean and std (C,) for this sample) and whether the resized values are
    uint8 (else float32). Both of its paths compute ``crop.normalize_factors``' float32
    arithmetic; its integer outputs go through its table."""
    dtype = np.dtype(dtype)
    m, inv, sh = crop_kernels.normalize_factors(mean, std, scale, shift)
    if dtype.kind in "iu" and resized_uint8:
        table = crop_kernels.normalize_table(mean, std, scale, shift, np.zeros(len(mean)), dtype)
        return Normalize(table, m, inv, 0.0, True, channels_first, dtype)
    work = dtype if dtype in crop_kernels.NATIVE_TYPES else np.dtype(np.float32)
    return Normalize(None, m, inv, float(sh), resized_uint8, channels_first, work)


def resample_normalized(image: np.ndarray, taps: Taps, norm: Normalize) -> np.ndarray:
    """``image`` (H, W, C; uint8 when ``norm`` has a table, else float32) resampled with
    ``taps`` (usually ``resize_taps(...).window(...)``) and normalized: (C, h, w) when
    ``norm.channels_first``, else (h, w, C), of ``norm.dtype``."""
    c = image.shape[2]
    h, w = taps.shape
    out = buffers.empty((c, h, w) if norm.channels_first else (h, w, c), norm.dtype)
    if h * w * c == 0:
        return out
    if taps.nearest:  # a gather: pick the pixels, then normalize them as they are
        _normalize_image(gather_pixels(image, taps), norm, out)
        return out
    if norm.channels_first and norm.table is None and norm.dtype == np.float32:
        _resample_chw(image, taps, norm, out)
        return out
    resample_planes_normalized = loops("image.resample_loops").resample_planes_normalized

    planes = out if norm.channels_first else out.transpose(2, 0, 1)

    def last_pass(src: np.ndarray, idx: np.ndarray, weights: np.ndarray,
                  transposed: bool) -> np.ndarray:
        if not transposed:
            resample_planes_normalized(src, idx, weights, planes, norm.table, norm.mean,
                                       norm.inv_std, norm.shift, norm.quantize)
            return out
        # The pass makes output columns: into scratch planes, then transposed into place
        # (a plane transposes fast; column-wise stores into the output do not).
        planes_t = scratch(2, (c, w, h), norm.dtype)
        resample_planes_normalized(src, idx, weights, planes_t, norm.table, norm.mean,
                                   norm.inv_std, norm.shift, norm.quantize)
        return untranspose_planes(planes_t, out, norm.channels_first)

    return two_passes(image, taps, last_pass)


_NO_PLANES = np.empty((0, 0, 0), np.float32)


def _resample_chw(image: np.ndarray, taps: Taps, norm: Normalize, out: np.ndarray) -> None:
    """``two_passes`` with the normalizing last pass into float32 CHW ``out``, as one
    native call (``resample_loops.resample_normalized_chw``); the same passes in the same
    order, so the same values."""
    src, first, second = first_pass_source(image, taps)
    c, a, b = image.shape[2], len(first.idx), second.extent
    h, w = taps.shape
    planes_t = scratch(2, (c, w, h), np.float32) if taps.rows_first else _NO_PLANES
    loops("image.resample_loops").resample_normalized_chw(
        src, first.idx, first.weights, scratch(0, (c, a, b), np.float32),
        scratch(1, (c, b, a), np.float32), second.idx, second.weights, planes_t, out,
        norm.mean, norm.inv_std, np.float32(norm.shift), norm.quantize)


def _normalize_image(image: np.ndarray, norm: Normalize, out: np.ndarray) -> None:
    """``norm`` applied to a whole (h, w, C) image (the nearest-neighbour path)."""
    from stoker.kernels.cpu.image import fused

    c = image.shape[2]
    zero, no = np.zeros(1, np.int64), np.zeros(1, np.bool_)
    if norm.table is not None:
        loop = fused.crop_normalize_table_chw if norm.channels_first else \
            fused.crop_normalize_table_hwc
        loop(image[None], zero, zero, no, norm.table, out[None])
        return
    fused.crop_normalize_float(np.ascontiguousarray(image, np.float32)[None], zero, zero, no,
                               norm.mean[None], norm.inv_std[None], np.float32(norm.shift),
                               np.zeros(c, np.float32), out[None], norm.channels_first)
