"""Image decoding kernels: encoded bytes in, an HWC array of the requested colours and type out.

JPEG goes through libjpeg-turbo (``turbojpeg.py``), which decodes only a requested window
and scales in the DCT domain; PNG, BMP, TIFF, WebP, PNM and JPEG 2000 go through OpenCV.
Colour and type conversions follow what DALI 2.4's CPU decoder was measured to do:

- RGB, BGR: 3 channels. GRAY: 1 channel; for JPEG it is the decoded luma (Y) plane, for
  other formats 0.299 R + 0.587 G + 0.114 B. YCbCr: ITU-R BT.601 "studio range" from the
  RGB pixels (Y in [16, 235], Cb/Cr in [16, 240] for 8 bits, offsets scaled for other
  types). ANY_DATA: the stored channels (gray 1, gray+alpha 2, RGB 3, RGBA 4, CMYK 4).
- CMYK/YCCK JPEGs (Adobe, inverted) become RGB as R = C * K / 255 (likewise G, B).
- ``dtype`` rescales to the type's range: 8-bit to float gives v / 255, 16-bit to uint8
  gives round(v / 257), uint8 to uint16 gives v * 257.
- EXIF orientation (JPEG, PNG, WebP, TIFF) is applied when ``adjust_orientation``; a
  window (``roi``) is always given in the oriented image's coordinates.

``MAX_PIXELS`` caps the stored image's pixel count (checked from the header, before any
pixel is decoded); pass ``max_pixels=`` to override it per call.
"""

from __future__ import annotations

import os

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.image import turbojpeg
from stoker.kernels.cpu.image.decode_header import (
    CorruptHeader,
    ImageInfo,
    UnsupportedFormat,
    probe,
)
from stoker.kernels.cpu.image.decode_png import for_libpng
from stoker.kernels.cpu.tensor.tensor import rows_contiguous

__all__ = ["MAX_PIXELS", "OUTPUT_TYPES", "DecodeError", "ImageInfo", "UnsupportedFormat",
           "decode", "decode_scaled", "dct_scale", "output_shape", "probe"]

# 128 megapixels: a 11585 x 11585 image, 384 MiB as 8-bit RGB. Far above any training
# image, low enough that a corrupt header claiming 60000 x 60000 is refused. Set
# STOKER_MAX_IMAGE_PIXELS (0: no limit) or this attribute to change it.
MAX_PIXELS = int(os.environ.get("STOKER_MAX_IMAGE_PIXELS", 128 * 1024 * 1024)) or 1 << 62
OUTPUT_TYPES = ("RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA")
DTYPES = tuple(np.dtype(t) for t in ("uint8", "uint16", "uint32", "int8", "int16", "int32",
                                      "float32"))
# (transpose, flip rows, flip columns) that turn the stored image into the displayed one:
# displayed = transpose?(flip(stored)).
_ORIENT = {1: (False, False, False), 2: (False, False, True), 3: (False, True, True),
           4: (False, True, False), 5: (True, False, False), 6: (True, True, False),
           7: (True, True, True), 8: (True, False, True)}


_INVERSE = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 8, 7: 7, 8: 6}


class DecodeError(ValueError):
    """The image data could not be decoded (corrupt, truncated, too large)."""


def output_shape(info: ImageInfo, output_type: str = "RGB",
                 adjust_orientation: bool = True) -> tuple[int, int, int]:
    """(H, W, C) that ``decode`` gives for this image."""
    h, w = info.shape(adjust_orientation)
    c = {"GRAY": 1, "ANY_DATA": info.channels}.get(output_type, 3)
    return h, w, c


def dct_scale(roi_h: int, roi_w: int, min_h: int, min_w: int) -> int:
    """The DCT downscale denominator (1, 2, 4 or 8) that keeps a roi_h x roi_w window at
    least min_h x min_w: scaled decoding is used only where the window shrinks 2x or more."""
    denom = 1
    while denom < 8 and roi_h // (2 * denom) >= min_h and roi_w // (2 * denom) >= min_w:
        denom *= 2
    return denom


# -- public entry points ------------------------------------------------------------------------

def decode(data: np.ndarray | bytes, output_type: str = "RGB", *, dtype: np.dtype | type =
           np.uint8, roi: tuple[int, int, int, int] | None = None,
           adjust_orientation: bool = True, max_pixels: int | None = None,
           info: ImageInfo | None = None, fast_idct: bool = False,
           contiguous: bool = True, transient: bool = False) -> np.ndarray:
    """Decodes an image to (H, W, C) of ``dtype``; ``roi`` = (y, x, h, w) decodes only that
    window of the (oriented) image. JPEG windows skip the rows above and stop after the
    window; the result equals the same window of a full decode. ``info`` (from ``probe``)
    saves reading the header twice; ``fast_idct`` uses libjpeg-turbo's fast integer IDCT.
    ``contiguous=False`` allows a view whose rows are apart (a JPEG window is decoded a
    little wider, then trimmed): for a consumer that reads rows, not one block.
    ``transient``: the caller drops the image before it decodes the next one (it resizes
    it at once). Such an image is made by malloc, which hands the same, cache-warm memory
    to the next one; an image handed on is made on recycled memory (``buffers``)."""
    image, _ = _decode(data, output_type, np.dtype(dtype), roi, None, adjust_orientation,
                       max_pixels, info, fast_idct, contiguous, transient)
    return image


def decode_scaled(data: np.ndarray | bytes, min_size: tuple[int, int],
                  output_type: str = "RGB", *, dtype: np.dtype | type = np.uint8,
                  roi: tuple[int, int, int, int] | None = None, adjust_orientation: bool = True,
                  max_pixels: int | None = None, info: ImageInfo | None = None,
                  fast_idct: bool = False, transient: bool = False,
                  ) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """For decode -> resize: decodes ``roi`` (default: the whole image) at the smallest DCT
    scale (1/2, 1/4, 1/8, as libjpeg-turbo offers) that keeps it at least ``min_size``
    (h, w); other formats decode at full size.

    Returns the image and the window (y0, x0, y1, x1), in the returned image's pixel
    coordinates (fractional when scaled), that corresponds to ``roi``; a resize of that
    window to the final size approximates resizing the full-resolution window.
    ``transient`` as for ``decode``.
    """
    return _decode(data, output_type, np.dtype(dtype), roi, min_size, adjust_orientation,
                   max_pixels, info, fast_idct, transient=transient)


# -- the work -----------------------------------------------------------------------------------

def _as_buffer(data: np.ndarray | bytes) -> np.ndarray:
    arr = np.frombuffer(data, np.uint8) if isinstance(data, bytes | bytearray | memoryview) \
        else np.asarray(data)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise TypeError(f"encoded image data must be 1-D uint8 bytes, got a {arr.ndim}-D "
                        f"{arr.dtype} array")
    return np.ascontiguousarray(arr)


def _stored_window(roi: tuple[int, int, int, int], info: ImageInfo, orient: bool
                   ) -> tuple[int, int, int, int]:
    """The window of the stored image that becomes ``roi`` of the oriented one."""
    y, x, h, w = (int(v) for v in roi)
    oh, ow = info.shape(orient)
    if h <= 0 or w <= 0 or y < 0 or x < 0 or y + h > oh or x + w > ow:
        raise ValueError(f"window (y={y}, x={x}, h={h}, w={w}) does not fit in the "
                         f"{oh}x{ow} image")
    transpose, flip_y, flip_x = _ORIENT[info.orientation] if orient else _ORIENT[1]
    if transpose:
        y, x, h, w = x, y, w, h
    if flip_y:
        y = info.height - y - h
    if flip_x:
        x = info.width - x - w
    return y, x, h, w


def _decode(data: np.ndarray | bytes, output_type: str, dtype: np.dtype,
            roi: tuple[int, int, int, int] | None, min_size: tuple[int, int] | None,
            orient: bool, max_pixels: int | None, info: ImageInfo | None,
            fast_idct: bool = False, contiguous: bool = True, transient: bool = False,
            ) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    if output_type not in OUTPUT_TYPES:
        raise ValueError(f"output_type must be one of {', '.join(OUTPUT_TYPES)}, "
                         f"got {output_type!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(map(str, DTYPES))}, got {dtype}")
    buf = _as_buffer(data)
    try:
        info = info or probe(buf)
    except CorruptHeader as e:
        raise DecodeError(str(e)) from None
    limit = MAX_PIXELS if max_pixels is None else max_pixels
    if limit and info.height * info.width > limit:
        raise DecodeError(f"{info.format.upper()} image of {info.height}x{info.width} pixels "
                          f"exceeds the decoded-size limit of {limit} pixels")
    if info.format == "tiff" and info.orientation != 1:
        # libtiff (through OpenCV and Pillow alike) hands TIFFs out already oriented: the
        # decoded image is the displayed one, and "no orientation" is its inverse.
        h, w = info.shape(True)
        info = info._replace(height=h, width=w,
                             orientation=1 if orient else _INVERSE[info.orientation])
        orient = not orient
    stored = _stored_window(roi, info, orient) if roi is not None else None
    denom = 1
    if min_size is not None and info.format == "jpeg":
        sh, sw = (stored[2], stored[3]) if stored else (info.height, info.width)
        mh, mw = min_size
        if orient and info.transposed:
            mh, mw = mw, mh
        denom = dct_scale(sh, sw, mh, mw)
    native, kind, window = _decode_native(buf, info, output_type, stored, denom, fast_idct,
                                          transient)
    out = _convert(native, kind, info, output_type, dtype)
    if orient and info.orientation != 1:
        out, window = _apply_orientation(out, window, info.orientation)
    if not contiguous and rows_contiguous(out):
        return out, window
    return (np.ascontiguousarray(out) if transient else buffers.contiguous(out)), window


def _decode_native(buf: np.ndarray, info: ImageInfo, output_type: str,
                   stored: tuple[int, int, int, int] | None, denom: int, fast_idct: bool,
                   transient: bool) -> tuple[np.ndarray, str, tuple[float, float, float, float]]:
    """The stored window in the decoder's own channel order ("RGB", "BGR", "GRAY", "CMYK",
    "BGRA", "GA"), and the fractional window of the request inside it."""
    if info.format == "jpeg":
        try:
            return _decode_jpeg(buf, info, output_type, stored, denom, fast_idct, transient)
        except ImportError:
            pass  # no libturbojpeg: OpenCV below decodes the whole image
    img = None
    if info.format == "png":
        try:
            buf = for_libpng(buf)  # libpng, through OpenCV, would print its complaints
        except CorruptHeader as e:
            raise DecodeError(str(e)) from None
    if info.format == "tiff" and info.channels == 4:
        img = _decode_pillow(buf)
    if img is None:
        import cv2

        flags = cv2.IMREAD_UNCHANGED | cv2.IMREAD_IGNORE_ORIENTATION
        try:
            img = cv2.imdecode(buf, flags)
        except cv2.error as e:
            raise DecodeError(f"{info.format.upper()} data could not be decoded: {e}") \
                from None
    if img is None:
        raise DecodeError(f"{info.format.upper()} data could not be decoded (corrupt or "
                          "truncated)")
    if img.shape[:2] != (info.height, info.width):
        raise DecodeError(f"{info.format.upper()} decoded to {img.shape[:2]}, but its header "
                          f"says {info.height}x{info.width}")
    if stored is not None:
        y, x, h, w = stored
        img = img[y:y + h, x:x + w]
    c = 1 if img.ndim == 2 else img.shape[2]
    kind = {1: "GRAY", 3: "BGR", 4: "BGRA"}.get(c)
    if kind is None:
        raise DecodeError(f"{info.format.upper()} image with {c} channels is not supported")
    if img.ndim == 2:
        img = img[..., None]
    if kind == "BGRA" and info.channels == 2:  # OpenCV widens gray+alpha to BGRA
        img, kind = img[..., [0, 3]], "GA"
    return img, kind, (0.0, 0.0, float(img.shape[0]), float(img.shape[1]))


def _decode_pillow(buf: np.ndarray) -> np.ndarray | None:
    """TIFFs with alpha: OpenCV premultiplies their colour by alpha, DALI (and Pillow) keep
    the stored colour. Returns OpenCV's channel order (gray, BGR, BGRA), or None when
    Pillow cannot read it."""
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(buf.tobytes())) as im:
            if im.mode in ("L", "I;16", "RGB", "RGBA"):
                arr = np.asarray(im)
            else:
                arr = np.asarray(im.convert("RGBA" if "A" in im.mode else "RGB"))
    except Exception:
        return None
    if arr.ndim == 3:
        arr = arr[..., [2, 1, 0, 3][:arr.shape[2]]]
    return arr


def scaled_window(y: int, x: int, h: int, w: int, height: int, width: int, denom: int
                  ) -> tuple[int, int, int, int, float, float, float, float]:
    """The whole pixels [y0, y1) x [x0, x1) of a height x width image decoded at 1/denom
    scale that cover its window (y, x, h, w), and the window's fractional place in them:
    (y0, x0, y1, x1, top, left, bottom, right). (Compiled too: ``decode_resize_loop``;
    so the scaled size, ``turbojpeg.scaled``, is written out.)"""
    y0, x0 = y // denom, x // denom
    y1 = min((height + denom - 1) // denom, -(-(y + h) // denom))
    x1 = min((width + denom - 1) // denom, -(-(x + w) // denom))
    return (y0, x0, y1, x1, y / denom - y0, x / denom - x0, (y + h) / denom - y0,
            (x + w) / denom - x0)


def _decode_jpeg(buf: np.ndarray, info: ImageInfo, output_type: str,
                 stored: tuple[int, int, int, int] | None, denom: int, fast_idct: bool,
                 transient: bool) -> tuple[np.ndarray, str, tuple[float, float, float, float]]:
    cmyk = info.colorspace in ("CMYK", "YCCK")
    if cmyk:
        fmt = "CMYK"
    elif output_type == "GRAY" or (output_type == "ANY_DATA" and info.channels == 1):
        fmt = "GRAY"  # libjpeg-turbo hands out the Y plane without colour conversion
    elif output_type == "BGR":
        fmt = "BGR"
    else:
        fmt = "RGB"
    scale = (1, denom)
    if stored is None:
        window = (0.0, 0.0, info.height / denom, info.width / denom)
        region = None
    else:
        y0, x0, y1, x1, *frac = scaled_window(*stored, info.height, info.width, denom)
        region, window = (y0, x0, y1 - y0, x1 - x0), tuple(frac)
    try:
        img = turbojpeg.decode(buf, pixel_format=fmt, scale=scale, roi=region,
                               fast_idct=fast_idct, transient=transient)
    except turbojpeg.JpegError as e:
        raise DecodeError(f"JPEG data could not be decoded: {e}") from None
    return img, fmt, window


# -- colours and types --------------------------------------------------------------------------

def _cmyk_to_rgb(cmyk: np.ndarray) -> np.ndarray:
    c = cmyk.astype(np.uint16)
    k = c[..., 3:4]
    return ((c[..., :3] * k + 127) // 255).astype(np.uint8)


def _to_rgb(img: np.ndarray, kind: str) -> np.ndarray:
    if kind == "RGB":
        return img
    if kind in ("BGR", "BGRA"):
        return img[..., 2::-1]
    if kind == "CMYK":
        return _cmyk_to_rgb(img)
    return np.repeat(img[..., :1], 3, axis=2)  # GRAY, GA


def _to_gray(img: np.ndarray, kind: str, truncate: bool) -> np.ndarray:
    if kind in ("GRAY", "GA"):
        return img[..., :1]
    rgb = _to_rgb(img, kind)
    if rgb.dtype == np.uint8 and not truncate:
        import cv2

        return cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)[..., None]
    g = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    if rgb.dtype.kind in "iu":
        g = np.floor(g) if truncate else np.rint(g)
    return g.astype(rgb.dtype)[..., None]


def _rescale(img: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Values from the source type's range to ``dtype``'s (floats: [0, 1])."""
    src = img.dtype
    if src == dtype:
        return img
    src_max = float(np.iinfo(src).max) if src.kind in "iu" else 1.0
    work = np.float32 if dtype.kind == "f" else np.float64  # exact rounding at .5
    if dtype.kind == "f":
        return (img.astype(work) * (1.0 / src_max)).astype(dtype)
    if src == np.uint8 and dtype == np.uint16:
        return img.astype(np.uint16) * np.uint16(257)
    dst_max = float(np.iinfo(dtype).max)
    return np.rint(img.astype(work) * (dst_max / src_max)).astype(dtype)


def _ycbcr(rgb: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """BT.601 studio-range YCbCr of RGB given in ``dtype``'s range."""
    # Offsets 16 and 128 are in 1/256ths of the range: 4096 and 32768 for 16 bits.
    top = 1.0 if dtype.kind == "f" else float(np.iinfo(dtype).max)
    unit = 1.0 / 256.0 if dtype.kind == "f" else (top + 1.0) / 256.0
    m = np.array([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                  [112.0, -93.786, -18.214]], np.float64) / 255.0
    off = np.array([16.0, 128.0, 128.0]) * unit
    out = rgb.astype(np.float32) @ m.T.astype(np.float32) + off.astype(np.float32)
    if dtype.kind == "f":
        return out.astype(dtype)
    return np.clip(np.rint(out), 0, top).astype(dtype)


def _convert(img: np.ndarray, kind: str, info: ImageInfo, output_type: str,
             dtype: np.dtype) -> np.ndarray:
    if output_type == "RGB":
        return _rescale(_to_rgb(img, kind), dtype)
    if output_type == "BGR":
        return _rescale(img if kind == "BGR" else _to_rgb(img, kind)[..., ::-1], dtype)
    if output_type == "GRAY":
        # DALI's PNG and CMYK-JPEG paths truncate the luma, its others round (measured).
        truncate = info.format == "png" or kind == "CMYK"
        return _rescale(_to_gray(img, kind, truncate), dtype)
    if output_type == "YCbCr":
        return _ycbcr(_rescale(_to_rgb(img, kind), dtype), dtype)
    # ANY_DATA: the stored channels, colour in RGB(A) order.
    if kind in ("BGR", "BGRA"):
        img = img[..., [2, 1, 0, 3][:img.shape[2]]]
    return _rescale(img, dtype)


def _apply_orientation(img: np.ndarray, window: tuple[float, float, float, float],
                       orientation: int) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    transpose, flip_y, flip_x = _ORIENT[orientation]
    h, w = img.shape[:2]
    y0, x0, y1, x1 = window
    if flip_y:
        img, (y0, y1) = img[::-1], (h - y1, h - y0)
    if flip_x:
        img, (x0, x1) = img[:, ::-1], (w - x1, w - x0)
    if transpose:
        img, (y0, x0, y1, x1) = img.transpose(1, 0, 2), (x0, y0, x1, y1)
    return img, (y0, x0, y1, x1)
