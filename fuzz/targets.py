"""What the fuzzer calls with each input, and what counts as correct behaviour.

A target takes the input bytes and its number (which picks output type, dtype and the
other call variants, so every path is reached without random state) and

- returns None: the input was accepted and every consistency check held;
- returns a string: accepted, but a check failed (a *mismatch*: output shape unlike the
  header's, a window decode unlike the same window of a full decode, a parse unlike the
  reference parser's);
- raises one of ``DOCUMENTED[fmt]``: the input was refused the documented way;
- raises anything else: a crash (a bug: callers only expect the documented errors).

The documented errors, read from the code: ``decode``/``decode_scaled``/``probe`` raise
``DecodeError`` (corrupt, truncated, too large), ``UnsupportedFormat`` (unknown magic,
BigTIFF) and ``CorruptHeader`` (``probe`` on a damaged header), all ValueErrors;
``turbojpeg.decode`` raises ``JpegError``; ``parse_file_list`` raises ``FileListError``.
A bare ValueError, IndexError, struct.error, cv2.error, MemoryError... is a crash.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re

import numpy as np

from stoker.kernels.cpu.image import turbojpeg
from stoker.kernels.cpu.image.decode import (
    OUTPUT_TYPES,
    DecodeError,
    UnsupportedFormat,
    decode,
    decode_scaled,
    output_shape,
    probe,
)
from stoker.kernels.cpu.image.decode_header import CorruptHeader
from stoker.readers.file_list import FileListError, parse_file_list
from stoker.readers.index import glob_matcher

IMAGE_ERRORS = (DecodeError, UnsupportedFormat, CorruptHeader)
DOCUMENTED = {"jpeg": IMAGE_ERRORS + (turbojpeg.JpegError,), "jpeg_opencv": IMAGE_ERRORS,
              "png": IMAGE_ERRORS,
              "bmp": IMAGE_ERRORS, "tiff": IMAGE_ERRORS, "webp": IMAGE_ERRORS,
              "pnm": IMAGE_ERRORS, "file_list": (FileListError,), "glob": ()}
DTYPES = (np.uint8, np.float32, np.uint16)
# Inputs decode with this pixel limit (the decoded-size limit path is what refuses the
# mutated sizes above it), so one decode stays small on a shared machine.
FUZZ_MAX_PIXELS = 1 << 22


# -- images ----------------------------------------------------------------------------------


def image(data: bytes, i: int, turbo: bool = True) -> str | None:
    """Probe, then full, window and DCT-scaled decodes; JPEGs also through the binding.
    ``turbo``: whether libturbojpeg is in use."""
    max_pixels = FUZZ_MAX_PIXELS
    info = probe(data)
    jpeg = info.format == "jpeg" and turbo
    output_type = OUTPUT_TYPES[i % len(OUTPUT_TYPES)]
    dtype = DTYPES[(i // len(OUTPUT_TYPES)) % len(DTYPES)]
    orient = i % 7 != 0
    full = decode(data, output_type, dtype=dtype, adjust_orientation=orient,
                  max_pixels=max_pixels)
    if full.dtype != dtype:
        return f"decode gave {full.dtype}, asked for {np.dtype(dtype)}"
    want = output_shape(info, output_type, orient)
    if info.format == "bmp" and output_type == "ANY_DATA":
        # Measured on DALI 2.4: palette and 1-bit BMPs decode to 1 channel while
        # peek_image_shape says 3; stoker's probe and decode mirror both.
        want = want[:2] + full.shape[2:]
    if full.shape != want:
        return f"decode({output_type}) gave shape {full.shape}, probe predicts {want}"
    oh, ow = full.shape[:2]
    roi = (oh // 4, ow // 3, max(1, oh // 2), max(1, ow // 2))
    try:
        window = decode(data, output_type, dtype=dtype, roi=roi, adjust_orientation=orient,
                        max_pixels=max_pixels)
    except IMAGE_ERRORS as e:
        if not jpeg or _jpeg_decodes_cleanly(data):
            return f"window decode refused what the full decode accepted: {e}"
        raise
    y, x, h, w = roi
    if window.shape != (h, w, full.shape[2]):
        return f"window {roi} decoded to shape {window.shape}"
    if not _same_pixels(window, full[y:y + h, x:x + w], output_type) and \
            (not jpeg or _jpeg_decodes_cleanly(data)):
        return f"window {roi} differs from that window of the full decode"
    try:
        scaled, (y0, x0, y1, x1) = decode_scaled(
            data, (max(1, oh // 5), max(1, ow // 5)), output_type, dtype=dtype,
            roi=roi if i % 2 else None, adjust_orientation=orient, max_pixels=max_pixels)
    except IMAGE_ERRORS as e:
        if not jpeg or _jpeg_decodes_cleanly(data):
            return f"scaled decode refused what the full decode accepted: {e}"
        raise
    sh, sw = scaled.shape[:2]
    if not (0 <= y0 < y1 <= sh + 1e-6 and 0 <= x0 < x1 <= sw + 1e-6):
        return f"scaled decode window {(y0, x0, y1, x1)} outside its {sh}x{sw} image"
    if jpeg:
        # The binding directly: DCT scales the decode path does not use, and a cropped
        # region at a scale, in every pixel format.
        fmt = "CMYK" if info.colorspace in ("CMYK", "YCCK") else \
            ("RGB", "BGR", "GRAY")[i % 3]
        scale = ((1, 8), (3, 8), (1, 2), (7, 8), (2, 1))[i % 5]
        th, tw = turbojpeg.scaled(info.height, scale), turbojpeg.scaled(info.width, scale)
        region = (th // 3, tw // 4, max(1, th // 2), max(1, tw // 2))
        out = turbojpeg.decode(data, pixel_format=fmt, scale=scale, roi=region,
                               fast_idct=bool(i & 1), fast_upsample=bool(i & 2),
                               max_pixels=max_pixels)
        if out.shape[:2] != region[2:]:
            return f"turbojpeg region {region} at {scale} gave shape {out.shape}"
    return None


def _same_pixels(a: np.ndarray, b: np.ndarray, output_type: str) -> bool:
    """Equal, except that YCbCr goes through a float matrix product whose rounding numpy
    may order differently for a window than for the whole image (last bit of a float32,
    or one level where an integer lands on .5)."""
    if output_type != "YCbCr":
        return np.array_equal(a, b)
    tol = 1e-6 if a.dtype.kind == "f" else 1
    return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=0, atol=tol)


def _jpeg_decodes_cleanly(data: bytes) -> bool:
    """Whether libjpeg-turbo decodes the JPEG without even a warning. Only then must a
    window decode succeed and equal the same window of a full decode: on corrupt data
    that stoker lets pass with a warning (a damaged later scan of a progressive JPEG,
    "didn't expect more than one scan"), decoding part of the rows can meet other damage
    than decoding them all."""
    src, size, owner = turbojpeg._buffer(data)
    h, hdr = turbojpeg._open(src, size, owner)
    fmt = "CMYK" if hdr.colorspace in ("CMYK", "YCCK") else "RGB"
    pixel_format, channels = turbojpeg.PIXEL_FORMATS[fmt]
    out = np.empty((hdr.height, hdr.width, channels), np.uint8)
    return h.lib.tj3Decompress8(h.ptr, src, size, out.ctypes.data, 0, pixel_format) == 0


# -- file lists ------------------------------------------------------------------------------

_LINE = re.compile(rb"(.*?)[ \t\r\x0b\x0c]+(\d+)", re.DOTALL)


def reference_file_list(data: bytes) -> list[tuple[bytes, int]] | int:
    """The documented rules, written the slow obvious way: the entries, or the 1-based
    number of the first bad line."""
    entries = []
    for number, line in enumerate(data.split(b"\n"), 1):
        content = line.rstrip(b" \t\r\x0b\x0c\n")
        if not content:
            continue
        m = _LINE.fullmatch(content)
        if m is None or not m.group(1) or int(m.group(2)) > 2**31 - 1:
            return number
        entries.append((m.group(1), int(m.group(2))))
    return entries


def file_list(data: bytes, i: int) -> str | None:
    expected = reference_file_list(data)
    try:
        starts, ends, labels = parse_file_list(data)
    except FileListError as e:
        if expected != e.line:
            return f"raised for line {e.line}, the reference {expected}"
        raise
    if not (len(starts) == len(ends) == len(labels)) or labels.dtype != np.int32:
        return "parse_file_list returned arrays of unequal length or wrong dtype"
    got = [(data[a:b], int(v)) for a, b, v in zip(starts, ends, labels, strict=True)]
    if got != expected:
        want = expected if isinstance(expected, int) else expected[:3]
        return f"parsed {got[:3]}..., the reference {want}"
    return None


# -- glob patterns ---------------------------------------------------------------------------

_FNM_CASEFOLD = 1 << 4
_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.fnmatch.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]


def glob(data: bytes, i: int) -> str | None:
    """First line: the name; further lines: patterns. glibc's fnmatch is the reference
    for ASCII inputs (DALI's readers filter with it)."""
    name, *patterns = data.decode("utf-8", "surrogateescape").split("\n")
    case_sensitive = bool(i & 1)
    got = glob_matcher(patterns, case_sensitive)(name)
    if not isinstance(got, bool):
        return f"glob_matcher returned {got!r}"
    if data.isascii() and b"\x00" not in data:
        flags = 0 if case_sensitive else _FNM_CASEFOLD
        want = any(_libc.fnmatch(p.encode(), name.encode(), flags) == 0 for p in patterns)
        if got != want:
            return f"{patterns!r} vs {name!r} (case_sensitive={case_sensitive}): {got}, " \
                   f"glibc fnmatch {want}"
    return None


def jpeg_without_libturbojpeg(data: bytes, i: int) -> str | None:
    """The path taken where no libturbojpeg is installed: stoker's own SOF parser in
    ``decode_header`` reads the size, OpenCV decodes."""
    def missing() -> None:
        raise ImportError("libturbojpeg hidden by the fuzzer")

    turbojpeg._handle = missing  # this process fuzzes only this format
    return image(data, i, turbo=False)


TARGETS = {"jpeg": image, "jpeg_opencv": jpeg_without_libturbojpeg, "png": image,
           "bmp": image, "tiff": image, "webp": image, "pnm": image, "file_list": file_list,
           "glob": glob}
