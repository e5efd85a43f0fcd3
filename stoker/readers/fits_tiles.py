"""Tile-compressed FITS images (a binary table with ``ZIMAGE = T``), as DALI 2.4 reads
them through CFITSIO.

The image (``ZBITPIX``, ``ZNAXIS``, ``ZNAXISn``) is cut into tiles of ``ZTILEn`` pixels
(default: rows), one table row each, the first axis's tiles fastest. A row's
``COMPRESSED_DATA`` column is a descriptor (count and offset, 32-bit for ``P``, 64-bit
for ``Q``) of the tile's bytes in the heap, which starts at ``THEAP`` (default: after the
rows). ``ZCMPTYPE`` says how: RICE_1 (``ZNAMEi``/``ZVALi`` give BLOCKSIZE, default 32,
and BYTEPIX, default 4; decoded by ``kernels/cpu/readers/fits_loops.py``), GZIP_1 (zlib of
the big-endian values), GZIP_2 (the same with the values' bytes grouped by significance),
NOCOMPRESS. PLIO_1 and HCOMPRESS_1 give an error naming the file and HDU.

Float images are usually stored quantized: integers with a scale and zero per tile
(``ZSCALE``, ``ZZERO`` columns), dithered as ``ZQUANTIZ`` says (``ZDITHER0`` seeds it);
a tile that would not quantize keeps its floats gzipped in ``GZIP_COMPRESSED_DATA``.
Null pixels (``ZBLANK``) come out as 0, as CFITSIO gives them to DALI (it asks for 0 as
the null value; astropy gives NaN). BSCALE/BZERO apply after decompression as for a plain
image (``fits.scaled``). ``read_hdus`` reads the HDUs a sample asks for, of either kind.
"""

from __future__ import annotations

import functools
import math
import re
import zlib

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.readers.fits import FitsError, FitsFile, Hdu, read_image, scaled

_TFORM = re.compile(r"^\s*(\d*)([LXBIJKAEDCMPQ])([A-Z]?)")
_WIDTH = {"L": 1, "B": 1, "I": 2, "J": 4, "K": 8, "A": 1, "E": 4, "D": 8, "C": 8, "M": 16,
          "P": 8, "Q": 16}
_METHODS = {"NO_DITHER": 0, "SUBTRACTIVE_DITHER_1": 1, "SUBTRACTIVE_DITHER_2": 2}
_TABLE: list[np.ndarray] = []


def _columns(h: dict) -> dict[str, tuple[int, str, str]]:
    """Column name -> (byte offset in the row, type letter, element letter of P/Q)."""
    cols, at = {}, 0
    for i in range(1, int(h.get("TFIELDS", 0)) + 1):
        m = _TFORM.match(str(h.get(f"TFORM{i}", "")))
        if m is None:
            raise ValueError(f"TFORM{i} {h.get(f'TFORM{i}')!r} is not a binary table format")
        repeat = int(m.group(1) or 1)
        kind = m.group(2)
        cols[str(h.get(f"TTYPE{i}", "")).upper()] = (at, kind, m.group(3))
        at += -(-repeat // 8) if kind == "X" else (_WIDTH[kind] * (1 if kind in "PQ" else
                                                                   repeat))
    return cols


def _descriptors(rows: np.ndarray, col: tuple[int, str, str]) -> tuple[np.ndarray, np.ndarray]:
    at, kind, _ = col
    width = 4 if kind == "P" else 8
    both = np.ascontiguousarray(rows[:, at:at + 2 * width]).view(f">i{width}")
    return both[:, 0].astype(np.int64), both[:, 1].astype(np.int64)


def _zvals(h: dict) -> dict[str, object]:
    out, i = {}, 1
    while f"ZNAME{i}" in h:
        out[str(h[f"ZNAME{i}"]).upper()] = h.get(f"ZVAL{i}")
        i += 1
    return out


def _tile_lengths(naxes: list[int], ztile: list[int]) -> np.ndarray:
    extents = []
    for n, t in zip(naxes, ztile, strict=True):
        e = np.full(-(-n // t), t, np.int64)
        e[-1] = n - t * (len(e) - 1)
        extents.append(e)
    return functools.reduce(np.multiply.outer, extents[::-1]).ravel().astype(np.int64)


def _values(raw: bytes, length: int, cmp: str, floats: bool) -> np.ndarray:
    """A GZIP_1/GZIP_2/NOCOMPRESS tile's values (native order), from its bytes."""
    data = raw if cmp == "NOCOMPRESS" else zlib.decompress(bytes(raw), 47)  # gzip or zlib
    size = len(data) // length if length else 1
    if size * length != len(data) or size not in (1, 2, 4, 8):
        raise ValueError(f"a tile of {length} pixels decompressed to {len(data)} bytes")
    if cmp == "GZIP_2" and size > 1:
        data = np.frombuffer(data, np.uint8).reshape(size, length).T.tobytes()
    kind = "f" if floats and size >= 4 else ("u" if size == 1 else "i")
    return np.frombuffer(data, f">{kind}{size}").astype(f"={kind}{size}")


def _gzip_tiles(heap: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                lengths: np.ndarray, cmp: str, floats: bool) -> np.ndarray:
    """Every GZIP_1/GZIP_2 tile's values, one after the other (native order): one join
    and one conversion for the image, not one per tile."""
    chunks = [zlib.decompress(heap[a:a + n], 47) for a, n in zip(starts.tolist(),
                                                                 counts.tolist(), strict=True)]
    total = int(lengths.sum())
    data = b"".join(chunks)
    size = len(data) // total
    if size * total != len(data) or size not in (1, 2, 4, 8) or any(
            len(c) != size * n for c, n in zip(chunks, lengths.tolist(), strict=True)):
        raise ValueError("the tiles' decompressed sizes do not match their pixel counts")
    kind = "f" if floats and size >= 4 else ("u" if size == 1 else "i")
    if cmp == "GZIP_2" and size > 1:  # each tile: its values' bytes, most significant first
        shuffled = np.frombuffer(data, np.uint8)
        out = np.empty(len(data), np.uint8)
        at = 0
        for n in lengths.tolist():
            out[at:at + size * n] = shuffled[at:at + size * n].reshape(size, n).T.reshape(-1)
            at += size * n
        data = out
    return np.frombuffer(data, f">{kind}{size}").astype(f"={kind}{size}")


def read_compressed(f: FitsFile, hdu: Hdu) -> np.ndarray:
    """A compressed image HDU's pixels: numpy's axis order, scaled, like ``read_image``."""
    try:
        return _read(f, hdu)
    except FitsError:
        raise
    except (KeyError, ValueError, zlib.error) as e:
        what = f"keyword {e.args[0]} missing" if isinstance(e, KeyError) else str(e)
        raise f.fail(hdu.number, f"bad compressed image: {what}") from None


def _read(f: FitsFile, hdu: Hdu) -> np.ndarray:
    h = hdu.header
    cmp = str(h.get("ZCMPTYPE", "")).upper()
    if cmp not in ("RICE_1", "RICE_ONE", "GZIP_1", "GZIP_2", "NOCOMPRESS"):
        raise f.fail(hdu.number, f"compression {cmp!r} is not supported (stoker reads "
                     "RICE_1, GZIP_1, GZIP_2 and NOCOMPRESS tiles)")
    zbitpix, nd = int(h["ZBITPIX"]), int(h["ZNAXIS"])
    naxes = [int(h[f"ZNAXIS{i}"]) for i in range(1, nd + 1)]
    if nd == 0 or math.prod(naxes) == 0:
        raise f.fail(hdu.number, "the HDU has no image data (ZNAXIS is 0, or an axis is "
                     "empty)")
    ztile = [int(h.get(f"ZTILE{i}", naxes[0] if i == 1 else 1)) for i in range(1, nd + 1)]
    if any(t < 1 for t in ztile):
        raise f.fail(hdu.number, f"ZTILEn {ztile} must all be at least 1")
    lengths = _tile_lengths(naxes, ztile)
    width, nrows = int(h["NAXIS1"]), int(h["NAXIS2"])
    if nrows != len(lengths):
        raise f.fail(hdu.number, f"the table has {nrows} rows for {len(lengths)} tiles")
    data = f.data(hdu)
    rows = np.frombuffer(data, np.uint8, width * nrows).reshape(nrows, width)
    heap = np.frombuffer(data, np.uint8)
    theap = int(h.get("THEAP", width * nrows))
    cols = _columns(h)
    counts, offsets = _descriptors(rows, cols["COMPRESSED_DATA"])
    starts = theap + offsets
    if ((starts + counts) > len(heap)).any() or (offsets < 0).any():
        raise f.fail(hdu.number, "a tile's bytes lie outside the heap (truncated file?)")
    quantized = zbitpix < 0 and "ZSCALE" in cols
    floats = zbitpix < 0 and not quantized
    total = int(lengths.sum())
    if cmp.startswith("RICE") and counts.all():
        bytepix = int(_zvals(h).get("BYTEPIX", 4) if not quantized else 4)
        if bytepix not in (1, 2, 4):
            raise f.fail(hdu.number, f"RICE_1 BYTEPIX {bytepix} is not 1, 2 or 4")
        out = np.empty(total, f"u{bytepix}")
        bad = loops("readers.fits_loops").rice_tiles(
            heap, starts, counts, lengths, bytepix, int(_zvals(h).get("BLOCKSIZE", 32)), out)
        if bad >= 0:
            raise f.fail(hdu.number, f"tile {bad + 1}'s RICE_1 bytes end early (corrupt?)")
        ints = out if zbitpix == 8 else out.view(f"i{bytepix}")
        tiles = [ints]
    elif cmp.startswith("GZIP") and counts.all():
        tiles = [_gzip_tiles(heap, starts, counts, lengths, cmp, floats)]
    else:
        tiles = []
        for t in range(nrows):
            raw = heap[starts[t]:starts[t] + counts[t]]
            if counts[t] == 0:
                tiles.append(_fallback(heap, rows, cols, theap, t, int(lengths[t]), f, hdu))
            elif cmp.startswith("RICE"):
                bytepix = int(_zvals(h).get("BYTEPIX", 4))
                one = np.empty(int(lengths[t]), f"u{bytepix}")
                bad = loops("readers.fits_loops").rice_tiles(
                    heap, starts[t:t + 1], counts[t:t + 1], lengths[t:t + 1], bytepix,
                    int(_zvals(h).get("BLOCKSIZE", 32)), one)
                if bad >= 0:
                    raise f.fail(hdu.number, f"tile {t + 1}'s RICE_1 bytes end early")
                tiles.append(one if zbitpix == 8 else one.view(f"i{bytepix}"))
            else:
                tiles.append(_values(raw, int(lengths[t]), cmp, floats))
    if quantized:
        flat = _dequantize(h, rows, cols, lengths, tiles, zbitpix)
    else:
        stored = np.dtype({8: "u1", 16: "i2", 32: "i4", 64: "i8", -32: "f4",
                           -64: "f8"}[zbitpix])
        flat = np.concatenate(tiles) if len(tiles) > 1 else tiles[0]
        flat = flat.astype(stored, copy=False)
    if len(flat) != total:
        raise f.fail(hdu.number, f"the tiles hold {len(flat)} pixels, the image {total}")
    if not _raster_order(naxes, ztile):
        image = np.empty_like(flat)
        loops("readers.fits_loops").untile(flat, image, np.array(naxes, np.int64),
                                           np.array(ztile, np.int64))
        flat = image
    return scaled(flat, zbitpix, h).reshape(naxes[::-1])


def _raster_order(naxes: list[int], ztile: list[int]) -> bool:
    """Whether the tiles, one after the other, are the image in C order already."""
    partial = False
    for n, t in zip(naxes, ztile, strict=True):
        if partial and t != 1:
            return False
        if t != n:
            partial = True
    return True


def _fallback(heap, rows, cols, theap, t, length, f, hdu) -> np.ndarray:
    """A tile stored outside COMPRESSED_DATA: gzipped floats or uncompressed values."""
    for name, gz in (("GZIP_COMPRESSED_DATA", True), ("UNCOMPRESSED_DATA", False)):
        if name in cols:
            count, offset = _descriptors(rows[t:t + 1], cols[name])
            if count[0]:
                at, size = theap + int(offset[0]), int(count[0])
                elem = cols[name][2] or "B"
                raw = heap[at:at + size * (1 if gz else _WIDTH[elem])].tobytes()
                if gz:
                    return _values(raw, length, "GZIP_1", True)
                big = {"B": ">u1", "I": ">i2", "J": ">i4", "K": ">i8", "E": ">f4",
                       "D": ">f8"}[elem]
                return np.frombuffer(raw, big).astype(big.replace(">", "="))
    raise f.fail(hdu.number, f"tile {t + 1} has no data")


def _dequantize(h, rows, cols, lengths, tiles, zbitpix) -> np.ndarray:
    fl = loops("readers.fits_loops")
    if not _TABLE:
        _TABLE.append(fl.random_table())
    out = np.empty(int(lengths.sum()), np.float32 if zbitpix == -32 else np.float64)
    scale = np.ascontiguousarray(rows[:, cols["ZSCALE"][0]:cols["ZSCALE"][0] + 8]).view(">f8")
    zero = np.ascontiguousarray(rows[:, cols["ZZERO"][0]:cols["ZZERO"][0] + 8]).view(">f8")
    scale, zero = scale.ravel().astype(np.float64), zero.ravel().astype(np.float64)
    blank = h.get("ZBLANK")
    if "ZBLANK" in cols:
        at = cols["ZBLANK"][0]
        blanks = np.ascontiguousarray(rows[:, at:at + 4]).view(">i4").ravel()
    else:
        blanks = None
    method = _METHODS.get(str(h.get("ZQUANTIZ", "NO_DITHER")).upper(), 0)
    dither0 = int(h.get("ZDITHER0", 1) or 1)
    ints = tiles[0] if len(tiles) == 1 else None
    if ints is not None and blanks is None:  # one call for every tile
        fl.dequantize(ints.astype(np.int32, copy=False), lengths, scale, zero, method, dither0,
                      0 if blank is None else int(blank), blank is not None, 0.0, _TABLE[0],
                      out)
        return out
    o = 0
    for t in range(len(lengths)):
        n = int(lengths[t])
        tile = ints[o:o + n] if ints is not None else tiles[t]
        if tile.dtype.kind == "f":  # a tile kept as floats
            out[o:o + n] = tile
        else:
            b = blank if blanks is None else int(blanks[t])
            fl.dequantize(tile.astype(np.int32, copy=False), lengths[t:t + 1], scale[t:t + 1],
                          zero[t:t + 1], method, dither0 + t, 0 if b is None else int(b),
                          b is not None, 0.0, _TABLE[0], out[o:o + n])
        o += n
    return out


def read_hdus(path: str, numbers: list[int]) -> list[np.ndarray]:
    """The images of HDUs ``numbers`` of file ``path``, one array each."""
    try:
        f = FitsFile(path)
    except OSError as e:
        raise FitsError(f"cannot read {path!r}: {e.strerror}") from None
    with f:
        out = []
        for number in numbers:
            hdu = f.hdu(number)
            if hdu.is_image():
                out.append(read_image(f, hdu))
            elif hdu.is_compressed():
                out.append(read_compressed(f, hdu))
            else:
                kind = hdu.header.get("XTENSION", "?")
                raise f.fail(number, f"only image HDUs can be read, this one is a {kind!r} "
                             "extension (DALI: Only IMAGE_HDUs are supported!)")
        return out
