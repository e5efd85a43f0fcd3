"""Mutations for the parser fuzzer: a pure function of (format, run seed, input number).

``make_input(fmt, seed, i)`` picks a seed file and stacks one to four mutations on it,
drawn from a ``random.Random`` keyed by (fmt, seed, i). Any input can therefore be
rebuilt from its number alone: the parent process regenerates the input that killed a
child instead of shipping bytes around, and a saved crash replays exactly.

Mutations: bit flips, byte overwrites with boundary values, insertion, deletion and
duplication of byte runs, truncation, splicing with another seed, and overwrites of the
header fields each format keeps sizes, counts and offsets in (width, height, depth,
chunk lengths, IFD offsets) with extreme values, which drive images past the decoded-size
limit and lengths past the end of the data. Text formats (PNM headers, file lists, glob
patterns) get token-level edits as well.
"""

from __future__ import annotations

import hashlib
import random
import re
import struct
import zlib

from seeds import seeds

_BYTE_VALUES = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
_WORD_VALUES = (0, 1, 2, 0x7F, 0xFF, 0x100, 0x3FFF, 0x4000, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF)
_DWORD_VALUES = (0, 1, 0x7FFF, 0xFFFF, 0x10000, 0x100000, 0x7FFFFFFF, 0x80000000,
                 0xFFFFFFFE, 0xFFFFFFFF)
_NUMBERS = (b"0", b"1", b"-1", b"65535", b"65536", b"2147483647", b"2147483648",
            b"4294967296", b"99999999999999999999", b"1e9", b"0x10", b"+5", b"")
_GLOB_BYTES = b"*?[]!^-\\.aZ/ \x00\xe9"
MAX_LEN = 1 << 16


def rng_for(fmt: str, seed: int, i: int) -> random.Random:
    digest = hashlib.blake2b(f"{fmt}:{seed}:{i}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "little"))


# -- where each format keeps its numbers: (offset, width in bytes, byte order) -------------


def _jpeg_fields(data: bytes) -> list[tuple[int, int, str]]:
    fields, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        fields.append((pos + 2, 2, ">"))  # segment length
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            fields += [(pos + 4, 1, ">"), (pos + 5, 2, ">"), (pos + 7, 2, ">"),
                       (pos + 9, 1, ">")]  # precision, height, width, components
            fields += [(pos + 11 + 3 * k, 1, ">") for k in range(4)]  # sampling factors
            fields += [(pos + 12 + 3 * k, 1, ">") for k in range(4)]  # quant table ids
        elif marker == 0xDD:  # restart interval
            fields.append((pos + 4, 2, ">"))
        elif marker == 0xDA:  # scan header: components, then spectral selection
            fields += [(pos + 4, 1, ">"), (pos + 5 + 2 * data[pos + 4], 1, ">"),
                       (pos + 6 + 2 * data[pos + 4], 1, ">")]
            break
        elif marker in (0xC4, 0xDB):  # table class/id
            fields.append((pos + 4, 1, ">"))
        pos += 2 + length
    return fields


def _png_fields(data: bytes) -> list[tuple[int, int, str]]:
    fields = [(16, 4, ">"), (20, 4, ">"), (24, 1, ">"), (25, 1, ">"), (26, 1, ">"),
              (28, 1, ">")]  # width, height, depth, colour type, compression, interlace
    pos = 8
    while pos + 8 <= len(data):
        fields.append((pos, 4, ">"))  # chunk length
        (length,) = struct.unpack_from(">I", data, pos)
        pos += 12 + length
    return fields


def _bmp_fields(data: bytes) -> list[tuple[int, int, str]]:
    return [(2, 4, "<"), (10, 4, "<"), (14, 4, "<"), (18, 4, "<"), (22, 4, "<"), (26, 2, "<"),
            (28, 2, "<"), (30, 4, "<"), (34, 4, "<"), (46, 4, "<"), (50, 4, "<")]


def _tiff_fields(data: bytes) -> list[tuple[int, int, str]]:
    e = "<" if data[:2] == b"II" else ">"
    fields = [(4, 4, e)]
    try:
        (ifd,) = struct.unpack_from(e + "I", data, 4)
        (count,) = struct.unpack_from(e + "H", data, ifd)
    except struct.error:
        return fields
    fields.append((ifd, 2, e))
    for k in range(min(count, 64)):
        at = ifd + 2 + 12 * k
        fields += [(at, 2, e), (at + 2, 2, e), (at + 4, 4, e), (at + 8, 4, e), (at + 8, 2, e)]
    return fields


def _webp_fields(data: bytes) -> list[tuple[int, int, str]]:
    fields = [(4, 4, "<"), (16, 4, "<"), (20, 1, "<"), (24, 3, "<"), (27, 3, "<"),
              (26, 2, "<"), (28, 2, "<"), (21, 4, "<")]
    pos = 12
    while pos + 8 <= len(data):  # every chunk's length
        fields.append((pos + 4, 4, "<"))
        (length,) = struct.unpack_from("<I", data, pos + 4)
        pos += 8 + length + (length & 1)
    return fields


_FIELDS = {"jpeg": _jpeg_fields, "jpeg_opencv": _jpeg_fields, "png": _png_fields,
           "bmp": _bmp_fields, "tiff": _tiff_fields, "webp": _webp_fields}


def _extreme(rng: random.Random, width: int) -> int:
    if rng.random() < 0.2:
        return rng.getrandbits(8 * width)
    values = {1: _BYTE_VALUES, 2: _WORD_VALUES}.get(width, _DWORD_VALUES)
    return rng.choice(values) & ((1 << 8 * width) - 1)


def _orientation_fields(data: bytes) -> list[tuple[int, int, str]]:
    """The value of every EXIF/TIFF orientation entry (tag 0x0112, type SHORT)."""
    found = [(m.start() + 8, 2, "<") for m in re.finditer(rb"\x12\x01\x03\x00", data)]
    return found + [(m.start() + 8, 2, ">") for m in re.finditer(rb"\x01\x12\x00\x03", data)]


def _overwrite_field(data: bytearray, fmt: str, rng: random.Random) -> None:
    fields = _FIELDS[fmt](bytes(data))
    orientation = _orientation_fields(bytes(data))
    if orientation and rng.random() < 0.3:
        at, width, order = rng.choice(orientation)
        if at + width <= len(data):
            value = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xFFFF))
            data[at:at + width] = value.to_bytes(2, "big" if order == ">" else "little")
            return
    fields = [f for f in fields if f[0] + f[1] <= len(data)]
    if not fields:
        return
    at, width, order = rng.choice(fields)
    value = _extreme(rng, width)
    data[at:at + width] = value.to_bytes(width, "big" if order == ">" else "little")
    if fmt == "png" and rng.random() < 0.7:
        _fix_png_crcs(data)  # libpng checks CRCs: fixing them lets the change reach deeper


def _fix_png_crcs(data: bytearray) -> None:
    pos = 8
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        end = pos + 8 + length
        if end + 4 > len(data):
            return
        data[end:end + 4] = struct.pack(">I", zlib.crc32(data[pos + 4:end]))
        pos = end + 4


# -- generic byte mutations ------------------------------------------------------------------


def _body_start(data: bytearray, fmt: str) -> int:
    """Where the coded pixels begin (JPEG: after the first scan header), so that a share of
    the mutations reaches the entropy decoder instead of dying in the headers."""
    if fmt.startswith("jpeg"):
        at = data.find(b"\xff\xda")
        if at >= 0 and at + 4 <= len(data):
            return min(len(data), at + 2 + int.from_bytes(data[at + 2:at + 4], "big"))
    return min(len(data), 64)


def _pos(data: bytearray, rng: random.Random, fmt: str, end: bool = False) -> int:
    """A position: in the headers, in the coded data, or anywhere, a third of the time each."""
    n = len(data) + end
    where = rng.randrange(3)
    if where == 0:
        return rng.randrange(min(n, 64))
    if where == 1:
        body = min(_body_start(data, fmt), n - 1)
        return rng.randrange(body, n)
    return rng.randrange(n)


def _span(data: bytearray, rng: random.Random, fmt: str) -> tuple[int, int]:
    a = _pos(data, rng, fmt, end=True)
    return a, min(len(data), a + rng.choice((1, 2, 4, 8, 16, 64, 256)))


def _mutate_bytes(data: bytearray, rng: random.Random, fmt: str) -> None:
    kind = rng.randrange(9)
    if not data:
        data.extend(rng.randbytes(rng.randrange(1, 16)))
    elif kind == 0:  # flip 1-8 bits; headers get more of them
        for _ in range(rng.randint(1, 8)):
            data[_pos(data, rng, fmt)] ^= 1 << rng.randrange(8)
    elif kind == 1:
        data[_pos(data, rng, fmt)] = rng.choice(_BYTE_VALUES + (rng.randrange(256),))
    elif kind == 2:  # insert
        at = _pos(data, rng, fmt, end=True)
        data[at:at] = rng.randbytes(rng.choice((1, 2, 4, 16)))
    elif kind == 3:  # delete
        a, b = _span(data, rng, fmt)
        del data[a:b]
    elif kind == 4:  # duplicate a run in place or elsewhere
        a, b = _span(data, rng, fmt)
        at = _pos(data, rng, fmt, end=True)
        data[at:at] = data[a:b] * rng.choice((1, 1, 2, 16))
    elif kind == 5:  # truncate
        del data[_pos(data, rng, fmt):]
    elif kind == 6:  # splice with another seed of the same (or, rarely, any) format
        donor = rng.choice(seeds(fmt if rng.random() < 0.9 else rng.choice(
            ("jpeg", "png", "bmp", "tiff", "webp", "pnm"))))
        cut, take = rng.randrange(len(data) + 1), rng.randrange(len(donor) + 1)
        data[cut:] = donor[take:]
    elif kind == 7 and fmt in _FIELDS:
        _overwrite_field(data, fmt, rng)
    else:  # a 2- or 4-byte boundary value anywhere in the first 256 bytes
        width = rng.choice((2, 4))
        at = rng.randrange(max(1, min(len(data), 256) - width + 1))
        data[at:at + width] = _extreme(rng, width).to_bytes(width, rng.choice(("big", "little")))


# -- text formats ----------------------------------------------------------------------------


def _mutate_tokens(data: bytearray, rng: random.Random, fmt: str) -> None:
    """Replaces a number with an extreme one, or inserts bytes that matter to the format."""
    numbers = [m.span() for m in re.finditer(rb"\d+", bytes(data[:4096]))]
    if numbers and rng.random() < 0.6:
        a, b = rng.choice(numbers)
        data[a:b] = rng.choice(_NUMBERS)
        return
    specials = {"file_list": b" \t\r\n\x0b\x0c#\x00-0123456789",
                "glob": _GLOB_BYTES}.get(fmt, b" \t\n#0123456789P")
    at = rng.randrange(len(data) + 1)
    data[at:at] = bytes(rng.choice(specials) for _ in range(rng.randint(1, 6)))


def make_input(fmt: str, seed: int, i: int) -> bytes:
    """Mutated input number ``i`` of the run ``seed`` for ``fmt``."""
    rng = rng_for(fmt, seed, i)
    data = bytearray(rng.choice(seeds(fmt)))
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        if fmt in ("pnm", "file_list", "glob") and rng.random() < 0.5:
            _mutate_tokens(data, rng, fmt)
        else:
            _mutate_bytes(data, rng, fmt)
        del data[MAX_LEN:]
    return bytes(data)
