"""The compiled YUV 4:2:0 -> RGB loop against swscale itself (PyAV's reformat with the
decoder's flags, the conversion DALI's CPU decoder uses): the same bytes on random planes
of many sizes and row pitches, on the pixels where swscale's 32-bit arithmetic wraps, and
through the decoder, where frames it does not cover still go to swscale."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

av = pytest.importorskip("av")

from stoker.kernels.cpu.video import decode  # noqa: E402
from stoker.kernels.cpu.video.yuv_loop import to_rgb  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"


def _frame(y: np.ndarray, u: np.ndarray, v: np.ndarray, color_range: int = 1):
    h, w = y.shape
    frame = av.VideoFrame(w, h, "yuv420p")
    for plane, values in zip(frame.planes, (y, u, v), strict=True):
        rows = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
        rows[:] = 77  # the pitch's padding must not leak into the pixels
        rows[:values.shape[0], :values.shape[1]] = values
    frame.color_range = color_range
    return frame


def _swscale(frame) -> np.ndarray:
    rgb = frame.reformat(format="rgb24", **decode._conversion(av))
    plane = rgb.planes[0]
    rows = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
    return rows[:frame.height, :frame.width * 3].reshape(frame.height, frame.width, 3)


def _loop(frame) -> np.ndarray:
    out = np.full((frame.height, frame.width, 3), 1, np.uint8)
    y, u, v = (np.frombuffer(p, np.uint8).reshape(-1, p.line_size) for p in frame.planes)
    to_rgb(y, u, v, -1, -1, out)
    return out


@pytest.mark.parametrize("size", [(16, 16), (16, 18), (22, 16), (48, 64), (36, 100),
                                  (90, 160), (360, 640), (240, 426), (1080, 1920)])
def test_random_planes_equal_swscale(size):
    h, w = size
    rng = np.random.default_rng(h * 10007 + w)
    planes = [rng.integers(0, 256, s, dtype=np.uint8) for s in ((h, w), (h // 2, w // 2),
                                                               (h // 2, w // 2))]
    frame = _frame(*planes)
    assert np.array_equal(_loop(frame), _swscale(frame))


def test_wrapping_pixels_equal_swscale():
    # Bright luma with extreme chroma: blue's sum passes 2^31 in swscale's int arithmetic
    # and wraps to a negative value, written as 0.
    h, w = 32, 32
    y = np.full((h, w), 255, np.uint8)
    u = np.full((h // 2, w // 2), 255, np.uint8)
    v = np.zeros((h // 2, w // 2), np.uint8)
    frame = _frame(y, u, v)
    want = _swscale(frame)
    assert want[..., 2].max() == 0  # the wrap happens in this swscale
    assert np.array_equal(_loop(frame), want)
    grid = np.arange(256, dtype=np.uint8)
    y = np.tile(grid[::8], (h, 1))
    u = np.tile(grid[::16], (h // 2, 1))
    v = u[:, ::-1].copy()
    frame = _frame(y, u, v)
    assert np.array_equal(_loop(frame), _swscale(frame))


@pytest.mark.parametrize(("name", "siting"), [
    ("vp8_cfr.webm", (-1, -1)), ("vp9_vfr.webm", (-1, -1)), ("h264_bframes.mp4", (0, -1)),
    ("vp9_cfr.webm", "odd size"), ("mjpeg.avi", "full range"), ("h264_10bit.mp4", "10-bit")])
def test_decoder_output_equals_swscale(name, siting, monkeypatch):
    """Whole files through the decoder: the loop where it applies (even 8-bit 4:2:0, with
    the chroma siting settled on the file's first telling frame: centred for VP8/9, on
    even columns for H.264), swscale elsewhere; the bytes are swscale's either way."""
    from stoker.readers.video_index import scan

    monkeypatch.setattr(decode, "_sitings", {})

    index = scan(str(VIDEOS / name), str(VIDEOS / name))
    frames = np.arange(min(index.n_frames, 12))
    shape = (len(frames), index.height, index.width, 3)

    def read() -> np.ndarray:
        out = np.zeros(shape, np.uint8)
        dec = decode.Decoder(str(VIDEOS / name), index)
        try:
            dec.read(frames, out)
        finally:
            dec.close()
        return out

    fast = read()
    path = str(VIDEOS / name)
    assert decode._sitings.get(path, "not probed") == (
        siting if isinstance(siting, tuple) else "not probed")
    monkeypatch.setattr(decode, "_fast_rgb", lambda *a: False)
    assert np.array_equal(fast, read())


def test_in_memory_videos_settle_their_own_siting(monkeypatch):
    """decoders.video's decoders share a label, not a file: an H.264 sample (chroma on
    even columns) after a VP9 one (centred) still gets swscale's bytes."""
    from stoker import Pipeline, fn

    files = [str(VIDEOS / n) for n in ("vp9_vfr.webm", "h264_bframes.mp4", "vp8_cfr.webm")]

    def decoded() -> list[np.ndarray]:
        pipe = Pipeline(batch_size=3, num_threads=1, device_id=None)
        with pipe:
            pipe.set_outputs(fn.decoders.video(fn.readers.file(files=files)[0]))
        out = pipe.run()[0]
        pipe.close()
        return [np.array(out.at(i)) for i in range(3)]

    monkeypatch.setattr(decode, "_sitings", {})
    fast = decoded()
    assert decode._sitings == {}
    monkeypatch.setattr(decode, "_fast_rgb", lambda *a: False)
    for got, want in zip(fast, decoded(), strict=True):
        assert np.array_equal(got, want)


def test_flat_chroma_settles_nothing(monkeypatch):
    """Frames whose chroma is flat convert alike at every siting: swscale's, until a
    frame tells them apart or the probes run out (then swscale for the file)."""
    monkeypatch.setattr(decode, "_sitings", {})
    dec = decode.Decoder.__new__(decode.Decoder)
    dec.path, dec.probes, dec.convert = "flat.webm", 0, decode._conversion(av)
    dec.siting, dec.shared = (), True
    y = np.random.default_rng(0).integers(0, 256, (32, 32), dtype=np.uint8)
    flat = np.full((16, 16), 100, np.uint8)
    target = np.zeros((32, 32, 3), np.uint8)
    for _ in range(decode.SITING_PROBES - 1):
        assert dec._converted(_frame(y, flat, flat), target)
        assert np.array_equal(target, _swscale(_frame(y, flat, flat)))
    assert "flat.webm" not in decode._sitings
    assert dec._converted(_frame(y, flat, flat), target)
    assert decode._sitings["flat.webm"] is None
    assert not dec._converted(_frame(y, flat, flat), target)


def test_full_range_and_odd_sizes_go_to_swscale():
    y = np.zeros((32, 32), np.uint8)
    c = np.zeros((16, 16), np.uint8)
    assert decode._fast_rgb(_frame(y, c, c), 32, 32)
    assert not decode._fast_rgb(_frame(y, c, c, color_range=2), 32, 32)
    odd = av.VideoFrame(33, 31, "yuv420p")
    assert not decode._fast_rgb(odd, 33, 31)
    assert not decode._fast_rgb(av.VideoFrame(32, 32, "yuv444p"), 32, 32)
