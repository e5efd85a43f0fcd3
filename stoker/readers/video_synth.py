"""Synthetic videos whose frames carry their own index, for tests and benchmarks.

Each frame's index is drawn into its pixels as ten black or white blocks (two rows of
five, in the top half), big enough to survive lossy coding at any size from 32x24 up; the
bottom half is a colour ramp that moves with the frame, so colour conversion and motion
have something to work on. ``frame_index(rgb)`` reads the index back, so a test checks
frame identity exactly whatever the codec did to the pixels.

``write_video`` encodes such frames with PyAV's encoders (H.264, HEVC, VP8, VP9, AV1,
MPEG-4, MJPEG) into any container FFmpeg writes, with a chosen GOP length, B-frames,
explicit timestamps (variable frame rate) and pixel format (10-bit).
"""

from __future__ import annotations

import fractions
from collections.abc import Sequence
from typing import Any

import numpy as np

BITS = 10  # frames 0..1023 are told apart
_COLS, _ROWS = 5, 2


def _blocks(h: int, w: int) -> list[tuple[int, int, int, int]]:
    """(y0, y1, x0, x1) of each bit's block, bit 0 first."""
    bh, bw = (h // 2) // _ROWS, w // _COLS
    return [(r * bh, (r + 1) * bh, c * bw, (c + 1) * bw)
            for r in range(_ROWS) for c in range(_COLS)]


def frame_image(index: int, h: int, w: int) -> np.ndarray:
    """The RGB uint8 (h, w, 3) picture of frame ``index``."""
    out = np.empty((h, w, 3), np.uint8)
    for bit, (y0, y1, x0, x1) in enumerate(_blocks(h, w)):
        out[y0:y1, x0:x1] = 255 if (index >> bit) & 1 else 0
    top = (h // 2) // _ROWS * _ROWS
    out[top:h // 2] = 128
    yy, xx = np.mgrid[0:h - h // 2, 0:w]
    shift = 6 * index
    out[h // 2:, :, 0] = ((xx * 255) // max(w - 1, 1) + shift) % 256
    out[h // 2:, :, 1] = (yy * 255) // max(h - h // 2 - 1, 1)
    out[h // 2:, :, 2] = 255 - ((xx + yy + shift) * 255 // max(w + h, 1)) % 256
    return out


def frame_index(rgb: np.ndarray) -> int:
    """The index drawn into a decoded frame (HWC, RGB or any 3-channel order)."""
    rgb = np.asarray(rgb)
    h, w = rgb.shape[:2]
    luma = rgb.astype(np.float32).mean(axis=-1) if rgb.ndim == 3 else rgb.astype(np.float32)
    index = 0
    for bit, (y0, y1, x0, x1) in enumerate(_blocks(h, w)):
        my, mx = max(1, (y1 - y0) // 4), max(1, (x1 - x0) // 4)
        if luma[y0 + my:y1 - my, x0 + mx:x1 - mx].mean() > 128:
            index |= 1 << bit
    return index


def frame_indices(video: np.ndarray) -> list[int]:
    """``frame_index`` of each frame of an FHWC sequence."""
    return [frame_index(f) for f in np.asarray(video)]


_DEFAULT_PIX = {"mjpeg": "yuvj420p"}


def write_video(path: str, codec: str = "libx264", frames: int = 30, size: tuple[int, int] =
                (64, 48), fps: int = 30, gop: int | None = None, bframes: int | None = None,
                pix_fmt: str | None = None, pts: Sequence[int] | None = None,
                time_base: fractions.Fraction | None = None, container: str | None = None,
                options: dict[str, str] | None = None, first_index: int = 0,
                metadata: dict[str, str] | None = None) -> None:
    """Encodes ``frames`` synthetic frames of ``size`` (width, height) into ``path``.

    ``pts``: each frame's timestamp in ``time_base`` units (default 1/fps steps), for
    variable frame rate files. ``gop``: the keyframe interval; ``bframes``: B-frames
    between references (H.264/HEVC). ``options``: the encoder's own options.
    """
    import av

    w, h = size
    with av.open(path, "w", format=container) as out:
        stream: Any = out.add_stream(codec, rate=fps)
        stream.width, stream.height = w, h
        stream.pix_fmt = pix_fmt or _DEFAULT_PIX.get(codec, "yuv420p")
        opts = dict(options or {})
        if codec in ("libx264", "libx265"):
            opts.setdefault("preset", "veryfast")
        if gop is not None:
            stream.codec_context.gop_size = gop
            if codec == "libx265":
                opts["x265-params"] = ":".join(filter(None, [
                    opts.get("x265-params"), f"keyint={gop}", f"min-keyint={gop}",
                    "scenecut=0", "log-level=error"]))
            elif codec == "libx264":
                opts["x264-params"] = ":".join(filter(None, [
                    opts.get("x264-params"), f"keyint={gop}", f"min-keyint={gop}",
                    "scenecut=0"]))
            elif codec.startswith("libvpx"):
                opts.setdefault("auto-alt-ref", "0")
                opts.setdefault("lag-in-frames", "0")
                opts["g"] = str(gop)
                opts["keyint_min"] = str(gop)
        elif codec == "libx265":
            opts["x265-params"] = ":".join(filter(None, [opts.get("x265-params"),
                                                         "log-level=error"]))
        if bframes is not None:
            stream.codec_context.max_b_frames = bframes
            if codec == "libx265":
                opts["x265-params"] += f":bframes={bframes}"
        if codec == "libsvtav1":
            opts.setdefault("preset", "12")
        stream.options = opts
        if time_base is not None:
            stream.time_base = time_base
            stream.codec_context.time_base = time_base
        for k, v in (metadata or {}).items():
            stream.metadata[k] = v
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(frame_image(first_index + i, h, w),
                                               format="rgb24")
            if pts is not None:
                frame.pts = int(pts[i])
                frame.time_base = time_base
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
