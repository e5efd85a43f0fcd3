"""Seed inputs for the parser fuzzer: small valid files of every kind stoker parses.

Every seed is encoded here, from a fixed 32x24 test picture, with OpenCV or Pillow, so the
corpus needs no files in the repository and is the same on every run. Small images keep
each decode under a millisecond, so 10,000 mutated inputs per format take a minute or two.
"""

from __future__ import annotations

import functools
import io

import numpy as np

H, W = 24, 32
FORMATS = ("jpeg", "jpeg_opencv", "png", "bmp", "tiff", "webp", "pnm", "file_list", "glob")


def picture(h: int = H, w: int = W) -> np.ndarray:
    """An RGB uint8 picture with edges, gradients and flat areas (what codecs meet)."""
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // max(w - 1, 1)).astype(np.uint8)
    g = (y * 255 // max(h - 1, 1)).astype(np.uint8)
    b = np.where((x // 4 + y // 4) % 2 == 0, 40, 220).astype(np.uint8)
    return np.dstack([r, g, b])


def _cv(ext: str, img: np.ndarray, params: tuple = ()) -> bytes:
    import cv2

    ok, buf = cv2.imencode(ext, img, list(params))
    if not ok:
        raise RuntimeError(f"OpenCV could not encode a {ext} seed")
    return buf.tobytes()


def _pil(img: np.ndarray, fmt: str, mode: str | None = None, **kwargs) -> bytes:
    from PIL import Image

    im = Image.fromarray(img)
    if mode is not None:
        im = im.convert(mode)
    out = io.BytesIO()
    im.save(out, fmt, **kwargs)
    return out.getvalue()


def _exif(orientation: int) -> bytes:
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def _jpeg() -> list[bytes]:
    import cv2

    rgb = picture()
    bgr = rgb[..., ::-1].copy()
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    q = cv2.IMWRITE_JPEG_QUALITY
    return [
        _cv(".jpg", bgr, (q, 90)),  # baseline 4:2:0
        _cv(".jpg", bgr, (q, 75, cv2.IMWRITE_JPEG_PROGRESSIVE, 1)),
        _cv(".jpg", gray, (q, 90)),
        _cv(".jpg", bgr, (q, 90, cv2.IMWRITE_JPEG_RST_INTERVAL, 1)),  # restart markers
        _cv(".jpg", bgr, (q, 95, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                          cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444, cv2.IMWRITE_JPEG_OPTIMIZE, 1)),
        _cv(".jpg", bgr, (q, 80, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                          cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422)),
        _cv(".jpg", bgr, (q, 80, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                          cv2.IMWRITE_JPEG_SAMPLING_FACTOR_411)),
        _pil(rgb, "JPEG", "CMYK", quality=90),  # Adobe, 4 components
        _pil(rgb, "JPEG", quality=85, exif=_exif(6)),  # EXIF orientation: rotated
        _pil(rgb, "JPEG", quality=85, progressive=True, exif=_exif(8), subsampling=2),
        # Sizes that are not whole MCUs exercise the window and scale arithmetic.
        _pil(picture(1, 1), "JPEG", quality=90),
        _pil(picture(9, 17), "JPEG", quality=90, subsampling=2, exif=_exif(7)),
        _pil(picture(17, 9), "JPEG", quality=90, subsampling=1, exif=_exif(5)),
        _pil(picture(13, 40), "JPEG", "L", quality=90, progressive=True),
        _pil(picture(3, 50), "JPEG", quality=90, subsampling=0, exif=_exif(2)),
    ]


def _png() -> list[bytes]:
    rgb = picture()
    rgba = np.dstack([rgb, (np.arange(H * W) % 256).reshape(H, W).astype(np.uint8)])
    wide = rgb.astype(np.uint16) * 257
    return [
        _cv(".png", rgb[..., ::-1].copy()),
        _cv(".png", wide[..., ::-1].copy()),  # 16-bit
        _cv(".png", rgb[..., 0].copy()),  # gray
        _cv(".png", rgba[..., [2, 1, 0, 3]].copy()),  # alpha
        _pil(rgb, "PNG", "P"),  # palette
        _pil(rgb, "PNG", "P", transparency=0),  # palette + tRNS
        _pil(rgba, "PNG", "LA"),  # gray + alpha
        _pil(rgb, "PNG", "1"),  # 1-bit
        _pil(rgb, "PNG", exif=_exif(3)),  # eXIf chunk
        _pil(picture(1, 1), "PNG"),
        _pil(picture(7, 19), "PNG", exif=_exif(6)),
    ]


def _bmp() -> list[bytes]:
    rgb = picture()
    top_down = bytearray(_cv(".bmp", picture(5, 7)))
    top_down[22:26] = (-5).to_bytes(4, "little", signed=True)  # negative height: top-down
    return [
        bytes(top_down),
        _cv(".bmp", rgb[..., ::-1].copy()),  # 24-bit
        _cv(".bmp", rgb[..., 0].copy()),  # 8-bit gray palette
        _pil(rgb, "BMP", "P"),  # 8-bit palette
        _pil(rgb, "BMP", "1"),  # 1-bit
        _pil(np.dstack([rgb, rgb[..., :1]]), "BMP"),  # 32-bit
    ]


def _tiff() -> list[bytes]:
    rgb = picture()
    rgba = np.dstack([rgb, rgb[..., 1:2]])
    return [
        _cv(".tiff", rgb[..., ::-1].copy()),
        _cv(".tiff", (rgb.astype(np.uint16) * 257)[..., 0].copy()),  # 16-bit gray
        _pil(rgb, "TIFF"),  # uncompressed
        _pil(rgb, "TIFF", compression="tiff_lzw"),
        _pil(rgb, "TIFF", compression="tiff_adobe_deflate"),
        _pil(rgb, "TIFF", compression="jpeg"),
        _pil(rgb, "TIFF", compression="packbits", exif=_exif(6)),
        _pil(rgba, "TIFF"),  # alpha: Pillow's path in decode.py
        _pil(rgb, "TIFF", "P"),  # palette
        _pil(rgb, "TIFF", "1", compression="group4"),
        _pil(picture(3, 11), "TIFF", compression="tiff_lzw", exif=_exif(8)),
    ]


def _webp() -> list[bytes]:
    rgb = picture()
    rgba = np.dstack([rgb, rgb[..., 2:3]])
    return [
        _pil(rgb, "WEBP", quality=80),  # lossy, VP8
        _pil(rgb, "WEBP", lossless=True),  # VP8L
        _pil(rgba, "WEBP", quality=80),  # VP8X + ALPH
        _pil(rgba, "WEBP", lossless=True),
        _pil(rgb, "WEBP", quality=80, exif=_exif(6)),  # VP8X + EXIF
        _pil(picture(1, 1), "WEBP", lossless=True),
        _pil(picture(9, 5), "WEBP", quality=50, exif=_exif(5)),
    ]


def _pnm() -> list[bytes]:
    rgb = picture()
    gray = rgb[..., 0]

    def ascii_pnm(magic: str, values: np.ndarray, maxval: int | None) -> bytes:
        head = f"{magic}\n# stoker fuzz seed\n{W} {H}\n" + (f"{maxval}\n" if maxval else "")
        return head.encode() + " ".join(map(str, values.ravel())).encode() + b"\n"

    return [
        _cv(".ppm", rgb[..., ::-1].copy()),  # P6
        _cv(".pgm", gray.copy()),  # P5
        _cv(".pgm", (gray.astype(np.uint16) * 257)),  # P5, 16-bit
        _cv(".pbm", gray.copy()),  # P4
        ascii_pnm("P3", rgb, 255),
        ascii_pnm("P2", gray, 255),
        ascii_pnm("P1", (gray > 127).astype(np.uint8), None),
        f"P7\nWIDTH {W}\nHEIGHT {H}\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n".encode()
        + rgb.tobytes(),
    ]


def _file_list() -> list[bytes]:
    return [
        b"class_000/img_000000.jpg 0\nclass_001/img_000001.jpg 1\nclass_002/img_02.jpg 2\n",
        b"a.jpg 0\r\nb c.jpg 17\r\n\r\n  lead.jpg\t3\r\n",  # CRLF, spaces, blank, tabs
        b"x 2147483647\ny 0000000000000000000000000012\nz 5",  # int32 max, long label, no \n
        b"\n\n/abs/path/with  two  spaces.png   42   \n\xc3\xa9t\xc3\xa9.jpg 7\n",
        b"",
    ]


def _glob() -> list[bytes]:
    # First line: the file name to match; the others: patterns. Both sides meet brackets,
    # ranges, negation, escapes and several stars.
    return [
        b"img_0001.JPG\n*.jpg\n*.jpeg\n*.png",
        b"photo[1].png\nphoto\\[1\\].png\n[!a-z]*\n*[[]*",
        b".hidden\n*\n?hidden\n[^.]*",
        b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n*a*a*a*b\na*?*b",
        b"x-y_z.tif\n*[x-z-]*\n[a-]*\n[]-]*\n[\\]a]*.tif",
        b"class_07\nclass_0[0-9]\nclass_[!1]*\nclass_\\",
    ]


_MAKERS = {"jpeg": _jpeg, "jpeg_opencv": _jpeg, "png": _png, "bmp": _bmp, "tiff": _tiff,
           "webp": _webp, "pnm": _pnm, "file_list": _file_list, "glob": _glob}


@functools.cache
def seeds(fmt: str) -> tuple[bytes, ...]:
    """The valid seed inputs of one format (encoded on first use, then cached)."""
    return tuple(_MAKERS[fmt]())
