"""FITS files for ``fn.experimental.readers.fits``: headers, HDUs, image data.

The format (the FITS Standard 4.0): a file is a run of HDUs, each a header of 80-byte
ASCII cards (``KEYWORD = value / comment``) ending with the card ``END`` and padded to a
multiple of 2880 bytes, then its data, padded the same way. The data of an HDU takes
``|BITPIX| / 8 * GCOUNT * (PCOUNT + NAXIS1 * ... * NAXISn)`` bytes (none when NAXIS is
0). An image HDU (the primary, or ``XTENSION = 'IMAGE'``) holds big-endian pixels, axis 1
varying fastest, so numpy's shape is the NAXISn reversed (as astropy gives it). A tile-
compressed image is a binary table with ``ZIMAGE = T`` (``fits_tiles.py``, which also
has ``read_hdus``, the reading of either kind).

Pixel values are those DALI 2.4 gives: it reads with CFITSIO's ``fits_read_img`` in the
image's "equivalent type", so BSCALE/BZERO are applied: BITPIX 16 with BZERO 32768 is
uint16, BITPIX 8 with BZERO -128 is int8, BITPIX 32 with BZERO 2**31 is uint32, other
integer scalings the narrowest integer type holding every scaled value, and a
non-integer scaling gives float32 (BITPIX 8, 16) or float64 (32). stoker reads BITPIX 64
with BZERO 2**63 as uint64 (CFITSIO's int64 overflows). BLANK is not applied (DALI asks
for no null checks).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

BLOCK = 2880
CARD = 80
_BIG = {8: ">u1", 16: ">i2", 32: ">i4", 64: ">i8", -32: ">f4", -64: ">f8"}


class FitsError(ValueError):
    """A file is not a readable FITS file or lacks the HDU asked for; the message names
    the file and the HDU."""


@dataclass
class Hdu:
    number: int  # 1 for the primary, as DALI's hdu_indices count
    header: dict
    data_start: int
    data_size: int

    def is_image(self) -> bool:
        xt = self.header.get("XTENSION")
        return (self.number == 1 or xt == "IMAGE") and not self.header.get("ZIMAGE", False)

    def is_compressed(self) -> bool:
        return self.header.get("XTENSION") == "BINTABLE" and self.header.get("ZIMAGE") is True


def _value(text: str):
    """A card's value: a string, a logical, an int or a float (None when empty)."""
    text = text.strip()
    if text.startswith("'"):
        out, i = [], 1
        while i < len(text):
            if text[i] == "'":
                if text[i + 1:i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                break
            out.append(text[i])
            i += 1
        return "".join(out).rstrip()
    text = text.split("/", 1)[0].strip()
    if text in ("T", "F"):
        return text == "T"
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text.replace("D", "E").replace("d", "e"))
    except ValueError:
        return text


def parse_header(raw: bytes) -> tuple[dict, int] | None:
    """The keywords of the header at the start of ``raw`` and the header's padded size;
    None when ``raw`` ends before the END card."""
    header: dict = {}
    for at in range(0, len(raw) - CARD + 1, CARD):
        key = raw[at:at + 8].rstrip()
        if key == b"END":
            return header, (at // BLOCK + 1) * BLOCK
        if raw[at + 8:at + 10] == b"= " and key not in (b"COMMENT", b"HISTORY", b""):
            header.setdefault(key.decode("ascii", "replace"),
                              _value(raw[at + 10:at + CARD].decode("ascii", "replace")))
    return None


def _data_size(header: dict) -> int:
    naxis = int(header.get("NAXIS", 0) or 0)
    if naxis == 0:
        return 0
    count = math.prod(int(header.get(f"NAXIS{i}", 0)) for i in range(1, naxis + 1))
    if "XTENSION" in header:
        count = int(header.get("GCOUNT", 1)) * (int(header.get("PCOUNT", 0)) + count)
    return abs(int(header["BITPIX"])) // 8 * count


class FitsFile:
    """An open FITS file whose HDUs are found on demand, header after header."""

    def __init__(self, path: str):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size
        self.hdus: list[Hdu] = []
        self._next = 0  # where the next HDU's header starts

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> FitsFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fail(self, number: int | None, what: str) -> FitsError:
        where = f"{self.path!r}" if number is None else f"{self.path!r}, HDU {number}"
        return FitsError(f"{where}: {what}")

    def hdu(self, number: int) -> Hdu:
        """HDU ``number`` (1: the primary)."""
        if number < 1:
            raise self.fail(number, "HDU indices start at 1 (the primary HDU)")
        while len(self.hdus) < number:
            if self._next >= self.size:
                raise self.fail(number, f"the file has only {len(self.hdus)} HDU(s)")
            self.hdus.append(self._read_hdu(len(self.hdus) + 1))
        return self.hdus[number - 1]

    def _read_hdu(self, number: int) -> Hdu:
        start, raw = self._next, b""
        while True:
            chunk = os.pread(self.fd, 4 * BLOCK, start + len(raw))
            raw += chunk
            parsed = parse_header(raw) if chunk else None
            if parsed is not None or not chunk:
                break
        if parsed is None:
            raise self.fail(number, "the header has no END card (truncated, or not a FITS "
                            "file)")
        header, length = parsed
        first = raw[:8]
        if number == 1 and first != b"SIMPLE  ":
            raise self.fail(None, "not a FITS file (it does not start with SIMPLE)")
        if number > 1 and first != b"XTENSION":
            raise self.fail(number, "not an HDU (no XTENSION card where one should start)")
        if not isinstance(header.get("BITPIX"), int) or header["BITPIX"] not in _BIG:
            raise self.fail(number, f"BITPIX {header.get('BITPIX')!r} is not one of "
                            f"{sorted(_BIG)}")
        try:
            size = _data_size(header)
        except (TypeError, ValueError):
            raise self.fail(number, "its NAXISn, PCOUNT or GCOUNT are not integers") from None
        hdu = Hdu(number, header, start + length, size)
        self._next = start + length + -(-size // BLOCK) * BLOCK
        return hdu

    def data(self, hdu: Hdu, start: int = 0, size: int | None = None) -> bytearray:
        """``size`` bytes of the HDU's data from ``start`` (default: all of it)."""
        size = hdu.data_size - start if size is None else size
        buf = bytearray(size)
        got = os.preadv(self.fd, [buf], hdu.data_start + start) if size else 0
        if got < size:
            raise self.fail(hdu.number, f"the file is truncated: the data needs "
                            f"{hdu.data_start + start + size} bytes, it has {self.size}")
        return buf


def equivalent_type(bitpix: int, bscale: float, bzero: float) -> np.dtype:
    """The type DALI gives an image (CFITSIO's ``fits_get_img_equivtype``)."""
    floats = {-32: np.float32, -64: np.float64}
    if bitpix in floats:
        return np.dtype(floats[bitpix])
    stored = np.dtype(_BIG[bitpix]).newbyteorder("=")
    if bscale == 1.0 and bzero == 0.0:
        return stored
    if bitpix == 64:
        # CFITSIO keeps int64 for any scaling (stoker: uint64 for the unsigned convention).
        return np.dtype(np.uint64 if (bscale, bzero) == (1.0, 2.0 ** 63) else np.int64)
    lo, hi = {8: (0.0, 255.0), 16: (-32768.0, 32767.0), 32: (-2.0 ** 31, 2.0 ** 31 - 1)}[bitpix]
    lo, hi = sorted((bzero + bscale * lo, bzero + bscale * hi))
    if bzero != 2.0 ** 31 and (bzero != int(bzero) or bscale != int(bscale)):
        return np.dtype(np.float32 if bitpix in (8, 16) else np.float64)
    for dtype, (a, b) in ((np.int8, (-128.0, 127.0)), (np.int16, (-32768.0, 32767.0)),
                          (np.uint16, (0.0, 65535.0)), (np.int32, (-2.0 ** 31, 2.0 ** 31 - 1)),
                          (np.uint32, (0.0, 2.0 ** 32 - 1))):
        if (dtype is np.int8 and (lo, hi) == (a, b)) or (dtype is not np.int8 and a <= lo
                                                          and hi <= b):
            return np.dtype(dtype)
    return np.dtype(np.float64)


def scaled(raw: np.ndarray, bitpix: int, header: dict) -> np.ndarray:
    """``raw`` (the stored values, native order) in the image's equivalent type, with
    BSCALE/BZERO applied; in place where only a sign bit flips."""
    bscale = float(header.get("BSCALE", 1.0) if header.get("BSCALE") is not None else 1.0)
    bzero = float(header.get("BZERO", 0.0) if header.get("BZERO") is not None else 0.0)
    dtype = equivalent_type(bitpix, bscale, bzero)
    if bscale == 1.0 and bzero == 0.0:
        return raw
    if bscale == 1.0 and dtype.kind in "iu" and dtype.itemsize == raw.dtype.itemsize and \
            bzero == -float(np.iinfo(raw.dtype).min if raw.dtype.kind == "i" else 128):
        # The unsigned (or, for bytes, signed) conventions: adding BZERO flips the sign bit.
        bits = raw.view(np.dtype(f"u{raw.dtype.itemsize}"))
        bits ^= np.array(1 << (8 * raw.dtype.itemsize - 1), bits.dtype)
        return bits.view(dtype)
    out = raw.astype(np.float64) * bscale + bzero
    if dtype.kind in "iu":  # integer BSCALE/BZERO: every value is a whole number
        return out.astype(dtype)
    return out.astype(dtype, copy=False)


def read_image(f: FitsFile, hdu: Hdu) -> np.ndarray:
    """An image HDU's pixels: native byte order, numpy's axis order, scaled."""
    h = hdu.header
    naxis = int(h.get("NAXIS", 0))
    shape = tuple(int(h[f"NAXIS{i}"]) for i in range(naxis, 0, -1))
    if naxis == 0 or math.prod(shape) == 0:
        raise f.fail(hdu.number, "the HDU has no image data (NAXIS is 0, or an axis is "
                     "empty)")
    bitpix = int(h["BITPIX"])
    big = np.dtype(_BIG[bitpix])
    raw = np.frombuffer(f.data(hdu, 0, math.prod(shape) * big.itemsize), big)
    native = raw.view(big.newbyteorder("="))
    if big.itemsize > 1:
        native.byteswap(inplace=True)  # the bytearray is ours: swap where it lies
    return scaled(native, bitpix, h).reshape(shape)
