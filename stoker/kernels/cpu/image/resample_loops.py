"""The 1-D resampling pass of ``resize.py``, compiled with numba (GIL released).

Each pass filters along the first axis: an output row is a weighted sum of whole source
rows, so the inner loop runs over contiguous memory and vectorizes. The other axis is
done by the same pass on a transposed array, which beats a gathering horizontal loop
several times. The first pass reads the interleaved image and writes float32 channel
planes: a plane of 4-byte values transposes (OpenCV) at about a third of the cost per
byte of interleaved 12-byte pixels, and the last pass filters plane by plane.

Taps are absolute source row indices (already clamped: edge rows repeat) with weights. A
pass that writes an integer type rounds half up (floor of x + 0.5) and saturates, as DALI
converts its float accumulators.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from stoker.kernels.cpu.image.fused import normalize_value
from stoker.kernels.cpu.image.transpose_loops import transpose_planes
from stoker.kernels.cpu.jit import njit

# No 'nnan'/'ninf': float images may hold NaN or inf and must propagate them.
_FAST = {"nsz", "arcp", "contract", "afn", "reassoc"}


@njit(nogil=True, cache=True)
def nearest_taps(out_size, lo, scale, extent, accumulate):  # pragma: no cover - compiled
    """One tap per output pixel at floor(lo + (i + 0.5) * scale), in float32."""
    idx = np.empty((out_size, 1), np.int32)
    pos = lo + np.float32(0.5) * scale
    for i in range(out_size):
        if not accumulate:
            pos = lo + (np.float32(i) + np.float32(0.5)) * scale
        p = int(np.floor(pos))
        idx[i, 0] = min(max(p, 0), extent - 1)
        pos += scale
    return idx, np.ones((out_size, 1), np.float32)


@njit(nogil=True, cache=True)  # (not inlined: three sites compiled 1.7 s, a call costs ns)
def _filter_row(i, start, scale, table, step, extent, idx, taps):  # pragma: no cover
    """The taps of output pixel ``i`` into ``idx`` and ``taps`` (one row of each)."""
    n = table.shape[0]
    pos = np.float32(i) * scale + start
    first = np.ceil(pos)
    frac = np.float32(first - pos)
    total = np.float32(0.0)
    for k in range(idx.shape[0]):
        x = (frac + np.float32(k)) * step
        v = np.float32(0.0)
        if x > -1 and x < n:
            x0 = int(np.floor(x))
            d = x - np.float32(x0)
            f0 = table[x0] if x0 >= 0 else np.float32(0.0)
            f1 = table[x0 + 1] if x0 + 1 < n else np.float32(0.0)
            v = f0 + d * (f1 - f0)
        taps[k] = v
        total += v
        idx[k] = min(max(int(first) + k, 0), extent - 1)
    if total != 0:
        for k in range(idx.shape[0]):
            taps[k] /= total


@njit(nogil=True, cache=True)
def filter_taps(out_size, lo, scale, table, step, anchor, support, extent):  # pragma: no cover
    """Taps of a tabulated filter ``width`` source pixels wide (``step`` table samples per
    pixel, centered at ``anchor``), linearly interpolated and normalized to sum 1."""
    idx = np.empty((out_size, support), np.int32)
    taps = np.empty((out_size, support), np.float32)
    start = lo + np.float32(0.5) * scale - np.float32(0.5) - anchor
    for i in range(out_size):
        _filter_row(i, start, scale, table, step, extent, idx[i], taps[i])
    return idx, taps


@njit(nogil=True, cache=True)
def window_filter_taps(out_size, lo, scale, table, step, anchor, support, extent, first,
                       count, reverse):  # pragma: no cover - compiled
    """``filter_taps``' rows [first, first + count) only (count > 0), in reverse when
    ``reverse``, their indices made relative to the lowest they read: (idx, taps, start,
    extent, whole extent), the last the span of the whole axis's indices (the pass order
    is chosen for the whole output). The spans are read at the corners, as
    ``resize._span`` reads them."""
    idx = np.empty((count, support), np.int32)
    taps = np.empty((count, support), np.float32)
    start = lo + np.float32(0.5) * scale - np.float32(0.5) - anchor
    for r in range(count):
        _filter_row(first + (count - 1 - r if reverse else r), start, scale, table, step,
                    extent, idx[r], taps[r])
    ends = np.empty((2, support), np.int32)
    ends_taps = np.empty((2, support), np.float32)
    _filter_row(0, start, scale, table, step, extent, ends[0], ends_taps[0])
    _filter_row(out_size - 1, start, scale, table, step, extent, ends[1], ends_taps[1])
    lo_i = min(idx[0, 0], idx[count - 1, 0])
    hi_i = max(idx[0, support - 1], idx[count - 1, support - 1]) + 1
    whole = max(ends[0, support - 1], ends[1, support - 1]) + 1 - min(ends[0, 0], ends[1, 0])
    for r in range(count):  # (a loop: an array expression here compiled a second longer)
        for k in range(support):
            idx[r, k] -= lo_i
    return idx, taps, lo_i, hi_i - lo_i, whole


_LIMITS: dict = {}


def _limits(dtype: np.dtype) -> tuple[np.float32, np.float32]:
    """The integer type's range as float32 (np.iinfo costs microseconds per call)."""
    lim = _LIMITS.get(dtype)
    if lim is None:
        info = np.iinfo(dtype)
        lim = _LIMITS[dtype] = (np.float32(info.min), np.float32(info.max))
    return lim




# -- the passes ----------------------------------------------------------------------------
# Every output value is accumulated in the same order: tap 0, the bias (0.5 where the value
# is rounded to an integer: floor(x + 0.5)), then taps 1, 2, ... So a fused output stage
# sees exactly the values an image pass would have stored.


@njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _accumulate(src, rows, taps, a, acc, bias):  # pragma: no cover - compiled
    r0 = src[rows[a, 0]]
    t0 = taps[a, 0]
    if bias != 0:
        for j in range(acc.shape[0]):
            acc[j] = t0 * np.float32(r0[j]) + bias
    else:
        for j in range(acc.shape[0]):
            acc[j] = t0 * np.float32(r0[j])
    for k in range(1, rows.shape[1]):
        row = src[rows[a, k]]
        t = taps[a, k]
        for j in range(acc.shape[0]):
            acc[j] += t * np.float32(row[j])


@njit(nogil=True, cache=True, fastmath=_FAST)
def _rows_to_planes(src, rows, taps, dst):  # pragma: no cover - compiled
    """The first pass: interleaved rows (A, B * C) in, float32 channel planes (C, A', B) out."""
    c, nb = dst.shape[0], dst.shape[2]
    acc = np.empty(nb * c, np.float32)
    for a in range(rows.shape[0]):
        _accumulate(src, rows, taps, a, acc, np.float32(0.0))
        if c == 3:  # a constant stride lets the compiler de-interleave with vector shuffles
            o0, o1, o2 = dst[0, a], dst[1, a], dst[2, a]
            for b in range(nb):
                o0[b] = acc[3 * b]
                o1[b] = acc[3 * b + 1]
                o2[b] = acc[3 * b + 2]
        else:
            for k in range(c):
                out = dst[k, a]
                for b in range(nb):
                    out[b] = acc[b * c + k]


# The last pass: float32 planes (C, A, B) in, planes (C, A', B) out (dst may be a strided
# view: an HWC output seen as planes), each value through the pass's output stage.


@njit(nogil=True, cache=True, fastmath=_FAST)
def _planes_table(src, rows, taps, table, dst):  # pragma: no cover - compiled
    """Rounded half up and saturated to uint8, then v of channel k stored as table[k, v]."""
    acc = np.empty(dst.shape[2], np.float32)
    for k in range(dst.shape[0]):
        tk = table[k]
        for a in range(rows.shape[0]):
            _accumulate(src[k], rows, taps, a, acc, np.float32(0.5))
            out = dst[k, a]
            for b in range(acc.shape[0]):
                out[b] = tk[np.uint8(np.floor(min(max(acc[b], np.float32(0.0)),
                                                  np.float32(255.0))))]


# The last pass of a uint8 resize normalized with no shift (the ResNet pipelines' case):
# a whole loop per filter width, its taps held in registers and each value rounded and
# normalized as it is summed. _planes_normalized's loops (a sweep over the row per tap,
# then per step of the output stage) took twice as long: 84 us against 39 per image of
# the train pipeline's windows. Written out per width: a loop over a variable number of
# taps ran at the slow speed again.


@njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _quantized(v, mean, inv_std):  # pragma: no cover - compiled
    """An accumulated value as a uint8 resize stores it, then normalized (shift 0)."""
    v = np.floor(min(max(v, np.float32(0.0)), np.float32(255.0)))
    return normalize_value(v, mean, inv_std, np.float32(0.0))


@njit(nogil=True, cache=True, fastmath=_FAST)
def _quantized2(src, rows, taps, mean, inv_std, dst):  # pragma: no cover - compiled
    for k in range(dst.shape[0]):
        s, m, f = src[k], mean[k], inv_std[k]
        for a in range(rows.shape[0]):
            i0, i1, t0, t1 = rows[a, 0], rows[a, 1], taps[a, 0], taps[a, 1]
            out = dst[k, a]
            for b in range(out.shape[0]):
                out[b] = _quantized(t0 * s[i0, b] + np.float32(0.5) + t1 * s[i1, b], m, f)


@njit(nogil=True, cache=True, fastmath=_FAST)
def _quantized3(src, rows, taps, mean, inv_std, dst):  # pragma: no cover - compiled
    for k in range(dst.shape[0]):
        s, m, f = src[k], mean[k], inv_std[k]
        for a in range(rows.shape[0]):
            i0, i1, i2 = rows[a, 0], rows[a, 1], rows[a, 2]
            t0, t1, t2 = taps[a, 0], taps[a, 1], taps[a, 2]
            out = dst[k, a]
            for b in range(out.shape[0]):
                out[b] = _quantized(t0 * s[i0, b] + np.float32(0.5) + t1 * s[i1, b]
                                    + t2 * s[i2, b], m, f)


@njit(nogil=True, cache=True, fastmath=_FAST)
def _quantized4(src, rows, taps, mean, inv_std, dst):  # pragma: no cover - compiled
    for k in range(dst.shape[0]):
        s, m, f = src[k], mean[k], inv_std[k]
        for a in range(rows.shape[0]):
            i0, i1, i2, i3 = rows[a, 0], rows[a, 1], rows[a, 2], rows[a, 3]
            t0, t1, t2, t3 = taps[a, 0], taps[a, 1], taps[a, 2], taps[a, 3]
            out = dst[k, a]
            for b in range(out.shape[0]):
                out[b] = _quantized(t0 * s[i0, b] + np.float32(0.5) + t1 * s[i1, b]
                                    + t2 * s[i2, b] + t3 * s[i3, b], m, f)


@njit(nogil=True, cache=True, fastmath=_FAST)
def _planes_normalized(src, rows, taps, mean, inv_std, shift, quantize, dst):  # pragma: no cover
    """Stored as (v - mean[k]) * inv_std[k] + shift; with ``quantize`` v is first rounded
    half up and saturated to a uint8 value (kept as float32), as a uint8 resize stores it."""
    n = rows.shape[1]
    if quantize and shift == 0 and 2 <= n <= 4:
        if n == 2:
            _quantized2(src, rows, taps, mean, inv_std, dst)
        elif n == 3:
            _quantized3(src, rows, taps, mean, inv_std, dst)
        else:
            _quantized4(src, rows, taps, mean, inv_std, dst)
        return
    acc = np.empty(dst.shape[2], np.float32)
    bias = np.float32(0.5) if quantize else np.float32(0.0)
    for k in range(dst.shape[0]):
        m, s = mean[k], inv_std[k]
        for a in range(rows.shape[0]):
            _accumulate(src[k], rows, taps, a, acc, bias)
            if quantize:
                for b in range(acc.shape[0]):
                    acc[b] = np.floor(min(max(acc[b], np.float32(0.0)), np.float32(255.0)))
            out = dst[k, a]
            for b in range(acc.shape[0]):
                out[b] = normalize_value(acc[b], m, s, shift)


@njit(nogil=True, cache=True, fastmath=_FAST)
def _pixels_float(src, rows, taps, dst):  # pragma: no cover - compiled
    """Planes (C, A, B) in, interleaved rows (A', B * C) out."""
    c = src.shape[0]
    acc = np.empty((c, dst.shape[1] // c), np.float32)
    for a in range(rows.shape[0]):
        for k in range(c):
            _accumulate(src[k], rows, taps, a, acc[k], np.float32(0.0))
        _interleave(acc, dst[a])


@njit(nogil=True, cache=True, fastmath=_FAST)
def _pixels_int(src, rows, taps, dst, lo, hi):  # pragma: no cover - compiled
    """As ``_pixels_float``, rounded half up and saturated: floor(min(max(x + 0.5, lo), hi))."""
    c = src.shape[0]
    acc = np.empty((c, dst.shape[1] // c), np.float32)
    for a in range(rows.shape[0]):
        for k in range(c):
            _accumulate(src[k], rows, taps, a, acc[k], np.float32(0.5))
            for b in range(acc.shape[1]):
                acc[k, b] = np.floor(min(max(acc[k, b], lo), hi))
        _interleave(acc, dst[a])


@njit(nogil=True, cache=True, inline="always")
def _interleave(acc, out):  # pragma: no cover - compiled
    c, nb = acc.shape
    if c == 3:  # a constant stride lets the compiler interleave with vector shuffles
        for b in range(nb):
            out[3 * b] = acc[0, b]
            out[3 * b + 1] = acc[1, b]
            out[3 * b + 2] = acc[2, b]
    else:
        for b in range(nb):
            for k in range(c):
                out[b * c + k] = acc[k, b]


def resample_to_planes(src: np.ndarray, rows: np.ndarray, taps: np.ndarray,
                       dst: np.ndarray) -> None:
    """Filters (A, B, C) ``src`` (each row one block of memory; the rows may lie apart)
    along A into float32 channel planes ``dst`` (C, A', B)."""
    _rows_to_planes(src.reshape(src.shape[0], -1), rows, taps, dst)


def resample_planes(src: np.ndarray, rows: np.ndarray, taps: np.ndarray,
                    dst: np.ndarray) -> None:
    """Filters float32 planes (C, A, B) along A into the interleaved image ``dst``
    (A', B, C) of its type (integers rounded half up and saturated)."""
    dst2 = dst.reshape(dst.shape[0], -1)
    if dst.dtype.kind in "iu":
        lo, hi = _limits(dst.dtype)
        _pixels_int(src, rows, taps, dst2, lo, hi)
    else:
        _pixels_float(src, rows, taps, dst2)


def resample_planes_normalized(src: np.ndarray, rows: np.ndarray, taps: np.ndarray,
                               dst: np.ndarray, table: np.ndarray | None, mean: np.ndarray,
                               inv_std: np.ndarray, shift: float, quantize: bool) -> None:
    """Filters float32 planes (C, A, B) along A into planes ``dst`` (C, A', B; possibly a
    strided view of an HWC output) through crop_mirror_normalize's stage: with
    ``quantize``, rounded to uint8 values (as a uint8 resize stores them), then looked up
    in ``table`` (C, 257) or normalized to (v - mean[k]) * inv_std[k] + shift."""
    if table is not None:
        _planes_table(src, rows, taps, table, dst)
    else:
        _planes_normalized(src, rows, taps, mean, inv_std, np.float32(shift), quantize, dst)


# -- the whole resampling of a normalized output in one call -------------------------------
# One native call per image instead of a Python driver around eight (first pass, three
# plane transposes, last pass, three more): that per-sample Python, which the executor's
# threads run one at a time under the GIL, was a quarter of the train pipeline's GIL time.
# The transposes (``transpose_loops.py``) are 8x8 blocks of vector shuffles, as fast as
# OpenCV's (three 224x300 float32 planes: 31 us against 37).


@intrinsic
def _row_span(typingctx, arr):  # pragma: no cover - compiled
    """A 2-D C-layout view (shape[0], strides[0] // itemsize) of an array whose rows are
    each one block of memory (rows may lie apart, as in a window of an image): row r is
    the row's memory from its first item on. Only items of the array itself may be read
    through it (the last row's span may run past the array's memory)."""
    view = types.Array(arr.dtype, 2, "C")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        dst = context.make_array(view)(context, builder)
        item = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(arr.dtype)))
        rows = cgutils.unpack_tuple(builder, src.shape)[0]
        stride = cgutils.unpack_tuple(builder, src.strides)[0]
        populate_array(dst, data=src.data,
                       shape=cgutils.pack_array(builder, [rows, builder.sdiv(stride, item)]),
                       strides=cgutils.pack_array(builder, [stride, item]),
                       itemsize=item, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, view, dst._getvalue())

    return view(arr), codegen


@njit(nogil=True, cache=True)
def resample_normalized_chw(src, rows1, taps1, tmp, tmp_t, rows2, taps2, planes_t, out, mean,
                            inv_std, shift, quantize):  # pragma: no cover - compiled
    """Both passes of ``resize.two_passes`` and ``resample_planes_normalized``'s output
    stage, into float32 CHW ``out`` (C, h, w). ``src`` (``resize.first_pass_source``; its
    rows each one block of memory, in order) is filtered along its rows by ``rows1`` into
    ``tmp`` (C, A', B), transposed into ``tmp_t``; the second pass filters those along
    their first axis: into ``out`` when ``planes_t`` is empty (the source was transposed,
    so the first pass made output columns), else into ``planes_t`` (C, w, h), transposed
    into ``out``. Scratch ``tmp``, ``tmp_t`` and ``planes_t`` are float32 and C layout."""
    _rows_to_planes(_row_span(src), rows1, taps1, tmp)
    transpose_planes(tmp, tmp_t)
    if planes_t.size == 0:
        _planes_normalized(tmp_t, rows2, taps2, mean, inv_std, shift, quantize, out)
    else:
        _planes_normalized(tmp_t, rows2, taps2, mean, inv_std, shift, quantize, planes_t)
        transpose_planes(planes_t, out)
