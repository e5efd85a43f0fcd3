"""Image resizing as DALI does it: separable resampling with DALI's filters.

The output size, the source window and each axis's filter taps come from
``resize_geometry.py`` (DALI's size rules and filters). Then:

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

import math
import random
import threading
from typing import Any, NamedTuple

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.image.resize_geometry import (
    LINEAR,
    NN,
    Filter,
    ResizeGeometry,
    axis_taps,
    filter_args,
    filter_table,
    pick_filter,
)
from stoker.kernels.cpu.tensor.tensor import rows_contiguous

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
        *filter_args(out_size, lo, hi, flt), extent, first, count, reverse)
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
