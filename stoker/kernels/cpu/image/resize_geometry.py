"""Resize geometry as DALI computes it: output sizes, source windows and filter taps.

- ``resize_output_size``: DALI's size rules (resize_x/y, size, resize_shorter/longer,
  mode, max_size), the input region of interest and the sub-pixel adjustment. Returns a
  ``ResizeGeometry``: output extent and the source window mapped onto it.
- ``pick_filter`` / ``axis_taps``: per output pixel, the source indices and weights of one
  axis. Source coordinates follow pixel centers: output pixel ``x`` samples the source at
  ``lo + (x + 0.5) * scale``. Filters are DALI's tabulated ones (triangle, gaussian,
  Catmull-Rom cubic, Lanczos-3; linear is the triangle of radius 1), linearly
  interpolated and normalized to sum 1; with antialias they widen by the shrink factor.

Pure functions of sizes and arguments, so a fusion rule (decode -> resize with a
DCT-scaled decode) can use them alone; ``resize.py`` resamples with them.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from stoker.kernels.cpu.compiled import loops

NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR, GAUSSIAN = 0, 1, 2, 3, 4, 5  # DALIInterpType values

# float32's largest value below 2**31, DALI's "no limit" for max_size.
_NO_LIMIT = float(np.nextafter(np.float32(2**31 - 1), np.float32(0)))


class ResizeGeometry(NamedTuple):
    """Output extent (out_h, out_w) and the source window [lo, hi) per axis (y, x).

    ``lo > hi`` on an axis means the window is read backwards (a flip).
    """

    out_h: int
    out_w: int
    lo_y: float
    lo_x: float
    hi_y: float
    hi_x: float


def _adjust_output_size(out: list[float], in_size: list[float], mode: str,
                        max_size: list[float] | None) -> list[float]:
    """DALI's rules: missing extents and the mode's aspect-ratio handling, then max_size."""
    nd = len(out)
    given = [out[d] != 0 and in_size[d] != 0 for d in range(nd)]
    scale = [out[d] / in_size[d] if in_size[d] else 1.0 for d in range(nd)]
    if not any(given):
        return list(in_size)
    out = list(out)
    limit = max_size if max_size is not None else [_NO_LIMIT] * nd
    if mode in ("default", "stretch"):
        if mode == "default":
            # Missing extents take the geometric mean of the given scales.
            prod = math.prod(abs(scale[d]) for d in range(nd) if given[d])
            avg = prod ** (1.0 / sum(given)) if sum(given) > 1 else prod
        for d in range(nd):
            if not given[d]:
                out[d] = in_size[d] * avg if mode == "default" else in_size[d]
        if max_size is not None:
            for d in range(nd):
                if limit[d] > 0 and abs(out[d]) > limit[d]:
                    out[d] = math.copysign(limit[d], out[d])
        return out
    # not_larger / not_smaller: one scale for all axes, the smallest / largest given one,
    # computed in float32 as DALI does, then capped by max_size.
    final = None
    for d in range(nd):
        if given[d]:
            s = float(np.float32(abs(scale[d])))
            if final is None or (mode == "not_smaller" and s > final) or \
                    (mode == "not_larger" and s < final):
                final = s
    assert final is not None
    if max_size is not None:
        for d in range(nd):
            if limit[d] > 0:
                final = min(final, limit[d] / in_size[d])
    for d in range(nd):
        if not given[d] or abs(scale[d]) != final:
            out[d] = in_size[d] * math.copysign(final, scale[d])
    return out


def resize_output_size(in_hw: tuple[int, int], *, size: list[float] | None = None,
                       resize_x: float = 0.0, resize_y: float = 0.0,
                       resize_shorter: float = 0.0, resize_longer: float = 0.0,
                       max_size: list[float] | None = None, mode: str = "default",
                       roi_start: list[float] | None = None,
                       roi_end: list[float] | None = None, roi_relative: bool = False,
                       subpixel_scale: bool = True) -> ResizeGeometry:
    """Output size and source window of resizing an image of ``in_hw`` = (height, width).

    Exactly one way of giving the size is used: ``size`` (height, width; 0 = unspecified),
    ``resize_x``/``resize_y``, ``resize_shorter`` (= mode "not_smaller") or
    ``resize_longer`` (= "not_larger"). Extents are rounded half away from zero; with
    ``subpixel_scale`` the source window is widened about its center so the scale stays
    that of the fractional size. A negative size or a reversed ROI flips that axis.
    """
    h, w = int(in_hw[0]), int(in_hw[1])
    if resize_shorter:
        requested, mode = [float(resize_shorter)] * 2, "not_smaller"
    elif resize_longer:
        requested, mode = [float(resize_longer)] * 2, "not_larger"
    elif size is not None:
        sz = [float(v) for v in np.asarray(size, np.float64).reshape(-1)]
        requested = sz * 2 if len(sz) == 1 else sz[-2:]
    else:
        requested = [float(resize_y), float(resize_x)]
    if max_size is not None:
        ms = [float(v) for v in np.asarray(max_size, np.float64).reshape(-1)]
        max_size = ms * 2 if len(ms) == 1 else ms[-2:]

    lo, hi = [0.0, 0.0], [float(h), float(w)]
    if roi_start is not None and roi_end is not None:
        rs = [float(v) for v in np.asarray(roi_start, np.float64).reshape(-1)][-2:]
        re = [float(v) for v in np.asarray(roi_end, np.float64).reshape(-1)][-2:]
        for d, extent in enumerate((h, w)):
            if extent <= 0:
                continue
            a, b = (rs[d] * extent, re[d] * extent) if roi_relative else (rs[d], re[d])
            if abs(b - a) < 1e-3:  # a degenerate ROI samples one spot instead of failing
                off = 0.5e-3 if a <= b else -0.5e-3
                a, b = a - off, b + off
            lo[d], hi[d] = a, b
    in_size = []
    for d in range(2):
        if hi[d] < lo[d]:  # reversed ROI: read it forwards, flip through the size's sign
            lo[d], hi[d] = hi[d], lo[d]
            requested[d] = -requested[d]
        in_size.append(hi[d] - lo[d])
    out = _adjust_output_size(requested, in_size, mode, max_size)
    for d in range(2):
        if lo[d] == hi[d] and out[d] != 0:
            raise ValueError("cannot produce a non-empty output from an empty input")
    minimum = 0 if h * w == 0 else 1
    dst = [0, 0]
    for d in range(2):
        dst[d], lo[d], hi[d] = output_extent(out[d], lo[d], hi[d], minimum, subpixel_scale)
    return ResizeGeometry(dst[0], dst[1], lo[0], lo[1], hi[0], hi[1])


def output_extent(request: float, lo: float, hi: float, minimum: int,
                  subpixel_scale: bool) -> tuple[int, float, float]:
    """One axis of ``resize_output_size``'s result: the extent the (fractional) requested
    size rounds to, and the source window [lo, hi) read for it (compiled too, by the
    decode-resize call: ``decode_resize_loop``)."""
    req = float(np.float32(request))  # DALI keeps the requested size as a float32
    dst = max(minimum, int(math.floor(abs(req) + 0.5)))
    if req < 0:
        lo, hi = hi, lo
    if subpixel_scale and req != 0 and dst != abs(req):
        factor = min(max(dst / abs(req), -10.0), 10.0)
        center = (lo + hi) * 0.5
        lo = center + (lo - center) * factor
        hi = center + (hi - center) * factor
    return dst, lo, hi


def shorter_request(in_h: int, in_w: int, shorter: float) -> tuple[float, float]:
    """The requested (fractional) extents of a positive resize_shorter alone (no max_size,
    no ROI) on a non-empty input, as ``_adjust_output_size`` gets them: the larger of the
    two scales, in float32, for both axes (compiled by the decode-resize call)."""
    scale_y, scale_x = shorter / in_h, shorter / in_w
    final = max(float(np.float32(scale_y)), float(np.float32(scale_x)))
    return (shorter if scale_y == final else in_h * final,
            shorter if scale_x == final else in_w * final)


# -- filters --------------------------------------------------------------------------------


class Filter(NamedTuple):
    """A tabulated filter: ``table`` spans ``width`` source pixels, centered."""

    kind: int
    table: np.ndarray  # float32 samples, linearly interpolated between
    width: float  # in source pixels

    @property
    def support(self) -> int:
        return max(1, math.ceil(self.width - 1e-6)) if self.kind != NN else 1


@functools.lru_cache(maxsize=8)
def filter_table(kind: int) -> np.ndarray:
    if kind in (LINEAR, TRIANGULAR):
        t = np.array([0.0, 1.0, 0.0])
    elif kind == GAUSSIAN:
        x = np.linspace(-2.0, 2.0, 65)
        t = np.exp(-x * x)
    elif kind == CUBIC:  # Catmull-Rom (Keys, a = -0.5) over [-2, 2]
        x = np.abs(np.linspace(-2.0, 2.0, 129))
        t = np.where(x <= 1, 1.5 * x**3 - 2.5 * x**2 + 1,
                     np.where(x < 2, -0.5 * x**3 + 2.5 * x**2 - 4 * x + 2, 0.0))
    elif kind == LANCZOS3:
        x = np.linspace(-3.0, 3.0, 193)
        t = np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    else:
        raise ValueError(f"unknown interpolation type {kind}")
    out = t.astype(np.float32)
    out.flags.writeable = False
    return out


# Width in source pixels of each filter at scale 1 (DALI's supports).
BASE_WIDTH = {LINEAR: 2.0, TRIANGULAR: 2.0, GAUSSIAN: 2.0, CUBIC: 4.0, LANCZOS3: 6.0}


def pick_filter(min_filter: int, mag_filter: int, in_extent: float, out_extent: int,
                antialias: bool = True) -> Filter:
    """The filter for one axis: ``min_filter`` when shrinking, else ``mag_filter``.

    With ``antialias`` a shrinking filter is widened by the shrink factor (a triangle of
    radius in/out for linear, and so on); without it every filter keeps its width.
    """
    kind = int(min_filter) if out_extent < in_extent else int(mag_filter)
    if kind == NN:
        return Filter(NN, np.ones(1, np.float32), 1.0)
    if kind not in BASE_WIDTH:
        raise ValueError(f"unknown interpolation type {kind}")
    width = BASE_WIDTH[kind]
    if antialias and out_extent and in_extent > out_extent:
        width *= in_extent / out_extent
    table_kind = TRIANGULAR if kind == LINEAR else kind
    return Filter(table_kind, filter_table(table_kind), max(1.0, width))


def axis_taps(out_size: int, lo: float, hi: float, flt: Filter, in_extent: int,
              accumulate: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(source indices, weights), both (out_size, support), for one axis.

    Output pixel ``i`` samples the source at ``lo + (i + 0.5) * scale``; indices are
    clamped to [0, in_extent), so edge pixels repeat. Nearest neighbour has one tap at
    ``floor(position)``; DALI steps rows by adding the scale in float32 (``accumulate``)
    and computes columns directly, and the rounding of both is reproduced.
    """
    L = loops("image.resample_loops")

    if flt.kind == NN:
        return L.nearest_taps(out_size, np.float32(lo), np.float32((hi - lo) / out_size),
                              in_extent, accumulate)
    return L.filter_taps(*filter_args(out_size, lo, hi, flt), in_extent)


def filter_args(out_size: int, lo: float, hi: float, flt: Filter) -> tuple:
    """The leading arguments of ``filter_taps`` and ``window_filter_taps`` (out_size, lo,
    scale, table, step, anchor, support), in the float32 the taps are computed in."""
    return (out_size, np.float32(lo), np.float32((hi - lo) / out_size), flt.table,
            np.float32((len(flt.table) - 1) / flt.width), np.float32(flt.width * 0.5),
            flt.support)
