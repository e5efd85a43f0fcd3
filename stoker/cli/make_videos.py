"""``stoker make-dataset --video``: a clip set for the video benchmarks, made without a network.

Every combination of codec (H.264, VP9), GOP length (30, 250) and size (1080p, 360p) gets
its own folder, ``<codec>_gop<G>_<size>/``, laid out as ``fn.readers.video(file_root=...)``
and ``fn.experimental.readers.video`` expect it: one sub-folder per class, clips inside.
The pictures are scikit-image's photographs, four of them tiled into a canvas that the
camera pans over and zooms into, so the encoder sees real texture and motion (a flat
synthetic picture decodes several times faster than filmed video and would flatter every
reader). H.264 is encoded with x264 (``veryfast``, CRF 23, no scene cuts, so the GOP is
exactly the one asked for), VP9 with libvpx in its realtime mode (CRF 32), both 4:2:0.
"""

from __future__ import annotations

import os
import pathlib
import time
from typing import Any

import numpy as np

SIZES = {"1080p": (1920, 1080), "720p": (1280, 720), "360p": (640, 360), "180p": (320, 180)}
CODECS = {  # name: (PyAV encoder, container extension)
    "h264": ("libx264", "mp4"),
    "hevc": ("libx265", "mp4"),
    "vp9": ("libvpx-vp9", "webm"),
}


def set_name(codec: str, gop: int, size: str) -> str:
    """The folder of one clip set: ``h264_gop30_1080p``."""
    return f"{codec}_gop{gop}_{size}"


def _canvas(photos: list[np.ndarray], rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Four photographs tiled 2 x 2 at the output's size each: a canvas twice the frame."""
    import cv2

    picks = rng.choice(len(photos), 4, replace=len(photos) < 4)
    tiles = [cv2.resize(photos[i], (w, h), interpolation=cv2.INTER_CUBIC) for i in picks]
    canvas = np.concatenate([np.concatenate(tiles[:2], axis=1),
                             np.concatenate(tiles[2:], axis=1)], axis=0)
    return canvas[:, :, ::-1]  # BGR (OpenCV) -> RGB


def camera_frames(canvas: np.ndarray, frames: int, w: int, h: int,
                  rng: np.random.Generator) -> Any:
    """Yields ``frames`` RGB frames of (h, w): a window panning over ``canvas`` along a
    smooth random path while zooming between 50 % and 90 % of its size."""
    import cv2

    ch, cw = canvas.shape[:2]
    phase = rng.uniform(0, 2 * np.pi, 3)
    speed = rng.uniform(0.5, 1.5, 3) * 2 * np.pi / max(frames, 1)
    for t in range(frames):
        zoom = 0.7 + 0.2 * np.sin(phase[2] + speed[2] * t)
        vw, vh = cw * zoom, ch * zoom
        cx = cw / 2 + (cw - vw) / 2 * np.sin(phase[0] + speed[0] * t)
        cy = ch / 2 + (ch - vh) / 2 * np.sin(phase[1] + speed[1] * t)
        # The affine map from the frame to the canvas window (one resampling pass).
        m = np.array([[vw / w, 0, cx - vw / 2], [0, vh / h, cy - vh / 2]], np.float64)
        yield cv2.warpAffine(canvas, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REFLECT)


class Encoder:
    """One clip being written: ``add`` a yuv420p ``av.VideoFrame``, then ``close``."""

    def __init__(self, path: str, codec: str, w: int, h: int, gop: int, fps: int = 30):
        import av

        encoder, _ = CODECS[codec]
        self.out = av.open(path, "w")
        stream: Any = self.out.add_stream(encoder, rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.codec_context.gop_size = gop
        if codec == "h264":
            stream.options = {"preset": "veryfast", "crf": "23", "x264-params":
                              f"keyint={gop}:min-keyint={gop}:scenecut=0"}
        elif codec == "hevc":
            stream.options = {"preset": "veryfast", "crf": "28", "x265-params":
                              f"keyint={gop}:min-keyint={gop}:scenecut=0:log-level=error"}
        else:
            stream.options = {"deadline": "realtime", "cpu-used": "8", "crf": "32", "b": "0",
                              "row-mt": "1", "g": str(gop), "keyint_min": str(gop),
                              "auto-alt-ref": "0", "lag-in-frames": "0"}
        self.stream = stream

    def add(self, frame: Any) -> None:
        frame.pts = None  # each encoder numbers the frames itself
        self.out.mux(self.stream.encode(frame))

    def close(self) -> None:
        self.out.mux(self.stream.encode())
        self.out.close()


def make_video_dataset(root: str | os.PathLike, videos: int = 2, frames: int = 300,
                       classes: int = 2, codecs: tuple[str, ...] = ("h264", "vp9"),
                       gops: tuple[int, ...] = (30, 250),
                       sizes: tuple[str, ...] = ("1080p", "360p"), seed: int = 0,
                       log: Any = None) -> dict[str, Any]:
    """Writes ``videos`` clips of ``frames`` frames into each set folder under ``root``
    (one per codec x GOP x size); returns statistics. The same seed gives every set the
    same camera paths, so the sets differ only in how they are encoded."""
    from stoker.cli.make_dataset import _load_photos

    for c in codecs:
        if c not in CODECS:
            raise SystemExit(f"stoker make-dataset: unknown codec {c!r}; one of "
                             f"{', '.join(CODECS)}")
    for s in sizes:
        if s not in SIZES:
            raise SystemExit(f"stoker make-dataset: unknown size {s!r}; one of "
                             f"{', '.join(SIZES)}")
    if videos < 1 or frames < 1 or classes < 1 or any(g < 1 for g in gops):
        raise SystemExit("stoker make-dataset: --videos, --frames, --classes and --gops "
                         "must be at least 1")
    photos = _load_photos()
    root = pathlib.Path(root)
    written: dict[str, int] = {}
    total = 0
    import av

    for size in sizes:
        w, h = SIZES[size]
        # One camera path per clip number, encoded into every (codec, GOP) set at once, so
        # the pictures are made and converted to yuv420p once, not once per set.
        rng = np.random.default_rng(seed)
        for i in range(videos):
            encoders = []
            for codec in codecs:
                for gop in gops:
                    folder = root / set_name(codec, gop, size) / f"class_{i % classes:03d}"
                    folder.mkdir(parents=True, exist_ok=True)
                    path = folder / f"clip_{i:04d}.{CODECS[codec][1]}"
                    encoders.append((path, Encoder(str(path), codec, w, h, gop)))
            canvas = _canvas(photos, rng, w, h)
            for rgb in camera_frames(canvas, frames, w, h, rng):
                yuv = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(
                    format="yuv420p")
                for _, enc in encoders:
                    enc.add(yuv)
            for path, enc in encoders:
                enc.close()
                total += path.stat().st_size
                if log:
                    log(f"  {path.relative_to(root)}")
        for codec in codecs:
            for gop in gops:
                written[set_name(codec, gop, size)] = videos
    return {"sets": written, "videos": videos * len(written), "total_mb": total / 2**20}


def run_make_video_dataset(args: Any) -> int:
    start = time.perf_counter()

    def split(text: str) -> tuple[str, ...]:
        return tuple(t.strip() for t in text.split(",") if t.strip())

    try:
        gops = tuple(int(g) for g in split(args.gops))
    except ValueError:
        raise SystemExit(f"stoker make-dataset: --gops takes integers, got {args.gops!r}") \
            from None
    stats = make_video_dataset(args.root, args.videos, args.frames, args.classes,
                               split(args.codecs), gops, split(args.sizes), args.seed,
                               log=print if args.verbose else None)
    print(f"stoker make-dataset --video: {stats['videos']} clips of {args.frames} frames "
          f"in {len(stats['sets'])} sets under {args.root} ({', '.join(stats['sets'])}; "
          f"{stats['total_mb']:.1f} MB) in {time.perf_counter() - start:.1f} s")
    return 0
