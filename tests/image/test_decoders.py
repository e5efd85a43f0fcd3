"""Image decoding kernels against Pillow/OpenCV references: formats, colours, types,
EXIF orientation, region-of-interest and DCT-scaled decoding.

Images are made here with Pillow/OpenCV. JPEG references are Pillow's libjpeg-turbo
decode (accurate IDCT, smooth upsampling), which DALI 2.4's CPU decoder matches exactly.
"""

from __future__ import annotations

import io
import re

import cv2
import numpy as np
import pytest
from PIL import Image, ImageOps

from stoker.kernels.cpu.image import decode as K
from stoker.kernels.cpu.image import turbojpeg


def photo(h: int = 61, w: int = 83, seed: int = 0) -> np.ndarray:
    """A smooth colour image with texture: gradients plus noise (a JPEG's worst case is
    sharp detail, its common case is smooth)."""
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 3) % 256, (yy * 4) % 256, ((xx + yy) * 2) % 256], -1)
    noise = np.random.default_rng(seed).integers(-25, 25, (h, w, 3))
    return np.clip(cv2.GaussianBlur(base.astype(np.uint8), (0, 0), 1.0) + noise, 0, 255
                   ).astype(np.uint8)


def encode(img: np.ndarray | Image.Image, fmt: str = "JPEG", **opts) -> bytes:
    im = img if isinstance(img, Image.Image) else Image.fromarray(img)
    buf = io.BytesIO()
    im.save(buf, fmt, **opts)
    return buf.getvalue()


def pil(data: bytes, mode: str = "RGB") -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert(mode))


def maxdiff(a: np.ndarray, b: np.ndarray) -> int:
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())


RGB = photo()


def _restart_jpeg() -> bytes:
    ok, enc = cv2.imencode(".jpg", RGB[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90,
                                                    cv2.IMWRITE_JPEG_RST_INTERVAL, 2])
    return enc.tobytes()


JPEGS = {
    "420": encode(RGB, quality=90, subsampling="4:2:0"),
    "422": encode(RGB, quality=90, subsampling="4:2:2"),
    "444": encode(RGB, quality=90, subsampling="4:4:4"),
    "progressive": encode(RGB, quality=90, progressive=True),
    "restart": _restart_jpeg(),
    "q50": encode(RGB, quality=50),
}


# -- JPEG -----------------------------------------------------------------------------------

@pytest.fixture(autouse=True, params=[False, True], ids=["ctypes", "compiled"])
def turbojpeg_calls(request, monkeypatch):
    """Every test here runs with libjpeg-turbo called through ctypes and from compiled
    code (``turbojpeg.COMPILED``)."""
    monkeypatch.setattr(turbojpeg, "COMPILED", request.param)
    return request.param


def test_compiled_calls_give_the_ctypes_calls_pixels_and_errors(turbojpeg_calls, monkeypatch):
    assert (turbojpeg._compiled() is not None) == turbojpeg_calls

    def both(call, *args, **kwargs):
        got = []
        for compiled in (False, True):
            monkeypatch.setattr(turbojpeg, "COMPILED", compiled)
            try:
                got.append(call(*args, **kwargs))
            except (turbojpeg.JpegError, ValueError) as e:
                got.append(f"{type(e).__name__}: {e}")
        return got

    for name, data in JPEGS.items():
        for opts in [{}, {"roi": (5, 17, 30, 41)}, {"scale": (1, 2), "roi": (3, 4, 20, 25)},
                     {"fast_idct": True, "fast_upsample": True}, {"pixel_format": "GRAY"}]:
            a, b = both(turbojpeg.decode, data, **opts)
            np.testing.assert_array_equal(a, b, err_msg=f"{name} {opts}")
        a, b = both(lambda d: vars_of(turbojpeg.header(d)), data)
        assert a == b
        monkeypatch.setattr(turbojpeg, "COMPILED", True)  # the compiled read sees the end
        for ended in (data, data + bytes(10), data + bytes(20), data[:len(data) // 2]):
            assert turbojpeg.header(ended).ends == (b"\xff\xd9" in ended[-16:]), name
        for bad in (data[:len(data) // 2], data[:30], b"\xff\xd8" + bytes(50)):
            a, b = both(turbojpeg.decode, bad, roi=(0, 0, 8, 8))
            assert isinstance(a, str) and a == b, name
    for bad in (b"\xff\xd8\xff\xc0" + bytes(20), JPEGS["420"][:300]):  # header cut short
        a, b = both(lambda d: vars_of(turbojpeg.header(d)), bad)
        assert isinstance(a, str) and a == b and "not a decodable JPEG" in a
    a, b = both(turbojpeg.decode, JPEGS["420"], scale=(3, 7))
    assert a == b and "scaling factor 3/7 is not supported" in a


def vars_of(header: turbojpeg.Header) -> dict:
    return {k: getattr(header, k) for k in header.__slots__ if k != "ends"}


@pytest.mark.parametrize("name", sorted(JPEGS))
def test_jpeg_matches_libjpeg_turbo_accurate_decode(name):
    data = JPEGS[name]
    out = K.decode(data)
    assert out.dtype == np.uint8 and out.shape == (61, 83, 3)
    assert maxdiff(out, pil(data)) <= 1


def test_grayscale_jpeg_gives_gray_replicated_to_rgb_and_one_channel_as_any_data():
    data = encode(Image.fromarray(RGB).convert("L"), quality=90)
    gray = pil(data, "L")
    rgb = K.decode(data)
    assert maxdiff(rgb, np.repeat(gray[..., None], 3, 2)) <= 1
    any_data = K.decode(data, "ANY_DATA")
    assert any_data.shape == (61, 83, 1) and maxdiff(any_data[..., 0], gray) <= 1


def test_gray_output_of_a_colour_jpeg_is_its_luma_plane():
    im = Image.open(io.BytesIO(JPEGS["420"]))
    im.draft("L", im.size)  # libjpeg-turbo's own grayscale output: the Y plane
    out = K.decode(JPEGS["420"], "GRAY")
    assert out.shape == (61, 83, 1)
    assert maxdiff(out[..., 0], np.asarray(im.convert("L"))) <= 1


def test_cmyk_jpeg_becomes_rgb_as_pillow_converts_it():
    rng = np.random.default_rng(3)
    cmyk = rng.integers(0, 256, (40, 48, 4), dtype=np.uint8)
    cmyk = cv2.GaussianBlur(cmyk, (0, 0), 2.0)
    data = encode(Image.fromarray(cmyk, "CMYK"), quality=95)
    assert turbojpeg.header(data).colorspace in ("CMYK", "YCCK")
    assert maxdiff(K.decode(data), pil(data)) <= 1
    assert K.decode(data, "ANY_DATA").shape == (40, 48, 4)


# -- other formats --------------------------------------------------------------------------

def _rgba() -> np.ndarray:
    yy, xx = np.mgrid[0:61, 0:83]
    return np.dstack([RGB, ((xx * 3) % 256).astype(np.uint8)])


def test_png_8bit_rgb_gray_palette_are_exact():
    for im in (Image.fromarray(RGB), Image.fromarray(RGB).convert("L"),
               Image.fromarray(RGB).convert("P", palette=Image.ADAPTIVE, colors=16)):
        data = encode(im, "PNG")
        assert maxdiff(K.decode(data), pil(data)) == 0


def test_png_alpha_is_dropped_for_rgb_and_kept_for_any_data():
    rgba = _rgba()
    data = encode(rgba, "PNG")
    assert maxdiff(K.decode(data), rgba[..., :3]) == 0
    assert maxdiff(K.decode(data, "ANY_DATA"), rgba) == 0
    la = encode(Image.fromarray(rgba).convert("LA"), "PNG")
    assert K.decode(la, "ANY_DATA").shape == (61, 83, 2)
    assert K.probe(la).channels == 2


def test_png_16bit_keeps_its_values_as_uint16_and_rounds_to_uint8():
    yy, xx = np.mgrid[0:20, 0:30]
    v = (xx * 2011 + yy * 97).astype(np.uint16)
    rgb16 = np.dstack([v, v // 2, v // 3]).astype(np.uint16)
    ok, enc = cv2.imencode(".png", rgb16[..., ::-1])
    data = enc.tobytes()
    assert K.probe(data).bit_depth == 16
    np.testing.assert_array_equal(K.decode(data, dtype=np.uint16), rgb16)
    np.testing.assert_array_equal(K.decode(data), np.rint(rgb16 / 257).astype(np.uint8))
    np.testing.assert_allclose(K.decode(data, dtype=np.float32), rgb16 / 65535, atol=1e-6)


@pytest.mark.parametrize("fmt,opts", [("BMP", {}), ("TIFF", {}), ("PPM", {}),
                                      ("WEBP", {"lossless": True})])
def test_lossless_formats_are_exact(fmt, opts):
    data = encode(RGB, fmt, **opts)
    assert maxdiff(K.decode(data), RGB) == 0


def test_tiff_with_alpha_keeps_unpremultiplied_colour():
    rgba = _rgba()
    data = encode(rgba, "TIFF")
    assert maxdiff(K.decode(data, "ANY_DATA"), rgba) == 0


def test_lossy_webp_matches_pillow():
    data = encode(RGB, "WEBP", quality=90)
    assert maxdiff(K.decode(data), pil(data)) <= 2


def test_pnm_gray_and_bitmap():
    for im in (Image.fromarray(RGB).convert("L"), Image.fromarray(RGB).convert("1")):
        data = encode(im, "PPM")
        out = K.decode(data, "ANY_DATA")
        assert out.shape == (61, 83, 1)
        assert maxdiff(out[..., 0], pil(data, "L")) == 0


# -- colours and types ------------------------------------------------------------------------

def test_output_types_follow_dalis_definitions():
    data = JPEGS["444"]
    rgb = K.decode(data)
    np.testing.assert_array_equal(K.decode(data, "BGR"), rgb[..., ::-1])
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    ycc = K.decode(data, "YCbCr")  # BT.601 studio range, from the RGB pixels
    want = [16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255,
            128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255,
            128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255]
    for c in range(3):
        assert maxdiff(ycc[..., c], np.rint(want[c])) <= 1
    png = encode(RGB, "PNG")  # not a JPEG: gray from RGB
    gray = K.decode(png, "GRAY")[..., 0]
    assert maxdiff(gray, np.rint(0.299 * RGB[..., 0] + 0.587 * RGB[..., 1]
                                 + 0.114 * RGB[..., 2])) <= 1


def test_dtypes_rescale_to_the_types_range():
    data = encode(RGB, "PNG")
    np.testing.assert_allclose(K.decode(data, dtype=np.float32), RGB / 255, atol=1e-7)
    np.testing.assert_array_equal(K.decode(data, dtype=np.uint16), RGB.astype(np.uint16) * 257)
    np.testing.assert_array_equal(K.decode(data, dtype=np.int16),
                                  np.rint(RGB * (32767 / 255)).astype(np.int16))
    with pytest.raises(ValueError, match="dtype must be one of"):
        K.decode(data, dtype=np.float64)


# -- EXIF orientation -----------------------------------------------------------------------

def _with_orientation(orientation: int, fmt: str = "JPEG") -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    opts = {"quality": 95} if fmt == "JPEG" else {"lossless": True} if fmt == "WEBP" else {}
    return encode(RGB, fmt, exif=exif.tobytes(), **opts)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied_like_pillows_exif_transpose(orientation):
    data = _with_orientation(orientation)
    want = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))
    out = K.decode(data)
    assert maxdiff(out, want) <= 1
    assert K.probe(data).shape() == out.shape[:2]
    assert maxdiff(K.decode(data, adjust_orientation=False), pil(data)) <= 1


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "TIFF"])
def test_exif_orientation_of_other_formats(fmt):
    data = _with_orientation(6, fmt)
    assert K.probe(data).orientation == 6
    np.testing.assert_array_equal(K.decode(data), np.rot90(RGB, -1))
    np.testing.assert_array_equal(K.decode(data, adjust_orientation=False), RGB)
    np.testing.assert_array_equal(K.decode(data, roi=(10, 5, 30, 40)),
                                  np.rot90(RGB, -1)[10:40, 5:45])


# -- region of interest and scaled decoding ---------------------------------------------------

def _windows(h: int, w: int, n: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        wh, ww = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        yield int(rng.integers(0, h - wh + 1)), int(rng.integers(0, w - ww + 1)), wh, ww
    yield 0, 0, h, w
    yield h - 1, w - 1, 1, 1


@pytest.mark.parametrize("name", ["420", "422", "444", "progressive", "restart"])
def test_roi_decode_equals_the_window_of_a_full_decode(name):
    big = photo(150, 211, seed=4)
    sub = {"420": "4:2:0", "422": "4:2:2", "444": "4:4:4"}.get(name, "4:2:0")
    data = encode(big, quality=90, subsampling=sub, progressive=name == "progressive") \
        if name != "restart" else cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_RST_INTERVAL, 3]
                                              )[1].tobytes()
    full = K.decode(data)
    for y, x, h, w in _windows(150, 211):
        np.testing.assert_array_equal(K.decode(data, roi=(y, x, h, w)), full[y:y + h, x:x + w])


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_roi_is_in_oriented_coordinates(orientation):
    data = _with_orientation(orientation)
    full = K.decode(data)
    for y, x, h, w in _windows(*full.shape[:2], n=6):
        np.testing.assert_array_equal(K.decode(data, roi=(y, x, h, w)), full[y:y + h, x:x + w])


def test_roi_outside_the_image_is_refused():
    with pytest.raises(ValueError, match="does not fit in the 61x83 image"):
        K.decode(JPEGS["420"], roi=(50, 0, 20, 10))


@pytest.mark.parametrize("name", ["420", "444", "progressive", "restart"])
def test_a_window_of_a_truncated_jpeg_is_refused_wherever_it_falls(name):
    """A window above the missing rows is not decoded alone: the file's end is checked, and
    the window fails as the whole image does."""
    cut = JPEGS[name][:len(JPEGS[name]) * 2 // 3]
    with pytest.raises(K.DecodeError) as whole:
        K.decode(cut)
    # The cut lands in entropy data, or, for the progressive file, in a later scan's table.
    assert ("truncated" if name != "progressive" else "Huffman table") in str(whole.value)
    for roi in [(0, 0, 8, 8), (0, 40, 16, 40), (30, 0, 31, 83)]:
        with pytest.raises(K.DecodeError, match=re.escape(str(whole.value))):
            K.decode(cut, roi=roi)


def test_a_window_of_a_jpeg_with_a_trailer_after_its_end_is_decoded():
    data = JPEGS["420"] + bytes(range(40))
    full = K.decode(JPEGS["420"])
    for y, x, h, w in _windows(61, 83, n=6):
        np.testing.assert_array_equal(K.decode(data, roi=(y, x, h, w)), full[y:y + h, x:x + w])


def test_dct_scale_is_used_only_for_downscales_of_2x_or_more():
    assert K.dct_scale(400, 500, 224, 224) == 1
    assert K.dct_scale(448, 448, 224, 224) == 2
    assert K.dct_scale(1000, 1600, 224, 224) == 4
    assert K.dct_scale(4000, 4000, 100, 100) == 8


def _area_resize(img: np.ndarray, window, size) -> np.ndarray:
    y0, x0, y1, x1 = window
    m = np.array([[size[1] / (x1 - x0), 0, -x0 * size[1] / (x1 - x0)],
                  [0, size[0] / (y1 - y0), -y0 * size[0] / (y1 - y0)]], np.float64)
    if (y1 - y0) == img.shape[0] and (x1 - x0) == img.shape[1]:
        return cv2.resize(img, (size[1], size[0]), interpolation=cv2.INTER_AREA)
    return cv2.warpAffine(img, m, (size[1], size[0]), flags=cv2.INTER_LINEAR)


def test_scaled_decode_then_resize_is_close_to_full_decode_then_resize():
    big = cv2.resize(photo(240, 320, seed=7), (960, 720), interpolation=cv2.INTER_CUBIC)
    data = encode(big, quality=92)
    size = (180, 240)
    full = K.decode(data)
    want = cv2.resize(full, (size[1], size[0]), interpolation=cv2.INTER_AREA)
    small, window = K.decode_scaled(data, size)  # 720x960 -> 1/4 is exactly 180x240
    assert small.shape == (180, 240, 3) and window == (0.0, 0.0, 180.0, 240.0)
    got = small
    diff = np.abs(got.astype(int) - want)
    assert diff.mean() < 2.0 and diff.max() <= 16


def test_scaled_roi_window_maps_back_to_the_request():
    data = encode(photo(256, 320, seed=2), quality=90)
    roi = (33, 47, 180, 200)
    small, (y0, x0, y1, x1) = K.decode_scaled(data, (40, 40), roi=roi)
    assert small.shape[0] >= y1 - y0 >= 40 and (y1 - y0) * 4 == pytest.approx(180)
    assert (x1 - x0) * 4 == pytest.approx(200)
    full = K.decode(data, roi=roi).astype(np.float64)
    # The scaled pixels average 4x4 blocks: compare block means of the window.
    crop = small[int(np.ceil(y0)):int(y1), int(np.ceil(x0)):int(x1)].astype(np.float64)
    oy, ox = round((np.ceil(y0) - y0) * 4), round((np.ceil(x0) - x0) * 4)
    blocks = full[oy:oy + crop.shape[0] * 4, ox:ox + crop.shape[1] * 4]
    blocks = blocks.reshape(crop.shape[0], 4, crop.shape[1], 4, 3).mean(axis=(1, 3))
    assert np.abs(blocks - crop).mean() < 3


# -- header reading and limits --------------------------------------------------------------

def test_probe_reads_size_channels_and_format_without_decoding():
    cases = {"jpeg": JPEGS["420"], "png": encode(_rgba(), "PNG"), "bmp": encode(RGB, "BMP"),
             "tiff": encode(RGB, "TIFF"), "webp": encode(RGB, "WEBP", lossless=True),
             "pnm": encode(RGB, "PPM")}
    for fmt, data in cases.items():
        info = K.probe(data)
        assert (info.format, info.height, info.width) == (fmt, 61, 83)
    assert K.probe(cases["png"]).channels == 4


def test_decoded_size_limit_is_checked_before_decoding(monkeypatch):
    with pytest.raises(K.DecodeError, match="exceeds the decoded-size limit of 5000 pixels"):
        K.decode(JPEGS["420"], max_pixels=5000)
    monkeypatch.setattr(K, "MAX_PIXELS", 100)
    with pytest.raises(K.DecodeError, match="61x83 pixels exceeds"):
        K.decode(encode(RGB, "PNG"))


def test_decodes_jpeg_through_opencv_when_libturbojpeg_is_missing(monkeypatch):
    def missing():
        raise ImportError("no libturbojpeg")

    monkeypatch.setattr(turbojpeg, "library", missing)
    assert K.probe(JPEGS["420"]).shape() == (61, 83)
    assert maxdiff(K.decode(JPEGS["420"], roi=(3, 4, 20, 30)), pil(JPEGS["420"])[3:23, 4:34]) \
        <= 1


def test_a_read_header_serves_only_the_decode_of_the_same_bytes():
    # turbojpeg.header() (what probe() calls) keeps libjpeg-turbo's handle for the
    # thread's next decode; decoding other bytes (another size, or after a corrupt
    # header) must read their own header.
    small, large = JPEGS["420"], encode(photo(40, 120, 1), quality=90)
    want_small, want_large = pil(small), pil(large)
    turbojpeg.header(small)
    assert maxdiff(turbojpeg.decode(large), want_large) <= 1
    turbojpeg.header(large)
    assert maxdiff(turbojpeg.decode(large, roi=(5, 7, 20, 30)), want_large[5:25, 7:37]) <= 1
    assert maxdiff(turbojpeg.decode(large), want_large) <= 1  # a kept handle is used once
    with pytest.raises(turbojpeg.JpegError):
        turbojpeg.header(large[:40])
    assert maxdiff(turbojpeg.decode(small), want_small) <= 1
    info = K.probe(small)
    assert maxdiff(K.decode(small, info=info), want_small) <= 1
    # The same object is recognised without reading its address, also through a
    # memoryview of it; a view of part of an object is other bytes.
    both = np.concatenate([np.frombuffer(small, np.uint8), np.frombuffer(large, np.uint8)])
    turbojpeg.header(memoryview(both)[len(small):])  # the second image
    assert maxdiff(turbojpeg.decode(both), want_small) <= 1  # the buffer starts with the first
    turbojpeg.header(memoryview(both).cast("B"))
    assert maxdiff(turbojpeg.decode(both, roi=(2, 3, 10, 12)), want_small[2:12, 3:15]) <= 1
    # Two parts of one object of the same size are other bytes too.
    other = encode(photo(61, 83, 2), quality=90)
    n = max(len(small), len(other))  # padded after their EOI to one size
    halves = np.frombuffer(small + bytes(n - len(small)) + other + bytes(n - len(other)),
                           np.uint8)
    turbojpeg.header(memoryview(halves)[:n])
    assert maxdiff(turbojpeg.decode(memoryview(halves)[n:]), pil(other)) <= 1
