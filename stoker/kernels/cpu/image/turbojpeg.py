"""libjpeg-turbo's TurboJPEG 3 API through ctypes: full, DCT-scaled and cropped JPEG decodes.

Why ctypes on a bundled library rather than a wrapper's own Python API: no pip wrapper
offers both scaled and region-of-interest decoding (benchmarks/jpeg_decoders.py), and the
decode call releases the GIL, so the executor's threads decode in parallel. The library is
the ``libturbojpeg`` that a pip wheel carries (see ``_CANDIDATES``); no system package.

Region decoding: libjpeg-turbo skips the entropy-decoded rows above the window without
IDCT or colour conversion, stops after the window, and decodes only the iMCU columns that
cover it. Its smooth chroma upsampling treats the cropped columns' edges as image edges,
so the decoded window is widened by one iMCU on each side and then trimmed: the result
equals the same window of a full decode exactly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
import sys
import threading

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.compiled import loops

# TurboJPEG 3 constants (turbojpeg.h).
INIT_DECOMPRESS = 1
P_STOPONWARNING, P_SUBSAMP, P_WIDTH, P_HEIGHT, P_COLORSPACE = 0, 4, 5, 6, 8
P_FASTUPSAMPLE, P_FASTDCT, P_SCANLIMIT, P_LOSSLESS = 9, 10, 13, 15
_ERR_WARNING = 0
# The functions compiled code calls (``turbojpeg_loop.py``), by index into ``_fns``.
_CALLED = ("tj3Init", "tj3Destroy", "tj3Set", "tj3Get", "tj3DecompressHeader",
           "tj3SetScalingFactor", "tj3SetCroppingRegion", "tj3Decompress8")
(FN_INIT, FN_DESTROY, FN_SET, FN_GET, FN_HEADER, FN_SET_SCALE, FN_SET_REGION,
 FN_DECOMPRESS) = range(len(_CALLED))
# Whether header reads and decodes go through compiled code: None, once numba is loaded
# (a pipeline that runs any numba kernel has it; loading it costs 0.2 s and 64 MB, which
# a pipeline that only decodes should not pay); True or False forces one way (tests).
COMPILED: bool | None = None
PIXEL_FORMATS = {"RGB": (0, 3), "BGR": (1, 3), "GRAY": (6, 1), "CMYK": (11, 4)}
COLORSPACES = ("RGB", "YCbCr", "GRAY", "CMYK", "YCCK")
SUBSAMPLINGS = ("444", "422", "420", "GRAY", "440", "411", "441")
_MCU = {0: (8, 8), 1: (16, 8), 2: (16, 16), 3: (8, 8), 4: (8, 16), 5: (32, 8), 6: (8, 32)}
# A progressive JPEG with thousands of scans decodes for minutes (a known denial of
# service); real encoders write at most a few dozen.
SCAN_LIMIT = 500


class _Region(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("w", ctypes.c_int),
                ("h", ctypes.c_int)]


class _Scale(ctypes.Structure):
    _fields_ = [("num", ctypes.c_int), ("denom", ctypes.c_int)]


class JpegError(ValueError):
    """libjpeg-turbo refused the data (corrupt, truncated, unsupported)."""


def _site_files(package: str, pattern: str) -> list[str]:
    """Files matching ``pattern`` inside an installed package, without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    roots = list(spec.submodule_search_locations or [])
    if spec.origin and not roots:
        roots = [os.path.dirname(spec.origin)]
    return sorted(f for r in roots for f in glob.glob(os.path.join(r, pattern)))


# Where a libturbojpeg with the TurboJPEG 3 API can come from, in order of preference.
# STOKER_LIBTURBOJPEG names a library file explicitly.
_CANDIDATES = (
    ("pylibjxl wheel", lambda: _site_files("pylibjxl", "_pylibjxl*.so")),
    ("system libturbojpeg", lambda: [p] if (p := ctypes.util.find_library("turbojpeg")) else []),
)

_lib: ctypes.CDLL | None = None
_missing: str | None = None  # why no library was found, once the search has failed
_origin = ""
_lock = threading.Lock()


# Calls that take microseconds keep the GIL (bound through ctypes.PyDLL): releasing and
# taking it back around each of the dozen a decode makes cost more than the call, and under
# contention the thread waits for the GIL after every one. The decode itself releases it.
_HOLD_GIL = ("tj3Init", "tj3Destroy", "tj3GetErrorStr", "tj3GetErrorCode", "tj3Set", "tj3Get",
             "tj3DecompressHeader", "tj3SetScalingFactor", "tj3SetCroppingRegion")


def _bind(lib: ctypes.CDLL, path: str) -> None:
    held = ctypes.PyDLL(path)
    for name in _HOLD_GIL:
        setattr(lib, name, getattr(held, name))
    vp, cp, sz, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
    sigs = {
        "tj3Init": ([i], vp), "tj3Destroy": ([vp], None), "tj3GetErrorStr": ([vp], cp),
        "tj3GetErrorCode": ([vp], i), "tj3Set": ([vp, i, i], i), "tj3Get": ([vp, i], i),
        "tj3DecompressHeader": ([vp, vp, sz], i),
        "tj3SetScalingFactor": ([vp, _Scale], i), "tj3SetCroppingRegion": ([vp, _Region], i),
        "tj3Decompress8": ([vp, vp, sz, vp, i, i], i),
    }
    for name, (args, res) in sigs.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res


def library() -> ctypes.CDLL:
    """The loaded libturbojpeg; raises ImportError saying what to install when there is none."""
    global _lib, _origin, _missing
    if _lib is not None:
        return _lib
    if _missing is not None:  # searched once already: find_library runs subprocesses
        raise ImportError(_missing)
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        explicit = os.environ.get("STOKER_LIBTURBOJPEG")
        found = [("STOKER_LIBTURBOJPEG", [explicit])] if explicit else []
        found += [(name, find()) for name, find in _CANDIDATES]
        for origin, paths in found:
            for path in paths:
                try:
                    lib = ctypes.CDLL(path)
                    _bind(lib, path)
                except (OSError, AttributeError) as e:
                    tried.append(f"{path}: {e}")
                    continue
                _lib, _origin = lib, f"{origin} ({os.path.basename(path)})"
                return lib
        _missing = ("no libturbojpeg with the TurboJPEG 3 API was found; `pip install "
                    "pylibjxl` provides one (or set STOKER_LIBTURBOJPEG to a libturbojpeg.so "
                    "path)" + ("; tried: " + "; ".join(tried) if tried else ""))
        raise ImportError(_missing)


def library_origin() -> str:
    library()
    return _origin


class _Handle:
    """One decompressor, used for one call. libjpeg-turbo carries state from image to
    image on a handle: the last image's header fields (a JPEG cut short before its frame
    header then reports the previous image's size, and "decodes" as an image of it),
    its quantization and Huffman tables (an abbreviated JPEG decodes with the previous
    file's tables), and, after a header read fails, the half-parsed header (every later
    read fails, valid JPEGs included, so one corrupt file would poison a thread). A fresh
    handle costs about 2 microseconds, a thousandth of decoding a 500x375 image; it is
    also never shared between threads (TurboJPEG handles are not thread-safe). ``ptr``:
    one made by compiled code, which this object now owns."""

    def __init__(self, lib: ctypes.CDLL, ptr: int = 0):
        self.lib = lib
        if not ptr:
            ptr = lib.tj3Init(INIT_DECOMPRESS)
            if not ptr:
                raise MemoryError("tj3Init failed")
            lib.tj3Set(ptr, P_SCANLIMIT, SCAN_LIMIT)
        self.ptr = ptr

    def __del__(self) -> None:
        if getattr(self, "ptr", None):
            self.lib.tj3Destroy(self.ptr)
            self.ptr = None

    def error(self) -> tuple[str, bool]:
        """The last call's message and whether it was only a warning. Read it before any
        other call: every TurboJPEG call clears the warning flag."""
        msg = self.lib.tj3GetErrorStr(self.ptr).decode("utf-8", "replace")
        return msg, self.lib.tj3GetErrorCode(self.ptr) == _ERR_WARNING


def _handle() -> _Handle:
    return _Handle(library())


_fns: np.ndarray | None = None


def _compiled() -> object | None:
    """``turbojpeg_loop`` with the addresses of the functions it calls, when header reads
    and decodes go through it (``COMPILED``); else None."""
    global _fns
    if COMPILED is False or (COMPILED is None and "numba" not in sys.modules):
        return None
    lib = library()  # (raises ImportError when there is none)
    if _fns is None:
        _fns = np.array([ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in _CALLED],
                        np.int64)
    return loops("image.turbojpeg_loop")


class Header:
    __slots__ = ("height", "width", "subsampling", "colorspace", "lossless", "ends")

    def __init__(self, height: int, width: int, subsampling: int, colorspace: int,
                 lossless: int, ends: bool | None = None):
        self.height = height
        self.width = width
        self.subsampling = subsampling  # -1: unusual; no cropped decode then
        self.colorspace = COLORSPACES[colorspace]
        self.lossless = bool(lossless)
        self.ends = ends  # the data ends with EOI (``_ends``); None: not looked at yet

    @property
    def mcu(self) -> tuple[int, int]:
        """(width, height) of an iMCU in pixels; (0, 0) when the sampling is unusual."""
        return _MCU.get(self.subsampling, (0, 0))


def _buffer(data: np.ndarray | bytes) -> tuple[int, int, np.ndarray]:
    """(address, size, owner) of encoded bytes; the owner, a 1-D uint8 array of them, must
    outlive the call."""
    arr = data if isinstance(data, np.ndarray) else np.frombuffer(data, np.uint8)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    if arr.ndim != 1 or arr.dtype != np.uint8:
        arr = arr.reshape(-1).view(np.uint8)
    return _address(arr), arr.nbytes, arr


def _address(arr: np.ndarray) -> int:
    """The address of a C-contiguous array's data: through ctypes' buffer view where the
    array is writable and not empty (0.4 us), else numpy's ``ctypes.data`` (1.3 us)."""
    if arr.flags.writeable and arr.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))
    return arr.ctypes.data


def _open(ptr: int, size: int, owner: np.ndarray) -> tuple[_Handle, Header]:
    """A fresh handle that has read the header of the ``size`` bytes at ``ptr``, which
    are those of ``owner`` (``_buffer``)."""
    compiled = _compiled()
    if compiled is None:
        h = _handle()
        fields: tuple = (-1,)
        if h.lib.tj3DecompressHeader(h.ptr, ptr, size) == 0:
            get = h.lib.tj3Get
            fields = (0, get(h.ptr, P_HEIGHT), get(h.ptr, P_WIDTH), get(h.ptr, P_SUBSAMP),
                      get(h.ptr, P_COLORSPACE), get(h.ptr, P_LOSSLESS))
    else:
        handle, *fields = compiled.open_header(_fns, owner, SCAN_LIMIT)
        if not handle:
            raise MemoryError("tj3Init failed")
        h = _Handle(library(), handle)
    if fields[0] != 0:
        msg, _ = h.error()
        raise JpegError(f"not a decodable JPEG ({msg})")
    hdr = Header(*fields[1:])
    if hdr.height < 1 or hdr.width < 1:
        # TurboJPEG reports success without reading a frame when the data ends (or an
        # EOI comes) before the frame header: a "tables-only" stream.
        raise JpegError("not a decodable JPEG (no frame header before the end of the data)")
    return h, hdr


_read = threading.local()


def _identity(data: np.ndarray | bytes | memoryview) -> tuple[object, int]:
    """(object, size) naming the bytes of ``data`` without reading its address. A
    memoryview of the whole of an object names that object (what ``probe`` passes); one
    of a part names only itself: two parts of one object may have the same size."""
    if isinstance(data, memoryview):
        whole = data.obj
        return (whole if memoryview(whole).nbytes == data.nbytes else data), data.nbytes
    return data, data.nbytes if isinstance(data, np.ndarray) else len(data)


def header(data: np.ndarray | bytes | memoryview) -> Header:
    """Size and coding of a JPEG, read from its markers (no pixel is decoded).

    The handle that read it is kept, with the data, for this thread's next ``decode``: a
    probe followed by the decode of the same bytes then reads the header once."""
    ptr, size, owner = _buffer(data)
    h, hdr = _open(ptr, size, owner)
    _read.last = (_identity(data), ptr, size, owner, h, hdr)
    return hdr


def _ready(data: np.ndarray | bytes) -> tuple[int, int, object, _Handle, Header]:
    """(address, size, owner) of ``data`` and a handle that has read its header: the one
    ``header`` kept when it read these very bytes (the same object, or the same memory:
    its reference kept that memory from being freed and reused), else a fresh one. A
    handle serves one decode."""
    last = getattr(_read, "last", None)
    _read.last = None
    if last is not None:
        obj, size = _identity(data)
        if last[0][0] is obj and last[0][1] == size:
            return last[1:]
    ptr, size, owner = _buffer(data)
    if last is not None and last[1] == ptr and last[2] == size:
        return ptr, size, owner, last[4], last[5]
    return (ptr, size, owner, *_open(ptr, size, owner))


def _ends(data: np.ndarray) -> bool:
    """Whether the data (1-D uint8) ends as a whole JPEG does: with the EOI marker (FF D9)
    among its last 16 bytes. Entropy-coded data never holds FF D9, so data cut short does
    not. A window that stops above the last row is decoded alone only then; otherwise
    libjpeg-turbo would never read the missing end, and a truncated file would pass or
    fail depending on where its random window fell. (A whole JPEG with a longer trailer
    is decoded in full and cut: slower, same pixels.)"""
    return b"\xff\xd9" in data[-16:].tobytes()


def scaled(size: int, scale: tuple[int, int]) -> int:
    """A dimension after DCT scaling: ceil(size * num / denom), as libjpeg-turbo computes it."""
    return (size * scale[0] + scale[1] - 1) // scale[1]


def decoded_columns(x: int, w: int, mcu_w: int, full_w: int) -> tuple[int, int]:
    """Columns [x0, x1) decoded for a window of columns [x, x + w) of an image ``full_w``
    wide with iMCUs ``mcu_w`` wide: one iMCU of margin each side keeps the upsampling of
    the window's edge columns identical to a full decode's."""
    x0 = max(0, (x - 1) // mcu_w * mcu_w) if x > 0 else 0
    return x0, min(full_w, x + w + mcu_w)


def _decompress(h: _Handle, src: int, size: int, out: np.ndarray, fmt: int, fast_idct: bool,
                fast_upsample: bool, scale: tuple[int, int],
                region: tuple[int, int, int, int] | None) -> int:
    """A decode's calls on a handle that has read the header: 0, or the one that failed
    (1 the scaling factor, 2 the region (x, y, w, h), 3 the decode; a warning or an error,
    the handle holds its message). A handle starts with the accurate IDCT and upsampling,
    unscaled and uncropped: only other settings are made (each call costs about as much
    as a 10-pixel decode)."""
    x, y, w, hh = region or (0, 0, 0, 0)
    compiled = _compiled()
    if compiled is not None:
        failed = compiled.decompress(_fns, h.ptr, src, size, out, fmt, fast_idct,
                                     fast_upsample, scale[0], scale[1], x, y, w, hh)
        if not failed:
            h.ptr = None  # destroyed
        return failed
    lib, ptr = h.lib, h.ptr
    if fast_idct:
        lib.tj3Set(ptr, P_FASTDCT, 1)
    if fast_upsample:
        lib.tj3Set(ptr, P_FASTUPSAMPLE, 1)
    if scale[0] != scale[1] and lib.tj3SetScalingFactor(ptr, _Scale(*scale)) != 0:
        return 1
    if w and lib.tj3SetCroppingRegion(ptr, _Region(x, y, w, hh)) != 0:
        return 2
    return 3 if lib.tj3Decompress8(ptr, src, size, _address(out), 0, fmt) != 0 else 0


def decode(data: np.ndarray | bytes, *, pixel_format: str = "RGB", scale: tuple[int, int] = (1, 1),
           roi: tuple[int, int, int, int] | None = None, fast_idct: bool = False,
           fast_upsample: bool = False, max_pixels: int = 0, transient: bool = False,
           ) -> np.ndarray:
    """Decodes a JPEG to an (H, W, C) uint8 array.

    ``scale`` (num, denom) is a DCT-domain scaling factor (1/8 steps from 1/8 to 2); ``roi``
    (y, x, h, w) is a window in the *scaled* image: only it is decoded. ``fast_idct`` and
    ``fast_upsample`` trade libjpeg-turbo's accurate defaults for speed. ``max_pixels`` > 0
    refuses images whose full (unscaled) size exceeds it, before any pixel is decoded.
    The output is on recycled memory (``buffers``), or, ``transient``, from ``np.empty``
    (``decode.decode`` says when).
    CMYK/YCCK JPEGs decode only to ``pixel_format="CMYK"``.
    """
    src, size, owner, h, hdr = _ready(data)
    if max_pixels and hdr.height * hdr.width > max_pixels:
        raise JpegError(f"image of {hdr.height}x{hdr.width} pixels exceeds the limit of "
                        f"{max_pixels} pixels")
    fmt, channels = PIXEL_FORMATS[pixel_format]
    full_h, full_w = scaled(hdr.height, scale), scaled(hdr.width, scale)
    trim = None
    if roi is None or (roi[2] >= full_h and roi[3] >= full_w) or hdr.mcu[0] == 0 or \
            hdr.lossless or (roi[0] + roi[2] < full_h and not (
                _ends(owner) if hdr.ends is None else hdr.ends)):
        region = None
        out_h, out_w = full_h, full_w
        if roi is not None:
            trim = roi
    else:
        y, x, wh, ww = roi
        if y < 0 or x < 0 or wh <= 0 or ww <= 0 or y + wh > full_h or x + ww > full_w:
            raise ValueError(f"window {roi} does not fit in the {full_h}x{full_w} image")
        x0, x1 = decoded_columns(x, ww, max(1, hdr.mcu[0] * scale[0] // scale[1]), full_w)
        region = (x0, y, x1 - x0, wh)
        out_h, out_w = wh, x1 - x0
        trim = (0, x - x0, wh, ww) if (x0, out_w) != (x, ww) else None
    out = (np.empty if transient else buffers.empty)((out_h, out_w, channels), np.uint8)
    failed = _decompress(h, src, size, out, fmt, fast_idct, fast_upsample, scale, region)
    if failed == 1:
        raise JpegError(f"scaling factor {scale[0]}/{scale[1]} is not supported: "
                        f"{h.error()[0]}")
    if failed == 2:
        raise JpegError(f"cannot decode the window {roi}: {h.error()[0]}")
    if failed:
        msg, warning = h.error()
        # A warning means libjpeg-turbo finished the image anyway. Missing data (filled
        # with gray) and undecodable entropy data (garbage blocks) stay errors; benign
        # warnings such as extraneous bytes before a marker do not.
        lowered = msg.lower()
        if "premature end of jpeg file" in lowered:
            raise JpegError(f"truncated JPEG data (libjpeg-turbo: {msg})")
        if not warning or "huffman" in lowered:
            raise JpegError(f"corrupt JPEG data (libjpeg-turbo: {msg})")
    if trim is not None:
        ty, tx, th, tw = trim
        out = out[ty:ty + th, tx:tx + tw]
    return out
