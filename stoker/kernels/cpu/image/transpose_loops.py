"""Transposes compiled with numba (GIL released): 8x8 blocks of vector shuffles.

``transpose_planes`` transposes float32 channel planes between the two passes of the
resampling (``resample_loops.py``), as fast as OpenCV's (three 224x300 float32 planes: 31
us against 37); ``transpose_rgb`` transposes interleaved 3-byte pixels, for the decode ->
resize lane (``decode_resize_loop.py``). LLVM lowers the shuffles to each target's own
instructions (AVX's unpack, shuffle and lane permute on x86).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from stoker.kernels.cpu.jit import njit


def _shuffle(builder, a, b, mask):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(ir.IntType(32), len(mask)),
                                                    mask))


def _transposed(builder, rows):
    """Eight vectors of eight 32-bit lanes, transposed: pairs of rows interleaved, then
    pairs of pairs, then the 128-bit halves (AVX's unpack, shuffle and lane permute; other
    targets get their own lowering)."""
    t = []
    for r in range(0, 8, 2):
        t += [_shuffle(builder, rows[r], rows[r + 1], [0, 8, 1, 9, 4, 12, 5, 13]),
              _shuffle(builder, rows[r], rows[r + 1], [2, 10, 3, 11, 6, 14, 7, 15])]
    lo, hi = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    u = [_shuffle(builder, t[a], t[a + 2], m) for a in (0, 1, 4, 5) for m in (lo, hi)]
    # u[0..3]: columns (0, 4), (1, 5), (2, 6), (3, 7) of rows 0-3; u[4..7] of rows 4-7
    cols = [None] * 8
    for q in range(4):
        cols[q] = _shuffle(builder, u[q], u[q + 4], [0, 1, 2, 3, 8, 9, 10, 11])
        cols[q + 4] = _shuffle(builder, u[q], u[q + 4], [4, 5, 6, 7, 12, 13, 14, 15])
    return cols


def _block_rows(context, builder, arr, i, j, item, vec):
    """Pointers, as ``vec`` pointers, to item j of rows i..i+7 of a 2-D array."""
    a = context.make_array(arr[0])(context, builder, arr[1])
    step = cgutils.unpack_tuple(builder, a.strides)[0]
    base = builder.bitcast(a.data, ir.IntType(8).as_pointer())
    at = builder.add(builder.mul(i, step), builder.mul(j, context.get_constant(types.intp, item)))
    return [builder.bitcast(builder.gep(base, [builder.add(at, builder.mul(
        context.get_constant(types.intp, r), step))]), vec.as_pointer()) for r in range(8)]


@intrinsic
def _transpose8(typingctx, src, i, j, dst):  # pragma: no cover - compiled
    """dst[j + q, i + r] = src[i + r, j + q] for r, q in 0..7: an 8x8 block of two 2-D
    C-layout float32 arrays, as eight vector loads, 24 shuffles and eight vector stores."""

    def codegen(context, builder, sig, args):
        vec = ir.VectorType(ir.FloatType(), 8)
        rows = [builder.load(p, align=4) for p in _block_rows(
            context, builder, (sig.args[0], args[0]), args[1], args[2], 4, vec)]
        cols = _transposed(builder, rows)
        for p, col in zip(_block_rows(context, builder, (sig.args[3], args[3]), args[2],
                                      args[1], 4, vec), cols, strict=True):
            builder.store(col, p, align=4)
        return context.get_dummy_value()

    if src != types.Array(types.float32, 2, "C") or dst != src:
        return None
    return types.void(src, i, j, dst), codegen


@intrinsic
def _transpose8_rgb(typingctx, src, i, j, dst):  # pragma: no cover - compiled
    """The 8x8 block of 3-byte pixels at pixel (i, j) of ``src`` transposed into ``dst``
    (2-D uint8: rows of pixels, items one byte apart): eight 32-byte loads, each spread to
    eight 32-bit lanes, ``_transposed``, packed back and stored as 32 bytes. So each load
    reads, and each store writes, 8 bytes past the block's 24: the caller leaves room."""

    def codegen(context, builder, sig, args):
        v32 = ir.VectorType(ir.IntType(8), 32)
        lanes = ir.VectorType(ir.IntType(32), 8)
        spread = [3 * p + b if b < 3 else 0 for p in range(8) for b in range(4)]
        packed = [4 * p + b for p in range(8) for b in range(3)] + [0] * 8
        rows = [builder.bitcast(_shuffle(builder, v, v, spread), lanes) for v in (
            builder.load(p, align=1) for p in _block_rows(
                context, builder, (sig.args[0], args[0]), args[1], args[2], 3, v32))]
        cols = _transposed(builder, rows)
        for p, col in zip(_block_rows(context, builder, (sig.args[3], args[3]), args[2],
                                      args[1], 3, v32), cols, strict=True):
            bytes_ = builder.bitcast(col, v32)
            builder.store(_shuffle(builder, bytes_, bytes_, packed), p, align=1)
        return context.get_dummy_value()

    if not all(isinstance(a, types.Array) and a.ndim == 2 and a.dtype == types.uint8
               for a in (src, dst)):
        return None
    return types.void(src, i, j, dst), codegen


@njit(nogil=True, cache=True)
def transpose_rgb(src, dst):  # pragma: no cover - compiled
    """dst (W, H * 3) = src (H, W * 3) transposed as 3-byte pixels (2-D uint8, items one
    byte apart, rows may lie apart). The 8x8 blocks read 8 bytes past the last pixel of
    their rows and write 8 bytes past theirs, so both arrays need 8 bytes of room after
    each row (rows further apart, or memory after the array); the bytes written there
    are overwritten by the blocks after, or are the room's."""
    h, w = src.shape[0], dst.shape[0]
    h8, w8 = h - h % 8, w - w % 8
    for j0 in range(0, w8, 8):  # a strip of eight output rows at a time
        for i0 in range(0, h8, 8):
            _transpose8_rgb(src, i0, j0, dst)
        for i in range(h8, h):
            for j in range(j0, j0 + 8):
                for k in range(3):
                    dst[j, 3 * i + k] = src[i, 3 * j + k]
    for j in range(w8, w):
        for i in range(h):
            for k in range(3):
                dst[j, 3 * i + k] = src[i, 3 * j + k]


@njit(nogil=True, cache=True)
def transpose_planes(src, dst):  # pragma: no cover - compiled
    """dst (C, B, A) = each (A, B) plane of src transposed (float32, C layout)."""
    c, a, b = src.shape
    a8, b8 = a - a % 8, b - b % 8
    for k in range(c):
        s, o = src[k], dst[k]
        for j0 in range(0, b8, 8):  # a strip of eight output rows at a time
            for i0 in range(0, a8, 8):
                _transpose8(s, i0, j0, o)
            for i in range(a8, a):
                for j in range(j0, j0 + 8):
                    o[j, i] = s[i, j]
        for j in range(b8, b):
            for i in range(a):
                o[j, i] = s[i, j]
