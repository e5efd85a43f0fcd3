"""What an encoded image is, read from its first bytes and headers, without decoding pixels.

``probe`` sniffs the format by its magic bytes and reads size, native channel count, bit
depth and EXIF orientation. Random crop windows and ``peek_image_shape`` need only this,
and a decoded-size limit can refuse a huge image before any memory is spent on it.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from stoker.kernels.cpu.image import turbojpeg

# Formats decoders.image reads. GIF is recognised only to name it in the error: DALI does
# not decode it either.
FORMATS = ("jpeg", "png", "bmp", "tiff", "webp", "pnm", "jpeg2000")


class UnsupportedFormat(ValueError):
    """The bytes are no image format that the decoders read."""


class CorruptHeader(ValueError):
    """The format was recognised but its header is damaged or cut short."""


class ImageInfo(NamedTuple):
    """What ``probe`` reads. A named tuple: a frozen dataclass took 5 us to make between two
    decodes, a tuple 1 us, and every image is probed."""

    format: str
    height: int  # as stored, before EXIF orientation
    width: int
    channels: int  # what ANY_DATA gives: 1 gray, 2 gray+alpha, 3 colour, 4 with alpha/CMYK
    bit_depth: int = 8  # 8 or 16 (what the decoder hands out)
    orientation: int = 1  # EXIF orientation tag, 1..8
    colorspace: str = ""  # JPEG only: RGB, YCbCr, GRAY, CMYK, YCCK

    @property
    def transposed(self) -> bool:
        return self.orientation >= 5

    def shape(self, adjust_orientation: bool = True) -> tuple[int, int]:
        """(height, width) of the decoded image, after orientation when asked."""
        if adjust_orientation and self.transposed:
            return self.width, self.height
        return self.height, self.width


def sniff(data: bytes) -> str:
    """The format's name, from magic bytes; raises UnsupportedFormat."""
    if data[:3] == b"\xff\xd8\xff":  # first: nearly every training image is a JPEG
        return "jpeg"
    head = bytes(data[:16])
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if head[:2] == b"BM":
        return "bmp"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if len(head) > 2 and head[0:1] == b"P" and head[1:2] in b"1234567" and \
            head[2:3] in b" \t\r\n#":
        return "pnm"
    if head[:12] == b"\x00\x00\x00\x0cjP  \r\n\x87\n" or head[:4] == b"\xff\x4f\xff\x51":
        return "jpeg2000"
    if not len(data):
        raise UnsupportedFormat("empty input (0 bytes)")
    if head[:6] in (b"GIF87a", b"GIF89a"):
        raise UnsupportedFormat("GIF images are not supported (decoders read JPEG, PNG, BMP, "
                                "TIFF, WebP, PNM and JPEG 2000)")
    raise UnsupportedFormat(f"unrecognised image format (first bytes {head[:8].hex(' ')}); "
                            "decoders read JPEG, PNG, BMP, TIFF, WebP, PNM and JPEG 2000")


# -- EXIF ---------------------------------------------------------------------------------------

# Both readers below are also compiled (numba, ``decode_resize_loop``) from this source, so
# they index bytes (or a 1-D uint8 array) and call nothing but an inner function.

def exif_orientation(tiff: bytes | memoryview | np.ndarray) -> int:
    """The orientation tag (0x0112) of IFD0 in a TIFF-structured block; 1 if absent."""
    n = len(tiff)
    if n < 8 or tiff[0] != tiff[1] or (tiff[0] != 0x49 and tiff[0] != 0x4D):  # II or MM
        return 1
    hi, lo = (1, 0) if tiff[0] == 0x49 else (0, 1)  # II: little-endian

    def u16(at: int) -> int:
        return int(tiff[at + hi]) << 8 | int(tiff[at + lo])

    ifd = u16(4 + 2 * hi) << 16 | u16(4 + 2 * lo)
    if ifd + 2 > n:
        return 1
    for i in range(min(u16(ifd), 512)):
        at = ifd + 2 + 12 * i
        if at + 12 > n:
            return 1
        if u16(at) == 0x0112:
            o = u16(at + 8) if u16(at + 2) == 3 else 1  # a SHORT
            return o if 1 <= o <= 8 else 1
    return 1


def jpeg_exif(data: bytes | memoryview | np.ndarray) -> tuple[int, int]:
    """Where a JPEG's Exif block lies, (start, end); (0, 0) if the markers before the first
    scan hold no Exif APP1 segment."""
    pos, n = 2, len(data)
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            return 0, 0
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker == 0xD8 or marker == 0x01 or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker == 0xDA:  # start of scan: no more headers
            return 0, 0
        length = int(data[pos + 2]) << 8 | int(data[pos + 3])
        if marker == 0xE1 and pos + 10 <= n and data[pos + 4] == 0x45 and \
                data[pos + 5] == 0x78 and data[pos + 6] == 0x69 and data[pos + 7] == 0x66 \
                and data[pos + 8] == 0 and data[pos + 9] == 0:  # "Exif\0\0"
            return pos + 10, min(n, pos + 2 + length)
        pos += 2 + length
    return 0, 0


def _jpeg_orientation(data: bytes | memoryview) -> int:
    start, end = jpeg_exif(data)
    return exif_orientation(data[start:end])


# -- per-format headers -------------------------------------------------------------------------

def _jpeg(data: bytes) -> ImageInfo:
    try:
        hdr = turbojpeg.header(data)
        h, w, cs = hdr.height, hdr.width, hdr.colorspace
    except ImportError:
        h, w, cs = _jpeg_sof(data)
    except turbojpeg.JpegError as e:
        raise CorruptHeader(f"JPEG header could not be decoded: {e}") from None
    channels = {"GRAY": 1, "CMYK": 4, "YCCK": 4}.get(cs, 3)
    return ImageInfo("jpeg", h, w, channels, 8, _jpeg_orientation(data), cs)


def _jpeg_sof(data: bytes) -> tuple[int, int, str]:
    """Size and colour model from the SOF marker (used when libturbojpeg is missing)."""
    pos = 2
    while pos + 9 < len(data):
        if data[pos] != 0xFF:
            break
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w, nc = struct.unpack_from(">HHB", data, pos + 5)
            return h, w, {1: "GRAY", 4: "CMYK"}.get(nc, "YCbCr")
        pos += 2 + length
    raise CorruptHeader("JPEG header has no frame (SOF) marker")


def _png(data: bytes) -> ImageInfo:
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise CorruptHeader("PNG header is cut short or lacks IHDR")
    w, h, depth, ctype = struct.unpack_from(">IIBB", data, 16)
    orientation, trns = 1, False
    for pos, length, kind in _png_chunks(data):
        if kind == b"tRNS":
            trns = True
        elif kind == b"eXIf":
            orientation = exif_orientation(bytes(data[pos + 8:pos + 8 + length]))
    channels = {0: 1, 2: 3, 3: 4 if trns else 3, 4: 2, 6: 4}.get(ctype)
    if channels is None:
        raise CorruptHeader(f"PNG colour type {ctype} is invalid")
    return ImageInfo("png", h, w, channels, 16 if depth == 16 else 8, orientation)


def _png_chunks(data: bytes | memoryview) -> Iterator[tuple[int, int, bytes]]:
    """(position, length, type) of each chunk whose header the data holds, up to IEND."""
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        yield pos, length, kind
        if kind == b"IEND":
            return
        pos += 12 + length


def _bmp(data: bytes) -> ImageInfo:
    if len(data) < 30:
        raise CorruptHeader("BMP header is cut short")
    (dib,) = struct.unpack_from("<I", data, 14)
    if dib == 12:
        w, h, _, bpp = struct.unpack_from("<HHHH", data, 18)
    else:
        w, h, _, bpp = struct.unpack_from("<iiHH", data, 18)
    return ImageInfo("bmp", abs(h), abs(w), 4 if bpp == 32 else 3, 8)


def _webp(data: bytes) -> ImageInfo:
    kind = bytes(data[12:16])
    alpha, orientation = False, 1
    if kind == b"VP8X" and len(data) >= 30:
        flags = data[20]
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        alpha = bool(flags & 0x10)
        if flags & 0x08:  # an EXIF chunk follows somewhere in the RIFF list
            pos = 12
            while pos + 8 <= len(data):
                tag, length = struct.unpack_from("<4sI", data, pos)
                if tag == b"EXIF":
                    block = bytes(data[pos + 8:pos + 8 + length])
                    orientation = exif_orientation(block[6:] if block[:4] == b"Exif" else block)
                    break
                pos += 8 + length + (length & 1)
    elif kind == b"VP8 " and len(data) >= 30:
        w, h = (v & 0x3FFF for v in struct.unpack_from("<HH", data, 26))
    elif kind == b"VP8L" and len(data) >= 25:
        (bits,) = struct.unpack_from("<I", data, 21)
        w, h = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        alpha = bool(bits >> 28 & 1)
    else:
        raise CorruptHeader("WebP header is cut short or of an unknown kind")
    return ImageInfo("webp", h, w, 4 if alpha else 3, 8, orientation)


_PNM_TOKEN = re.compile(rb"(?:\s|#[^\n]*\n)*(\S+)")


def _pnm(data: bytes) -> ImageInfo:
    kind = data[1:2]
    head = bytes(data[:512])
    if kind == b"7":  # PAM: named header fields
        fields = dict(re.findall(rb"(WIDTH|HEIGHT|DEPTH|MAXVAL)\s+(\d+)", head))
        try:
            w, h = int(fields[b"WIDTH"]), int(fields[b"HEIGHT"])
            c, maxval = int(fields.get(b"DEPTH", 1)), int(fields.get(b"MAXVAL", 255))
        except (KeyError, ValueError):
            raise CorruptHeader("PAM header lacks WIDTH/HEIGHT") from None
        return ImageInfo("pnm", h, w, c, 16 if maxval > 255 else 8)
    tokens, pos = [], 2
    want = 2 if kind in b"14" else 3
    while len(tokens) < want:
        m = _PNM_TOKEN.match(head, pos)
        if m is None:
            raise CorruptHeader("PNM header is cut short")
        tokens.append(m.group(1))
        pos = m.end()
    try:
        w, h = int(tokens[0]), int(tokens[1])
        maxval = int(tokens[2]) if want == 3 else 1
    except ValueError:
        raise CorruptHeader("PNM header has a non-numeric size") from None
    return ImageInfo("pnm", h, w, 3 if kind in b"36" else 1, 16 if maxval > 255 else 8)


def _tiff(data: bytes) -> ImageInfo:
    e = "<" if data[:2] == b"II" else ">"
    if data[2:4] in (b"+\x00", b"\x00+"):
        raise UnsupportedFormat("BigTIFF images are not supported")
    tags: dict[int, int] = {}
    try:
        (ifd,) = struct.unpack_from(e + "I", data, 4)
        (count,) = struct.unpack_from(e + "H", data, ifd)
        for i in range(min(count, 1024)):
            tag, typ, n, raw = struct.unpack_from(e + "HHI4s", data, ifd + 2 + 12 * i)
            if typ == 3 and n > 2:  # values live elsewhere: take the first
                (off,) = struct.unpack_from(e + "I", raw)
                tags[tag] = struct.unpack_from(e + "H", data, off)[0]
            elif typ == 3:
                tags[tag] = struct.unpack_from(e + "H", raw)[0]
            elif typ == 4:
                tags[tag] = struct.unpack_from(e + "I", raw)[0]
            else:
                tags[tag] = n
    except struct.error:
        raise CorruptHeader("TIFF header is cut short") from None
    if 256 not in tags or 257 not in tags:
        raise CorruptHeader("TIFF header lacks the image size")
    spp = tags.get(277, 1)
    channels = 3 if tags.get(262) == 3 else spp  # palette images expand to colour
    depth = 16 if tags.get(258, 8) == 16 else 8
    orientation = tags.get(274, 1)
    return ImageInfo("tiff", tags[257], tags[256], channels, depth,
                     orientation if 1 <= orientation <= 8 else 1)


def _jpeg2000(data: bytes) -> ImageInfo:
    at = bytes(data[:4096]).find(b"ihdr")
    if at >= 0 and at + 15 <= len(data):
        h, w, nc, bpc = struct.unpack_from(">IIHB", data, at + 4)
        return ImageInfo("jpeg2000", h, w, nc, 16 if (bpc & 0x7F) + 1 > 8 else 8)
    at = bytes(data[:4096]).find(b"\xff\x51")  # SIZ marker of a bare codestream
    if at < 0 or at + 42 > len(data):
        raise CorruptHeader("JPEG 2000 header lacks its size")
    xs, ys, xo, yo = struct.unpack_from(">IIII", data, at + 6)
    (nc,) = struct.unpack_from(">H", data, at + 38)
    depth = (data[at + 40] & 0x7F) + 1
    return ImageInfo("jpeg2000", ys - yo, xs - xo, nc, 16 if depth > 8 else 8)


_READERS = {"jpeg": _jpeg, "png": _png, "bmp": _bmp, "tiff": _tiff, "webp": _webp,
            "pnm": _pnm, "jpeg2000": _jpeg2000}


def probe(data: bytes | memoryview | Any) -> ImageInfo:
    """Format, size, channels, depth and orientation of an encoded image."""
    data = memoryview(data).cast("B")  # bytes or a uint8 array, sliced without copies
    fmt = sniff(data)
    info = _READERS[fmt](data)
    if info.height <= 0 or info.width <= 0:
        raise CorruptHeader(f"{fmt.upper()} header gives an empty size "
                            f"{info.height}x{info.width}")
    return info
