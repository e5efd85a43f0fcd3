"""PNG data checked before libpng sees it (kernels/cpu/image/decode_png.py): a damaged PNG is
refused with stoker's own error and nothing on stderr; chunks libpng would only warn
about are left out without changing a pixel (the reference: OpenCV on the original data).
"""

from __future__ import annotations

import io
import struct
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image, PngImagePlugin

from stoker.kernels.cpu.image import decode as K


def _chunk(kind: bytes, body: bytes, crc: int | None = None) -> bytes:
    crc = zlib.crc32(kind + body) if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    out, pos = [], 8
    while pos < len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        out.append((kind, data[pos + 8:pos + 8 + length]))
        pos += 12 + length
    return out


def _png(chunks: list[bytes]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


IMG = np.random.default_rng(0).integers(0, 256, (21, 34, 3), dtype=np.uint8)
GOOD = cv2.imencode(".png", IMG)[1].tobytes()
IHDR, IDAT = (_chunk(k, b) for k, b in _chunks(GOOD) if k in (b"IHDR", b"IDAT"))
IEND = _chunk(b"IEND", b"")
PIXELS = IDAT[8:-4]  # the compressed image data


def _with(*extra: bytes, after_ihdr: bool = True) -> bytes:
    return _png([IHDR, *extra, IDAT, IEND] if after_ihdr else [IHDR, IDAT, *extra, IEND])


def _decoded_silently(data: bytes, capfd) -> np.ndarray:
    out = K.decode(data, "BGR")
    assert capfd.readouterr().err == ""
    return out


WARNED = {  # libpng prints a warning for each and decodes the image
    "ancillary chunk with a bad CRC": _with(_chunk(b"tEXt", b"k\x00v", crc=7)),
    "iCCP too short": _with(_chunk(b"iCCP", b"p\x00\x00xx")),
    "tRNS in an RGB image of the wrong length": _with(_chunk(b"tRNS", b"\x00\x01")),
}


@pytest.mark.parametrize("case", list(WARNED))
def test_chunks_libpng_warns_about_are_left_out_silently_with_the_same_pixels(case, capfd):
    data = WARNED[case]
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) is not None
    capfd.readouterr()  # OpenCV's own decode printed its warning: that is the reference
    np.testing.assert_array_equal(_decoded_silently(data, capfd), IMG)


def test_pngs_as_encoders_write_them_decode_as_without_the_check(capfd, monkeypatch):
    meta = PngImagePlugin.PngInfo()
    meta.add_text("Software", "test")
    datas = []
    for im, opts in [(Image.fromarray(IMG), {"pnginfo": meta, "dpi": (72, 72)}),
                     (Image.fromarray(IMG).convert("P", palette=Image.ADAPTIVE, colors=7),
                      {"transparency": 3, "bits": 4}),
                     (Image.fromarray(IMG[..., 0]), {"transparency": 9}),
                     (Image.fromarray(IMG[..., 0] > 99), {}),
                     (Image.fromarray(np.dstack([IMG, IMG[..., :1]])), {"optimize": True})]:
        buf = io.BytesIO()
        im.save(buf, "PNG", **opts)
        datas.append(buf.getvalue())
    datas.append(cv2.imencode(".png", IMG.astype(np.uint16) * 257)[1].tobytes())
    checked = [K.decode(d, "ANY_DATA", dtype=np.uint16) for d in datas]
    assert capfd.readouterr().err == ""
    monkeypatch.setattr(K, "for_libpng", lambda buf: buf)
    for data, got in zip(datas, checked, strict=True):
        np.testing.assert_array_equal(got, K.decode(data, "ANY_DATA", dtype=np.uint16))


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x04]) + data[at + 1:]


REFUSED = {  # libpng refuses each, printing "libpng error: ..."
    "a bit flipped in the image data": (_flip(GOOD, len(GOOD) // 2), "IDAT' at byte 33 "
                                        "fails its CRC check"),
    "zeroed image data": (GOOD[:60] + bytes(30) + GOOD[90:], "fails its CRC check"),
    "a bad IHDR CRC": (_png([IHDR[:-1] + b"\x00", IDAT, IEND]), "IHDR' at byte 8 fails"),
    "cut at a chunk boundary": (_png([IHDR, IDAT]), "ends before its IEND chunk"),
    "cut inside a chunk": (GOOD[:len(GOOD) - 30], "claims"),
    "no image data": (_png([IHDR, IEND]), "has no IDAT chunk"),
    "an unknown critical chunk": (_with(_chunk(b"ABCD", b"x")), "critical but unknown"),
    "a palette image without PLTE": (
        _png([_chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 3, 0, 0, 0)),
              _chunk(b"IDAT", zlib.compress(b"\0\0\0\0\0\0")), IEND]), "no PLTE chunk"),
    "a chunk between the IDATs": (_png([IHDR, _chunk(b"IDAT", PIXELS[:20]),
                                        _chunk(b"tEXt", b"k\x00v"),
                                        _chunk(b"IDAT", PIXELS[20:]), IEND]),
                                  "split by a b'tEXt' chunk"),
    "a bad bit depth": (_png([_chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 3, 2, 0, 0, 0)),
                              IDAT, IEND]), "bit depth 3 is invalid"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_damaged_pngs_are_refused_by_stoker_with_nothing_from_libpng(case, capfd):
    data, why = REFUSED[case]
    with pytest.raises(K.DecodeError, match=why):
        K.decode(data)
    assert capfd.readouterr().err == ""


def test_a_palette_longer_than_its_bit_depth_allows_is_cut_as_libpng_cuts_it(capfd):
    # 2-bit palette image (4 colours) whose PLTE lists 6: libpng keeps 4, with a warning.
    palette = bytes([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 1, 2, 3, 4, 5, 6])
    rows = b"\x00\x1b"  # one row of four 2-bit indices: 0, 1, 2, 3
    data = _png([_chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 1, 2, 3, 0, 0, 0)),
                 _chunk(b"PLTE", palette), _chunk(b"IDAT", zlib.compress(rows)), IEND])
    ref = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    capfd.readouterr()
    np.testing.assert_array_equal(_decoded_silently(data, capfd), ref)
