"""The ResNet-50 train and val chains' fused kernel for one JPEG as one compiled call
(numba, GIL released): header, random window, resize size and taps, region decode,
resample and normalize.

``operators/image/decode_resize.py`` runs the same steps as a Python driver around compiled calls
(``decode.probe``, ``crop_window``, ``resize.window_taps``, ``decode.decode``,
``resize_normalize``). That driver holds the GIL for about 200 us per image, which the
executor's threads take in turn: a sixth of the train pipeline's time at two threads.
Here the same kernels run in the same order, so the output is the driver's bit for bit;
what the call does not cover it hands back (``FALLBACK``) before it has written
anything, and the driver does the image (and raises its errors): data that is not a
JPEG, a header libjpeg-turbo refuses, an Exif orientation to apply, CMYK, lossless or
unusual sampling, data without its end marker, a crop window that leaves the resized
image, and any decode failure or warning. A window that shrinks 2x or more is decoded at
a DCT scale, as the driver decodes it. ``decode_resize_claimed`` runs it for the samples
of a batch (or of a chunk): each thread calls it once and takes samples one at a time
through a shared atomic counter, so the threads take the GIL once per batch, not once per
image or chunk; it stores float16 or (h, w, C) outputs from the float32 (C, h, w) it
computes.

Arguments: the encoded bytes (1-D uint8), ``fns`` (``turbojpeg._fns``), the operator's
constants packed once (``ints``, ``floats`` indexed by the I_ and F_ names below; the
filter tables of the shrinking and the magnifying filter), the sample's salted window
seed and index, whether it is mirrored, crop_mirror_normalize's mean and 1/std, and the
float32 (C, h, w) output.
"""

from __future__ import annotations

import math
import platform

import llvmlite.binding as ll
import numba
import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.extending import intrinsic

from stoker.kernels.cpu.image import decode, decode_header, resize, resize_geometry, turbojpeg
from stoker.kernels.cpu.image.crop_window_loop import window_loop
from stoker.kernels.cpu.image.resample_loops import resample_normalized_chw, window_filter_taps
from stoker.kernels.cpu.image.transpose_loops import transpose_rgb
from stoker.kernels.cpu.image.turbojpeg import _MCU, FN_DESTROY, PIXEL_FORMATS
from stoker.kernels.cpu.image.turbojpeg_loop import _void, decompress, open_header
from stoker.kernels.cpu.jit import njit

DONE, FALLBACK, SMALL = 0, 1, 2

# ints
I_SCAN_LIMIT, I_MAX_PIXELS, I_ORIENT, I_DRAW, I_ATTEMPTS = 0, 1, 2, 3, 4
I_OUT_H, I_OUT_W, I_CROP_Y, I_CROP_X, I_CROP_H, I_CROP_W = 5, 6, 7, 8, 9, 10
I_FAST_IDCT, I_DCT_SCALING, I_ANTIALIAS, I_QUANTIZE, I_SIZE, I_TRUNCATE = 11, 12, 13, 14, 15, 16
I_HALF, I_HWC, N_INTS = 17, 18, 19  # the output: float16 (else float32); (h, w, C)
# floats
F_AREA_LO, F_AREA_HI, F_RATIO_LO, F_RATIO_HI, F_MIN_WIDTH, F_MAG_WIDTH, F_SHIFT = range(7)
F_SHORTER, F_POS_Y, F_POS_X, N_FLOATS = 7, 8, 9, 10
# I_DRAW: no window drawn (decoders.image, then a resize of the whole image); the
# decoder's (decoders.image_random_crop, then a resize of the whole window); or
# random_resized_crop's on the whole image (to I_OUT_H x I_OUT_W).
DRAW_NONE, DRAW_DECODER, DRAW_RESIZE = 0, 1, 2
# I_SIZE, the resize's output size (but random_resized_crop's): I_OUT_H x I_OUT_W and
# crop_mirror_normalize's window at (I_CROP_Y, I_CROP_X); or resize_shorter=F_SHORTER
# (subpixel_scale on) and the window at the relative position (F_POS_Y, F_POS_X),
# rounded (I_TRUNCATE: truncated) as crop.window_anchor rounds it.
SIZE_FIXED, SIZE_SHORTER = 0, 1

_RGB = PIXEL_FORMATS["RGB"][0]
_COLOR = (0, 1, 2)  # RGB, YCbCr, GRAY: libjpeg-turbo converts them to RGB itself
_MCU_W = tuple(_MCU[k][0] for k in range(len(_MCU)))
# The driver's own arithmetic, compiled from its one source: the pass order, the columns a
# window's decode covers, the DCT scale it would decode at and the scaled window.
_rows_first = njit(inline="always")(resize._rows_first)
_decoded_columns = njit(inline="always")(turbojpeg.decoded_columns)
_scaled = njit(inline="always")(turbojpeg.scaled)
_scaled_window = njit(inline="always")(decode.scaled_window)
_dct_scale = njit(inline="always")(decode.dct_scale)
_output_extent = njit(inline="always")(resize_geometry.output_extent)
_shorter_request = njit(inline="always")(resize_geometry.shorter_request)
# The header reader's Exif walk, compiled from its source too.
_jpeg_exif = njit(inline="always")(decode_header.jpeg_exif)
_exif_orientation = njit(inline="always")(decode_header.exif_orientation)


def _pointer(dtype):
    """An intrinsic: the ``dtype`` pointer at an address (an int64 from ``ctypes.data``)."""

    @intrinsic
    def at(typingctx, address):  # pragma: no cover - compiled
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            return builder.inttoptr(args[0], context.get_value_type(sig.return_type))

        return types.CPointer(dtype)(address), codegen

    return at


_bytes_at, _floats_at = _pointer(types.uint8), _pointer(types.float32)
_words_at = _pointer(types.int64)
_halves_at = _pointer(types.uint16)


@intrinsic
def _half(typingctx, value):  # pragma: no cover - compiled
    """The float16 bits of a float32, rounded to nearest even as numpy's astype rounds
    (LLVM's fptrunc: one vector instruction on x86 with F16C and on ARM64; ``HALF``)."""
    if value != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


def _half_native() -> bool:
    """Whether this CPU converts to float16 in hardware: elsewhere LLVM would call a
    runtime function the compiled code cannot reach, so float16 outputs stay the
    driver's."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True
    if numba.config.CPU_NAME is not None:  # (NUMBA_CPU_NAME: code for another CPU)
        return "+f16c" in (numba.config.CPU_FEATURES or "").split(",")
    try:
        return "+f16c" in ll.get_host_cpu_features().flatten().split(",")
    except RuntimeError:
        return False


HALF = _half_native()


@intrinsic
def _take(typingctx, counter, count):  # pragma: no cover - compiled
    """``counter[0]`` (1-D int64) before ``count`` is added to it, in one atomic step:
    the threads of a batch take its samples through one counter (``count`` 0 reads it)."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64 and
            isinstance(count, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        step = context.cast(builder, args[1], sig.args[1], types.int64)
        return builder.atomic_rmw("add", array.data, step, "monotonic")

    return types.int64(counter, count), codegen


@njit(nogil=True, cache=True)
def decode_resize_claimed(addresses, sizes, out0, out_step, counter, j, leave, fns, ints,
                          floats, min_table, mag_table, seed, first, mirrors, mean, inv_std,
                          status, u8, f32, stage):  # pragma: no cover - compiled
    """``decode_resize_chw`` for the samples this thread takes, one at a time, through
    ``counter`` (``_take``), which every thread working on the same samples shares: sample
    j's bytes are ``sizes[j]`` at ``addresses[j]`` (size 0 is handed back), its output at
    ``out0 + j * out_step`` (the caller keeps both alive; (C, h, w) float32, else written
    from ``stage``, float32 of C * h * w, as I_HALF and I_HWC say), its window stream
    index ``first + j``, its status ``status[j]``. ``j`` >= 0: a sample already taken, done
    first. With ``leave`` > 0 the thread stops taking samples when at most that many are
    left (other threads take them). Returns (j, u8 size, f32 size, samples not done) when
    sample j (taken) needs larger scratch (call again with it as ``j``), else (number of
    samples, 0, 0, samples not done)."""
    n = addresses.size
    shape = (3, ints[I_CROP_H], ints[I_CROP_W])
    staged = ints[I_HALF] != 0 or ints[I_HWC] != 0
    failed = 0
    while True:
        if j < 0:
            if leave > 0 and _take(counter, 0) >= n - leave:
                return n, 0, 0, failed
            j = _take(counter, 1)
            if j >= n:
                return n, 0, 0, failed
        data = carray(_bytes_at(addresses[j]), sizes[j])
        place = out0 + j * out_step
        out = stage.reshape(shape) if staged else carray(_floats_at(place), shape)
        st, need_u8, need_f32 = decode_resize_chw(
            data, fns, ints, floats, min_table, mag_table, seed, first + np.uint64(j),
            mirrors[j], mean, inv_std, out, u8, f32)
        status[j] = st
        if st == SMALL:
            return j, need_u8, need_f32, failed
        if st != DONE:
            failed += 1
        elif staged:
            _store(out, place, ints[I_HALF] != 0, ints[I_HWC] != 0)
        j = -1


@njit(nogil=True, cache=True)
def locate(ids, layout, addresses, sizes):  # pragma: no cover - compiled
    """``addresses[j]``, ``sizes[j]`` of the object at ``ids[j]`` (its ``id()``) when it
    is a numpy array of the uint8 type object given, one dimension of stride 1 and not
    empty; else 0, 0. ``layout`` (``array_fields.LAYOUT``): the type's and the dtype's
    addresses, then the byte offsets of an object's type and of an array's data pointer,
    dimension count, shape pointer, strides pointer and dtype pointer. Every object
    read at these offsets is checked to be such an array first (its type word)."""
    kind, dtype, at_type, at_data, at_nd, at_shape, at_strides, at_descr = (
        layout[0], layout[1], layout[2], layout[3], layout[4], layout[5], layout[6],
        layout[7])
    for j in range(ids.size):
        obj = ids[j]
        addresses[j] = sizes[j] = 0
        if carray(_words_at(obj + at_type), 1)[0] != kind or \
                carray(_words_at(obj + at_descr), 1)[0] != dtype or \
                carray(_words_at(obj + at_nd), 1)[0] & 0xFFFFFFFF != 1:
            continue
        size = carray(_words_at(carray(_words_at(obj + at_shape), 1)[0]), 1)[0]
        stride = carray(_words_at(carray(_words_at(obj + at_strides), 1)[0]), 1)[0]
        if size > 0 and stride == 1:
            addresses[j] = carray(_words_at(obj + at_data), 1)[0]
            sizes[j] = size


@njit(nogil=True, cache=True)
def _store(src, address, half, hwc):  # pragma: no cover - compiled
    """The (3, h, w) float32 ``src`` into the output at ``address``: float16 (as
    ``crop.convert`` makes it) or float32, (3, h, w) or (h, w, 3)."""
    c, h, w = src.shape
    if half and not hwc:
        flat, dst = src.reshape(-1), carray(_halves_at(address), c * h * w)
        for i in range(flat.size):
            dst[i] = _half(flat[i])
    elif half:
        halves = carray(_halves_at(address), (h, w * 3))
        for y in range(h):
            r, g, b, row = src[0, y], src[1, y], src[2, y], halves[y]
            for x in range(w):
                row[3 * x], row[3 * x + 1], row[3 * x + 2] = _half(r[x]), _half(g[x]), _half(b[x])
    else:
        floats = carray(_floats_at(address), (h, w * 3))
        for y in range(h):
            r, g, b, row = src[0, y], src[1, y], src[2, y], floats[y]
            for x in range(w):
                row[3 * x], row[3 * x + 1], row[3 * x + 2] = r[x], g[x], b[x]


@njit(nogil=True, cache=True, inline="always")
def decode_resize_chw(data, fns, ints, floats, min_table, mag_table, seed, index, mirror,
                      mean, inv_std, out, u8, f32):  # pragma: no cover - compiled
    """(status, u8 size, f32 size): DONE with ``out`` written; FALLBACK with nothing done
    (see the module's text); SMALL: the scratch ``u8`` and ``f32`` (1-D uint8 and float32,
    reused from image to image: fresh memory of this size page-faults) must be at least
    the sizes given for this image."""
    n = data.size
    if n < 3 or data[0] != 0xFF or data[1] != 0xD8 or data[2] != 0xFF:
        return FALLBACK, 0, 0
    handle, rc, h, w, subsamp, cs, lossless, ends = open_header(fns, data, ints[I_SCAN_LIMIT])
    if handle == 0:
        return FALLBACK, 0, 0
    if rc != 0 or h < 1 or w < 1 or h * w > ints[I_MAX_PIXELS] or lossless or not ends or \
            cs not in _COLOR or subsamp < 0 or subsamp >= len(_MCU_W) or \
            (ints[I_ORIENT] and orientation(data) != 1):
        _void(fns[FN_DESTROY], (handle,))
        return FALLBACK, 0, 0
    # the window, and the resize geometry in the coordinates of the image it resizes
    y, x, ch, cw = 0, 0, h, w
    if ints[I_DRAW] != DRAW_NONE:
        y, x, ch, cw = window_loop(seed, index, h, w, floats[F_AREA_LO], floats[F_AREA_HI],
                                   floats[F_RATIO_LO], floats[F_RATIO_HI], ints[I_ATTEMPTS])
    oh, ow, crop_y, crop_x = ints[I_OUT_H], ints[I_OUT_W], ints[I_CROP_Y], ints[I_CROP_X]
    if ints[I_DRAW] != DRAW_RESIZE:
        wy, wx, in_h, in_w = y, x, ch, cw
        lo_y, lo_x, hi_y, hi_x = 0.0, 0.0, float(ch), float(cw)
    else:
        wy, wx, in_h, in_w = 0, 0, h, w
        lo_y, lo_x, hi_y, hi_x = float(y), float(x), float(y + ch), float(x + cw)
    if ints[I_SIZE] == SIZE_SHORTER:
        req_y, req_x = _shorter_request(in_h, in_w, floats[F_SHORTER])
        oh, lo_y, hi_y = _output_extent(req_y, lo_y, hi_y, 1, True)
        ow, lo_x, hi_x = _output_extent(req_x, lo_x, hi_x, 1, True)
        crop_y = _anchor(floats[F_POS_Y], oh, ints[I_CROP_H], ints[I_TRUNCATE])
        crop_x = _anchor(floats[F_POS_X], ow, ints[I_CROP_W], ints[I_TRUNCATE])
        if crop_y < 0 or crop_x < 0 or crop_y + ints[I_CROP_H] > oh or \
                crop_x + ints[I_CROP_W] > ow:  # (padded, trimmed or refused: the driver's)
            _void(fns[FN_DESTROY], (handle,))
            return FALLBACK, 0, 0
    ty, wty, sy, ry, whole_y, sup_y = _axis(oh, lo_y, hi_y, in_h, ints, floats, min_table,
                                            mag_table, crop_y, ints[I_CROP_H],
                                            ints[I_CROP_H] < 0)  # (False at run time: a
    # literal False would compile the taps' functions a second time, a second longer)
    tx, wtx, sx, rx, whole_x, sup_x = _axis(ow, lo_x, hi_x, in_w, ints, floats, min_table,
                                            mag_table, crop_x, ints[I_CROP_W], mirror)
    # The region decoded, as turbojpeg.decode decodes it: rows [dec_y, dec_y + dec_h) of
    # columns [x0, x1) (an iMCU of margin each side; region width 0: the whole image) at
    # 1/denom scale; the source the taps read starts at (src_y, src_x) in it.
    y, x = wy + sy, wx + sx
    denom = _dct_scale(ry, rx, ints[I_CROP_H], ints[I_CROP_W]) if ints[I_DCT_SCALING] else 1
    if denom == 1:
        whole = ry >= h and rx >= w
        x0, x1 = (0, w) if whole else _decoded_columns(x, rx, max(1, _MCU_W[subsamp]), w)
        dec_y, dec_h, width, src_y, src_x = y, ry, 0 if whole else x1 - x0, 0, x - x0
    else:
        # decode.decode_scaled's window, the whole pixels around the source region at
        # that scale, and decode_resize._decode_scaled's taps of the same output on it
        ys, xs, ye, xe, fy0, fx0, fy1, fx1 = _scaled_window(y, x, ry, rx, h, w, denom)
        hs, ws = ye - ys, xe - xs
        fy, fx = (fy1 - fy0) / ry, (fx1 - fx0) / rx
        ty, wty, sy, ry, whole_y, sup_y = _axis(
            oh, fy0 + (lo_y - sy) * fy, fy0 + (hi_y - sy) * fy, hs, ints, floats, min_table,
            mag_table, crop_y, ints[I_CROP_H], ints[I_CROP_H] < 0)
        tx, wtx, sx, rx, whole_x, sup_x = _axis(
            ow, fx0 + (lo_x - sx) * fx, fx0 + (hi_x - sx) * fx, ws, ints, floats, min_table,
            mag_table, crop_x, ints[I_CROP_W], mirror)
        full_h, full_w = _scaled(h, (1, denom)), _scaled(w, (1, denom))
        if hs >= full_h and ws >= full_w:
            x0, x1 = 0, full_w
            dec_y, dec_h, width, src_y, src_x = 0, full_h, 0, ys + sy, xs + sx
        else:
            x0, x1 = _decoded_columns(xs, ws, max(1, _MCU_W[subsamp] // denom), full_w)
            dec_y, dec_h, width, src_y, src_x = ys, hs, x1 - x0, sy, xs - x0 + sx
    rows_first = _rows_first(whole_y, whole_x, oh, ow, sup_y, sup_x)
    pitch = (x1 - x0) * 3
    at_t = _aligned(dec_h * pitch + 32)  # (room for transpose_rgb's reads)
    a, b = (ints[I_CROP_H], rx) if rows_first else (ints[I_CROP_W], ry)
    at_tmp_t = _aligned(3 * a * b)
    at_planes = at_tmp_t + _aligned(3 * a * b)
    planes = 3 * ints[I_CROP_W] * ints[I_CROP_H] if rows_first else 0
    need_u8, need_f32 = at_t + rx * (ry + 3) * 3, at_planes + planes
    if need_u8 > u8.size or need_f32 > f32.size:
        _void(fns[FN_DESTROY], (handle,))
        return SMALL, need_u8, need_f32
    buf = u8[:dec_h * pitch]
    if decompress(fns, handle, data.ctypes.data, n, buf, _RGB, ints[I_FAST_IDCT] != 0, False,
                  1, denom, x0, dec_y, width, dec_h) != 0:
        _void(fns[FN_DESTROY], (handle,))
        return FALLBACK, 0, 0
    rows = buf.reshape(dec_h, pitch)[src_y:src_y + ry, src_x * 3:(src_x + rx) * 3]
    # resize.first_pass_source's source, then _resample_chw's one call
    if rows_first:
        src = buf.reshape(dec_h, x1 - x0, 3)[src_y:src_y + ry, src_x:src_x + rx]
        first, wfirst, second, wsecond = ty, wty, tx, wtx
    else:
        t = u8[at_t:at_t + rx * (ry + 3) * 3].reshape(rx, ry + 3, 3)  # (room after rows)
        transpose_rgb(rows, t.reshape(rx, (ry + 3) * 3)[:, :ry * 3])
        src = t[:, :ry]
        first, wfirst, second, wsecond = tx, wtx, ty, wty
    resample_normalized_chw(src, first, wfirst, f32[:3 * a * b].reshape(3, a, b),
                            f32[at_tmp_t:at_tmp_t + 3 * a * b].reshape(3, b, a), second,
                            wsecond, f32[at_planes:at_planes + planes].reshape(
                                3, ints[I_CROP_W] if rows_first else 0,
                                ints[I_CROP_H] if rows_first else 0), out,
                            mean, inv_std, np.float32(floats[F_SHIFT]), ints[I_QUANTIZE] != 0)
    return DONE, 0, 0


@njit(nogil=True, cache=True, inline="always")
def _anchor(pos, extent, size, truncate):  # pragma: no cover - compiled
    """``crop.window_anchor`` of one window (``pos``: a float32 value, in a float64)."""
    start = pos * (extent - size)
    if truncate:
        return int(math.trunc(start))
    return int(math.floor(start + 0.5)) if start >= 0 else -int(math.floor(0.5 - start))


@njit(nogil=True, cache=True, inline="always")
def _aligned(n):  # pragma: no cover - compiled
    return (n + 15) // 16 * 16  # (64 bytes of float32)


@njit(nogil=True, cache=True)
def _axis(out_size, lo, hi, extent, ints, floats, min_table, mag_table, first, count,
          reverse):  # pragma: no cover - compiled
    """``resize.window_taps``' taps of one axis, the filter as ``resize_geometry.pick_filter``
    picks it: (idx, weights, start, span, whole span, support)."""
    in_extent = abs(hi - lo)
    if out_size < in_extent:
        table, width = min_table, floats[F_MIN_WIDTH]
        if ints[I_ANTIALIAS] and out_size:
            width *= in_extent / out_size
    else:
        table, width = mag_table, floats[F_MAG_WIDTH]
    width = max(1.0, width)
    support = max(1, math.ceil(width - 1e-6))
    idx, weights, start, span, whole = window_filter_taps(
        out_size, np.float32(lo), np.float32((hi - lo) / out_size), table,
        np.float32((table.shape[0] - 1) / width), np.float32(width * 0.5), support, extent,
        first, count, reverse)
    return idx, weights, start, span, whole, support


@njit(nogil=True, cache=True)
def orientation(data):  # pragma: no cover - compiled
    """``decode_header._jpeg_orientation``: the Exif orientation of a JPEG, 1 if none."""
    start, end = _jpeg_exif(data)
    return _exif_orientation(data[start:end])
