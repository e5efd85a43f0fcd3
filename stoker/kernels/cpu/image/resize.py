"""Image resizing as DALI does it: output-size rules, filters and separable resampling.

Three pure steps, so a fusion rule (e.g. decode -> resize with a DCT-scaled decode) can
reuse the first one alone:

- ``resize_output_size``: DALI's size rules (resize_x/y, size, resize_shorter/longer,
  mode, max_size), the input region of interest and the sub-pixel adjustment. Returns a
  ``ResizeGeometry``: output extent and the source window mapped onto it.
- ``pick_filter`` / ``axis_taps``: per output pixel, the source indices and weights of one
  axis. Source coordinates follow pixel centers: output pixel ``x`` samples the source at
  ``lo + (x + 0.5) * scale``. Filters are DALI's tabulated ones (triangle, gaussian,
  Catmull-Rom cubic, Lanczos-3; linear is the triangle of radius 1), linearly
  interpolated and normalized to sum 1; with antialias they widen by the shrink factor.
- ``resize_hwc``: two 1-D passes (``resample_loops.py``, numba) with a float32
  intermediate held as channel planes, each pass filtering whole rows, with OpenCV
  transposes of the planes between them; integer outputs are rounded half up and
  saturated. Nearest neighbour picks the pixel holding
  the sample point, with DALI's float32 rounding.

``resize_taps`` gives both axes' taps (``Taps``; remembered per distinct axis, as image
and window sizes repeat) and ``two_passes`` runs the passes with a caller's last pass:
``resize_normalize.py`` keeps only a window of the taps (a crop, reversed for a mirror)
and normalizes in the last pass, for the fused resize -> crop_mirror_normalize.

Measured against DALI 2.4 on natural images: identical sizes, pixel values equal but for
rare 1-level rounding flips (tests/dali/test_geometry_vs_dali.py).
"""

from __future__ import annotations

import functools
import math
import random
import threading
from typing import Any, NamedTuple

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.tensor.tensor import rows_contiguous

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
    return L.filter_taps(*_filter_args(out_size, lo, hi, flt), in_extent)


def _filter_args(out_size: int, lo: float, hi: float, flt: Filter) -> tuple:
    """The leading arguments of ``filter_taps`` and ``window_filter_taps`` (out_size, lo,
    scale, table, step, anchor, support), in the float32 the taps are computed in."""
    return (out_size, np.float32(lo), np.float32((hi - lo) / out_size), flt.table,
            np.float32((len(flt.table) - 1) / flt.width), np.float32(flt.width * 0.5),
            flt.support)


# -- the resampling driver -------------------------------------------------------------------


_local = threading.local()


def scratch(slot: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A per-thread reusable buffer: fresh allocations of intermediates this size go
    through mmap and page faults, which cost as much as the filtering itself."""
    try:
        slots = _local.slots
    except AttributeError:
        slots = _local.slots = {}
    buf = slots.get(slot)
    if buf is not None:
        try:
            return np.ndarray(shape, dtype, buf)
        except TypeError:  # the buffer is too small: a larger one replaces it
            pass
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    buf = slots[slot] = np.empty(max(nbytes, 1 << 16), np.uint8)
    return np.ndarray(shape, dtype, buf)


def resize_hwc(image: np.ndarray, geom: ResizeGeometry, min_filter: int = LINEAR,
               mag_filter: int = LINEAR, antialias: bool = True,
               out_dtype: np.dtype | None = None) -> np.ndarray:
    """Resamples one (H, W, C) image into (geom.out_h, geom.out_w, C) of ``out_dtype``."""
    out_dtype = np.dtype(out_dtype or image.dtype)
    if np.dtype(np.float16) in (out_dtype, image.dtype):  # numba has no float16: go via float32
        done = resize_hwc(image.astype(np.float32), geom, min_filter, mag_filter, antialias,
                          np.dtype(np.float32))
        return done.astype(out_dtype)
    if geom.out_h * geom.out_w * image.shape[2] == 0:
        return np.empty((geom.out_h, geom.out_w, image.shape[2]), out_dtype)
    taps = resize_taps(image.shape, geom, min_filter, mag_filter, antialias)
    return resample_taps(image, taps, out_dtype)


class AxisTaps(NamedTuple):
    """One axis's taps: per output pixel, source indices (relative to ``start``) and
    weights, both (n, support); the taps read source pixels [start, start + extent).
    Read-only and shared: computed once per distinct axis (``_axis``)."""

    idx: np.ndarray
    weights: np.ndarray
    start: int
    extent: int
    key: tuple | None  # _axis's arguments when these are its taps: windows are remembered

    def window(self, first: int, count: int, reverse: bool = False) -> AxisTaps:
        """The taps of output pixels [first, first + count) only, in reverse if asked."""
        if first == 0 and count == len(self.idx) and not reverse:
            return self
        if self.key is None:  # a window of a window: not remembered
            return _cut(self, first, count, reverse)
        return _REMEMBERED.get((self.key, first, count, reverse),
                               lambda: _cut(self, first, count, reverse))

    def shifted(self, d: int) -> AxisTaps:
        """The same taps on a crop of the source that starts at ``d`` (no longer _axis's
        own, so not remembered)."""
        return AxisTaps(self.idx, self.weights, self.start - d, self.extent, None)


class Taps(NamedTuple):
    """Per output row and column: the source pixels that make it and their weights."""

    y: AxisTaps
    x: AxisTaps
    nearest: bool  # nearest neighbour on both axes: a gather, no filtering
    rows_first: bool  # the cheaper pass order for the whole output (kept by window())

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.y.idx), len(self.x.idx)

    def window(self, y: int, x: int, h: int, w: int, mirror: bool = False) -> Taps:
        """The taps of output rows [y, y+h) and columns [x, x+w) only, the columns in
        reverse order when ``mirror``: resampling them gives exactly that window of the
        whole output (mirrored)."""
        return Taps(self.y.window(y, h), self.x.window(x, w, mirror), self.nearest,
                    self.rows_first)

    def source_region(self) -> tuple[int, int, int, int]:
        """(y, x, h, w): the source pixels the taps read."""
        return self.y.start, self.x.start, self.y.extent, self.x.extent

    def shifted(self, dy: int, dx: int) -> Taps:
        """The same taps on a crop of the source that starts at (dy, dx)."""
        return Taps(self.y.shifted(dy), self.x.shifted(dx), self.nearest, self.rows_first)


def resize_taps(shape: tuple[int, ...], geom: ResizeGeometry, min_filter: int = LINEAR,
                mag_filter: int = LINEAR, antialias: bool = True) -> Taps:
    """The taps of resizing an image of ``shape`` (H, W, ...) to ``geom``, and the pass
    order ``resize_hwc`` uses."""
    h, w = shape[0], shape[1]
    if h == 0 or w == 0:
        raise ValueError("cannot produce a non-empty output from an empty input")
    oh, ow = geom.out_h, geom.out_w
    fy, fx = _filters(geom, min_filter, mag_filter, antialias)
    ty = _axis(oh, geom.lo_y, geom.hi_y, fy.kind, fy.width, h, True)
    tx = _axis(ow, geom.lo_x, geom.hi_x, fx.kind, fx.width, w, False)
    rows_first = _rows_first(ty.extent, tx.extent, oh, ow, ty.idx.shape[1], tx.idx.shape[1])
    return Taps(ty, tx, fy.kind == NN and fx.kind == NN, rows_first)


def _filters(geom: ResizeGeometry, min_filter: int, mag_filter: int,
             antialias: bool) -> tuple[Filter, Filter]:
    """The filters of the rows and of the columns (``pick_filter``)."""
    return (pick_filter(min_filter, mag_filter, abs(geom.hi_y - geom.lo_y), geom.out_h,
                        antialias),
            pick_filter(min_filter, mag_filter, abs(geom.hi_x - geom.lo_x), geom.out_w,
                        antialias))


def window_taps(shape: tuple[int, ...], geom: ResizeGeometry, min_filter: int, mag_filter: int,
                antialias: bool, y: int, x: int, h: int, w: int, mirror: bool = False) -> Taps:
    """``resize_taps(...).window(y, x, h, w, mirror)``, the same taps, computed for the
    window's rows and columns alone and not remembered: for geometries that rarely come
    back (a random crop's fractional window), where the memory would only churn (it was
    42% of the GIL-holding time of the unfused train pipeline)."""
    oh, ow = geom.out_h, geom.out_w
    fy, fx = _filters(geom, min_filter, mag_filter, antialias)
    if shape[0] == 0 or shape[1] == 0 or h <= 0 or w <= 0 or NN in (fy.kind, fx.kind):
        return resize_taps(shape, geom, min_filter, mag_filter, antialias).window(
            y, x, h, w, mirror)
    ty, whole_y = _window_axis(oh, geom.lo_y, geom.hi_y, fy, shape[0], y, h, False)
    tx, whole_x = _window_axis(ow, geom.lo_x, geom.hi_x, fx, shape[1], x, w, mirror)
    return Taps(ty, tx, False, _rows_first(whole_y, whole_x, oh, ow, fy.support, fx.support))


def _window_axis(out_size: int, lo: float, hi: float, flt: Filter, extent: int, first: int,
                 count: int, reverse: bool) -> tuple[AxisTaps, int]:
    """One axis of ``window_taps``, and the extent of the whole axis's taps."""
    idx, weights, start, span, whole = loops("image.resample_loops").window_filter_taps(
        *_filter_args(out_size, lo, hi, flt), extent, first, count, reverse)
    # Read-only as every AxisTaps (and so of the one type the compiled passes were made for)
    idx.flags.writeable = False
    weights.flags.writeable = False
    return AxisTaps(idx, weights, int(start), int(span), None), int(whole)


class _Remembered:
    """A memory of axis taps, bounded in bytes (taps of large outputs with wide filters are
    big, and sizes rarely repeat for those). When full, a random entry makes room: a
    dataset read in the same order every epoch (validation) visits more sizes than fit,
    and least-recently-used eviction would then throw out each entry just before its next
    use (no hit at all); random eviction keeps a share of them."""

    def __init__(self, budget: int, seed: int = 0):
        self.budget = budget
        self.used = 0
        self.items: dict[tuple, AxisTaps] = {}
        self.keys: list[tuple] = []  # the same keys, for picking one at random
        self.lock = threading.Lock()
        self.random = random.Random(seed)

    def get(self, key: tuple, make: Any) -> AxisTaps:
        found = self.items.get(key)
        if found is not None:
            return found
        made = make()
        with self.lock:
            if key not in self.items:
                self.items[key] = made
                self.keys.append(key)
                self.used += _nbytes(made)
                while self.used > self.budget and len(self.keys) > 1:
                    i = self.random.randrange(len(self.keys) - 1)  # not the one just made
                    self.keys[i], self.keys[-2] = self.keys[-2], self.keys[i]
                    self.used -= _nbytes(self.items.pop(self.keys.pop(-2)))
        return made


def _nbytes(taps: AxisTaps) -> int:
    return taps.idx.nbytes + taps.weights.nbytes


# Image and window sizes repeat (a random crop's height is one of a few hundred), and
# computing taps in Python costs as much as a tenth of resampling a 224x224 image. 8 MiB
# is full within a few epochs, so resident memory stays flat after them (32 MiB was still
# filling after 20 epochs of 256 images: +6% RSS; benchmarks/memory_epochs.py). Indices
# are int32 (a third less memory than intp). Hits on the ResNet-50 pipelines over 256
# images, epochs 3-6: train 83%, val 100% (with intp indices: 77% and 71%; with intp and
# least-recently-used eviction: 80% and 42%, as val's sizes come round in order).
_REMEMBERED = _Remembered(8 << 20)


def _axis(out_size: int, lo: float, hi: float, kind: int, width: float, extent: int,
          accumulate: bool) -> AxisTaps:
    key = (out_size, lo, hi, kind, width, extent, accumulate)

    def make() -> AxisTaps:
        table = np.ones(1, np.float32) if kind == NN else filter_table(kind)
        idx, weights = axis_taps(out_size, lo, hi, Filter(kind, table, width), extent,
                                 accumulate)
        return _relative(idx, weights, key)

    return _REMEMBERED.get(key, make)


def _cut(whole: AxisTaps, first: int, count: int, reverse: bool) -> AxisTaps:
    idx = whole.idx[first:first + count] + whole.start
    weights = whole.weights[first:first + count]
    if reverse:
        idx, weights = idx[::-1], weights[::-1]
    return _relative(np.ascontiguousarray(idx), np.ascontiguousarray(weights), None)


def _relative(idx: np.ndarray, weights: np.ndarray, key: tuple | None) -> AxisTaps:
    lo, hi = _span(idx)
    idx = idx - lo
    idx.flags.writeable = False
    weights.flags.writeable = False
    return AxisTaps(idx, weights, lo, hi - lo, key)


def _span(idx: np.ndarray) -> tuple[int, int]:
    """[min, max + 1) of an axis's tap indices, read at the corners: indices grow along a
    row of taps, and the rows' first indices run one way (either, after a flip)."""
    first, last = idx[0], idx[-1]
    return int(min(first[0], last[0])), int(max(first[-1], last[-1])) + 1


def resample_taps(image: np.ndarray, taps: Taps, out_dtype: np.dtype) -> np.ndarray:
    """taps.shape + (C,) of ``out_dtype``: ``image`` resampled with ``taps``."""
    (oh, ow), c = taps.shape, image.shape[2]
    if taps.nearest:
        return gather_pixels(image, taps).astype(out_dtype, copy=False)
    resample_planes = loops("image.resample_loops").resample_planes

    def last_pass(planes: np.ndarray, idx: np.ndarray, weights: np.ndarray,
                  transposed: bool) -> np.ndarray:
        if not transposed:
            out = buffers.empty((oh, ow, c), out_dtype)
            resample_planes(planes, idx, weights, out)
            return out
        out_t = scratch(2, (ow, oh, c), out_dtype)
        resample_planes(planes, idx, weights, out_t)
        return transpose_hw(out_t)

    return two_passes(image, taps, last_pass)


def two_passes(image: np.ndarray, taps: Taps, last_pass: Any) -> Any:
    """The first 1-D pass into float32 channel planes, each transposed for the second;
    then ``last_pass(planes, indices, weights, transposed)`` filters the planes (C, A, B)
    along A (``transposed``: A runs over output columns, B over output rows). Only the
    source region the taps reach is read (a crop window's, for ROI resizes)."""
    resample_to_planes = loops("image.resample_loops").resample_to_planes

    src, first, second = first_pass_source(image, taps)
    c, a, b = image.shape[2], len(first.idx), second.extent
    tmp = scratch(0, (c, a, b), np.float32)
    resample_to_planes(src, first.idx, first.weights, tmp)
    return last_pass(transpose_planes(tmp, scratch(1, (c, b, a), np.float32)), second.idx,
                     second.weights, taps.rows_first)


def first_pass_source(image: np.ndarray, taps: Taps) -> tuple[np.ndarray, AxisTaps, AxisTaps]:
    """(source, first axis, second axis) of ``two_passes``: the first pass filters the
    source's rows with the first axis's taps. The source is the region the taps read,
    transposed when columns go first (``taps.rows_first`` False); its rows are each one
    block of memory, in order (a region that is not is copied, into scratch slot 3)."""
    ty, tx = taps.y, taps.x
    region = image[ty.start:ty.start + ty.extent, tx.start:tx.start + tx.extent]
    if not taps.rows_first:
        return (transpose_hw(region, scratch(3, (tx.extent, ty.extent, image.shape[2]),
                                             image.dtype)), tx, ty)
    if not rows_contiguous(region) or region.strides[0] < region.shape[1] * region.strides[1]:
        region = _copy_into(region, scratch(3, region.shape, region.dtype))
    return region, ty, tx


def _copy_into(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    dst[...] = src
    return dst


_REMAP_TYPES = {np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64)}


def gather_pixels(image: np.ndarray, taps: Taps) -> np.ndarray:
    """The one source pixel of each output pixel (nearest neighbour taps): OpenCV's remap
    with integer-valued maps where it can."""
    rows = taps.y.idx[:, 0] + taps.y.start
    cols = taps.x.idx[:, 0] + taps.x.start
    c = image.shape[2]
    if image.dtype in _REMAP_TYPES and c <= 4 and max(image.shape[:2]) < 1 << 24:
        import cv2

        mx = np.empty((len(rows), len(cols)), np.float32)
        mx[:] = cols.astype(np.float32)[None, :]
        my = np.empty_like(mx)
        my[:] = rows.astype(np.float32)[:, None]
        out = cv2.remap(np.ascontiguousarray(image), mx, my, cv2.INTER_NEAREST)
        return out.reshape(len(rows), len(cols), c)
    return np.take(np.take(image, rows, axis=0), cols, axis=1)


def _rows_first(h: int, w: int, oh: int, ow: int, sup_y: int, sup_x: int) -> bool:
    """Whether filtering rows (vertically) first is cheaper: work of both passes plus the
    transposed bytes; the other order transposes the source instead of the output."""
    rows_first = oh * w * sup_y + oh * ow * sup_x + oh * w * 4 + oh * ow
    cols_first = h * ow * sup_x + oh * ow * sup_y + h * w + h * ow * 4
    return rows_first <= cols_first


# OpenCV transposes these element sizes (channels x item size) with its blocked copy.
_CV_TYPES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32,
                                   np.float32, np.float64)}


def transpose_hw(image: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A C-contiguous (W, H, C) copy of an (H, W, C) image (into ``out`` if given)."""
    h, w, c = image.shape
    if out is None:
        out = np.empty((w, h, c), image.dtype)
    if image.dtype in _CV_TYPES and c <= 4 and image.dtype.itemsize * c <= 32 and h * w:
        import cv2

        src = image if rows_contiguous(image) else np.ascontiguousarray(image)
        cv2.transpose(src if c > 1 else src[..., 0], out if c > 1 else out[..., 0])
    else:
        out[...] = image.transpose(1, 0, 2)
    return out


def transpose_planes(planes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """(C, B, A) ``out`` = each (A, B) plane of C-contiguous ``planes`` transposed."""
    if planes.dtype in _CV_TYPES and planes.size:
        import cv2

        for k in range(planes.shape[0]):
            cv2.transpose(planes[k], out[k])
    else:
        out[...] = planes.transpose(0, 2, 1)
    return out


def untranspose_planes(planes_t: np.ndarray, out: np.ndarray, channels_first: bool,
                       ) -> np.ndarray:
    """Channel planes (C, w, h) into ``out``: (C, h, w) when ``channels_first``, else
    (h, w, C) (each plane transposed, then the planes interleaved)."""
    planes = out if channels_first else out.transpose(2, 0, 1)
    if planes[0].flags.c_contiguous:  # channels first, or one channel
        transpose_planes(planes_t, planes)
    elif planes_t.dtype in _CV_TYPES and out.flags.c_contiguous:
        import cv2

        c, w, h = planes_t.shape
        cv2.merge(list(transpose_planes(planes_t, scratch(4, (c, h, w), planes_t.dtype))), out)
    else:
        planes[...] = planes_t.transpose(0, 2, 1)
    return out
