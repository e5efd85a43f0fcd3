"""PNG data checked before libpng (through OpenCV) sees it, so that libpng has nothing to say.

libpng reports errors and warnings through handlers its caller installs; OpenCV installs
none, so libpng's defaults print "libpng error: ..." / "libpng warning: ..." on the
process's stderr, once per bad file and from whichever thread decoded it. stoker already
raises a DecodeError naming the file (or lists it in ``skipped_samples()``), so the lines
are noise, and cannot be silenced from Python: redirecting file descriptor 2 around the
call would also swallow every other thread's output, and the handlers are out of reach.

So ``for_libpng`` hands OpenCV only what libpng reads without complaint, and raises the
error itself where libpng would fail:

- every chunk must fit in the data and carry a correct CRC: corrupted, zeroed or
  garbage bytes (what disks, transfers and truncation produce) are caught here; libpng
  would stop at the first zlib error inside IDAT with its own message;
- the critical chunks must be well formed and in order (IHDR first and valid, PLTE for
  palette images, IDAT, IEND at the end: a file cut at a chunk boundary is refused as
  DALI refuses it);
- ancillary chunks, which libpng parses only to warn about (a bad CRC, an "incorrect
  sRGB profile", a malformed text chunk) and which never change the decoded pixels
  (OpenCV applies no gamma, colour profile, background or significant-bits shift), are
  left out; tRNS, which does change them, is kept where libpng would use it.

The check reads the data once at C speed (``zlib.crc32`` releases the GIL): about 5% of
decoding the PNG. What it cannot see without decompressing (and so doubling the work): a
file whose chunks all carry correct CRCs around compressed data that is invalid, as only a
faulty encoder writes. libpng still refuses such a file, and its line still reaches stderr.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from stoker.kernels.cpu.image.decode_header import CorruptHeader

__all__ = ["for_libpng"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Bit depths each colour type allows (PNG specification, 11.2.2).
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + \
        struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))


def _check_ihdr(body: bytes) -> tuple[int, int]:
    if len(body) != 13:
        raise CorruptHeader(f"PNG IHDR chunk has {len(body)} bytes, not 13")
    w, h, depth, ctype, compression, filtering, interlace = struct.unpack(">IIBBBBB", body)
    if not (0 < w < 2 ** 31 and 0 < h < 2 ** 31):
        raise CorruptHeader(f"PNG size {w}x{h} is invalid")
    if depth not in _DEPTHS.get(ctype, ()):
        raise CorruptHeader(f"PNG colour type {ctype} with bit depth {depth} is invalid")
    if compression or filtering or interlace > 1:
        raise CorruptHeader("PNG IHDR names an unknown compression, filter or interlace "
                            "method")
    return ctype, depth


def _trns_is_used(body: bytes, ctype: int, depth: int, palette: int) -> bool:
    """Whether libpng would apply this tRNS (it ignores an invalid one, with a warning)."""
    if ctype == 3:
        return 0 < len(body) <= palette
    size = {0: 2, 2: 6}.get(ctype)
    if size is None or len(body) != size:
        return False
    return all(v < 1 << depth for v in struct.unpack(f">{size // 2}H", body))


def for_libpng(buf: np.ndarray) -> np.ndarray:
    """The PNG in ``buf`` (1-D uint8), checked: itself when it holds only the chunks
    libpng decodes, else a copy without the others. Raises CorruptHeader saying what is
    wrong where libpng would refuse the data."""
    data = memoryview(buf)
    n = len(data)
    if bytes(data[:8]) != _SIGNATURE:
        raise CorruptHeader("PNG signature is missing")
    keep: list[bytes | memoryview] = [_SIGNATURE]
    dropped = False
    ctype = depth = palette = 0
    seen: list[bytes] = []
    pos = 8
    while True:
        if pos + 12 > n:
            raise CorruptHeader("PNG data ends before its IEND chunk (corrupt or cut short)")
        length, kind = struct.unpack_from(">I4s", data, pos)
        if length > n - pos - 12:
            raise CorruptHeader(f"PNG chunk {kind!r} at byte {pos} claims {length} bytes, "
                                f"but the data ends {max(n - pos - 12, 0)} bytes after its "
                                "header (corrupt or cut short)")
        if not seen and kind != b"IHDR":
            raise CorruptHeader("PNG data does not start with an IHDR chunk")
        whole = data[pos:pos + 12 + length]
        body = whole[8:8 + length]
        crc = zlib.crc32(body, zlib.crc32(kind))
        critical = not kind[0] & 0x20
        if crc != struct.unpack_from(">I", whole, 8 + length)[0]:
            if critical:
                raise CorruptHeader(f"PNG chunk {kind!r} at byte {pos} fails its CRC check "
                                    "(corrupt data)")
            dropped = True  # libpng skips a damaged ancillary chunk
        elif kind == b"IHDR":
            if seen:
                raise CorruptHeader("PNG data has a second IHDR chunk")
            ctype, depth = _check_ihdr(bytes(body))
            keep.append(whole)
        elif kind == b"PLTE":
            if b"PLTE" in seen or b"IDAT" in seen:
                raise CorruptHeader("PNG PLTE chunk is repeated or after the image data")
            if ctype == 3:
                if length == 0 or length % 3 or length > 768:
                    raise CorruptHeader(f"PNG palette of {length} bytes is invalid")
                palette = min(length // 3, 1 << depth)
                if palette * 3 < length:  # libpng cuts it, with a warning
                    whole, dropped = _chunk(b"PLTE", bytes(body[:palette * 3])), True
                keep.append(whole)
            else:
                dropped = True  # a suggested palette: colour images decode without it
        elif kind == b"tRNS":
            if b"IDAT" not in seen and _trns_is_used(bytes(body), ctype, depth, palette):
                keep.append(whole)
            else:
                dropped = True
        elif kind == b"IDAT":
            if ctype == 3 and b"PLTE" not in seen:
                raise CorruptHeader("PNG palette image has no PLTE chunk before its data")
            if seen[-1] != b"IDAT" and b"IDAT" in seen:
                raise CorruptHeader(f"PNG image data is split by a {seen[-1]!r} chunk")
            keep.append(whole)
        elif kind == b"IEND":
            if b"IDAT" not in seen:
                raise CorruptHeader("PNG data has no IDAT chunk")
            break
        elif critical:
            raise CorruptHeader(f"PNG chunk {kind!r} at byte {pos} is critical but unknown")
        else:
            dropped = True
        seen.append(kind)
        pos += 12 + length
    if not dropped:
        return buf
    keep.append(_IEND)
    return np.frombuffer(b"".join(keep), np.uint8)
