"""libjpeg-turbo's TurboJPEG calls made from compiled code, with the GIL released
(``turbojpeg.py`` decides when; it holds the constants).

Through ctypes, reading a header is eight calls and a window decode three or four, each
a few microseconds of Python under the GIL; here each is one call. The functions are
called through their addresses, passed in at run time (``fns``), so the compiled code
names no address and is cached on disk like every other kernel. The two structs that
TurboJPEG takes by value travel as 64-bit integers, which is how the x86-64 and AArch64
C conventions pass them: tjscalingfactor {num, denom} as one, tjregion {x, y, w, h} as two
(the first member in the low half, on these little-endian targets).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from stoker.kernels.cpu.image.turbojpeg import (
    FN_DECOMPRESS,
    FN_DESTROY,
    FN_GET,
    FN_HEADER,
    FN_INIT,
    FN_SET,
    FN_SET_REGION,
    FN_SET_SCALE,
    INIT_DECOMPRESS,
    P_COLORSPACE,
    P_FASTDCT,
    P_FASTUPSAMPLE,
    P_HEIGHT,
    P_LOSSLESS,
    P_SCANLIMIT,
    P_SUBSAMP,
    P_WIDTH,
)
from stoker.kernels.cpu.jit import njit


def _caller(restype):
    """An intrinsic call(address, (arg, ...)) of a C function taking integers (pointers
    as int64) and returning ``restype`` (an integer type, or void)."""

    @intrinsic
    def call(typingctx, fn, args):  # pragma: no cover - compiled
        if not isinstance(fn, types.Integer) or not isinstance(args, types.BaseTuple) or \
                not all(isinstance(a, types.Integer) for a in args):
            return None

        def codegen(context, builder, sig, llargs):
            address, packed = llargs
            values = [builder.extract_value(packed, i) for i in range(len(args))]
            ret = ir.VoidType() if restype == types.void else ir.IntType(restype.bitwidth)
            fnty = ir.FunctionType(ret, [v.type for v in values])
            result = builder.call(builder.inttoptr(address, fnty.as_pointer()), values)
            return context.get_dummy_value() if restype == types.void else result

        return restype(fn, args), codegen

    return call


_int = _caller(types.int32)
_ptr = _caller(types.int64)
_void = _caller(types.void)


@njit(nogil=True, cache=True, inline="always")
def _get(fns, handle, param):  # pragma: no cover - compiled
    return _int(fns[FN_GET], (handle, np.int32(param)))


@njit(nogil=True, cache=True)
def open_header(fns, data, scan_limit):  # pragma: no cover - compiled
    """A fresh decompressor that has read the header of ``data`` (1-D uint8): (handle, rc,
    height, width, subsampling, colorspace, lossless, ends). handle 0: tj3Init failed;
    rc != 0: the header could not be read (the handle is kept for its message). ``ends``:
    FF D9 is among the last 16 bytes (``turbojpeg._ends``). The caller destroys the
    handle, or ``decompress`` does."""
    handle = _ptr(fns[FN_INIT], (np.int32(INIT_DECOMPRESS),))
    if handle == 0:
        return handle, -1, 0, 0, 0, 0, 0, False
    _int(fns[FN_SET], (handle, np.int32(P_SCANLIMIT), np.int32(scan_limit)))
    rc = _int(fns[FN_HEADER], (handle, np.int64(data.ctypes.data), np.int64(data.size)))
    if rc != 0:
        return handle, rc, 0, 0, 0, 0, 0, False
    ends = False
    for i in range(max(0, data.size - 16), data.size - 1):
        if data[i] == 0xFF and data[i + 1] == 0xD9:
            ends = True
    return (handle, rc, _get(fns, handle, P_HEIGHT), _get(fns, handle, P_WIDTH),
            _get(fns, handle, P_SUBSAMP), _get(fns, handle, P_COLORSPACE),
            _get(fns, handle, P_LOSSLESS), ends)


@njit(nogil=True, cache=True)
def decompress(fns, handle, data, size, out, fmt, fast_idct, fast_upsample, num, denom,
               x, y, w, h):  # pragma: no cover - compiled
    """Decodes the ``size`` bytes at address ``data`` with a handle that has read their
    header into ``out`` (uint8, C layout): DCT-scaled by num/denom, only the region
    (x, y, w, h) when w > 0. Returns 0, having destroyed the handle, or the call that
    failed: 1 the scaling factor, 2 the region, 3 the decode (a warning or an error; the
    handle, kept, holds the message)."""
    if fast_idct:
        _int(fns[FN_SET], (handle, np.int32(P_FASTDCT), np.int32(1)))
    if fast_upsample:
        _int(fns[FN_SET], (handle, np.int32(P_FASTUPSAMPLE), np.int32(1)))
    if num != denom and _int(fns[FN_SET_SCALE], (
            handle, np.int64(num) | (np.int64(denom) << 32))) != 0:
        return 1
    if w > 0 and _int(fns[FN_SET_REGION], (handle, np.int64(x) | (np.int64(y) << 32),
                                           np.int64(w) | (np.int64(h) << 32))) != 0:
        return 2
    if _int(fns[FN_DECOMPRESS], (handle, np.int64(data), np.int64(size),
                                 np.int64(out.ctypes.data), np.int32(0), np.int32(fmt))) != 0:
        return 3
    _void(fns[FN_DESTROY], (handle,))
    return 0
