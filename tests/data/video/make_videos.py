"""Writes the test videos of tests/data/video (committed; encoders' output changes between
PyAV wheels, so the files are kept, not regenerated in CI).

Run from the repository root with PyAV installed:
    .venv/bin/python tests/data/video/make_videos.py

Every frame carries its index in its pixels (stoker/readers/video_synth.py), so tests
check frame identity exactly. The set: each codec stoker decodes on the CPU (H.264,
HEVC, VP8, VP9, AV1, MPEG-4, MJPEG) in a variety of containers (mp4, mkv, webm, avi, ts,
mov, a raw H.264 stream), B-frames, long and open GOPs, variable frame rates, 10-bit,
odd sizes, rotation metadata, and damaged files (truncated, empty, random bytes).
"""

from __future__ import annotations

import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), *[os.pardir] * 3))
from stoker.readers.video_synth import write_video  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MS = Fraction(1, 1000)


def vfr_pts(n: int, seed: int) -> list[int]:
    """Irregular millisecond timestamps: steps of 20-60 ms."""
    steps = np.random.default_rng(seed).integers(20, 61, n)
    return [0, *np.cumsum(steps)[:-1].tolist()]


VIDEOS = {
    # DALI 2.4 decodes these on the CPU: its recorded outputs are the oracle.
    "vp9_cfr.webm": dict(codec="libvpx-vp9", frames=40, size=(65, 49), gop=10),
    "vp9_vfr.webm": dict(codec="libvpx-vp9", frames=30, size=(64, 48), gop=8,
                         pts=vfr_pts(30, 1), time_base=MS),
    "vp8_cfr.webm": dict(codec="libvpx", frames=30, size=(64, 48), gop=10),
    "mjpeg.avi": dict(codec="mjpeg", frames=30, size=(64, 48), container="avi"),
    "mjpeg_odd.avi": dict(codec="mjpeg", frames=12, size=(47, 35), container="avi"),
    # Codecs DALI 2.4 cannot decode on the CPU.
    "h264_bframes.mp4": dict(codec="libx264", frames=48, size=(64, 48), gop=12, bframes=3),
    "h264_longgop.mkv": dict(codec="libx264", frames=60, size=(64, 48), gop=250,
                             bframes=2),
    "h264_opengop.ts": dict(codec="libx264", frames=48, size=(64, 48), gop=12, bframes=3,
                            options={"x264-params": "open-gop=1"}, container="mpegts"),
    "h264_raw.h264": dict(codec="libx264", frames=24, size=(64, 48), gop=8, bframes=0,
                          container="h264"),
    "h264_vfr.mkv": dict(codec="libx264", frames=36, size=(64, 48), gop=10, bframes=2,
                         pts=vfr_pts(36, 2), time_base=MS),
    "h264_vfr.mp4": dict(codec="libx264", frames=36, size=(64, 48), gop=10, bframes=0,
                         pts=vfr_pts(36, 3), time_base=MS),
    "h264_rotated.mov": dict(codec="libx264", frames=20, size=(64, 48), gop=10,
                             metadata={"rotate": "90"}),
    "hevc.mp4": dict(codec="libx265", frames=36, size=(64, 48), gop=12, bframes=2),
    "hevc_10bit.mkv": dict(codec="libx265", frames=24, size=(64, 48), gop=8,
                           pix_fmt="yuv420p10le"),
    "h264_10bit.mp4": dict(codec="libx264", frames=24, size=(64, 48), gop=8,
                           pix_fmt="yuv420p10le"),
    "av1.mkv": dict(codec="libsvtav1", frames=24, size=(64, 64), gop=8,
                    options={"svtav1-params": "log-level=1"}),
    "mpeg4.avi": dict(codec="mpeg4", frames=30, size=(64, 48), gop=10, container="avi"),
}


def main() -> None:
    for name, spec in VIDEOS.items():
        write_video(os.path.join(HERE, name), **spec)
    with open(os.path.join(HERE, "h264_bframes.mp4"), "rb") as f:
        mp4 = f.read()
    with open(os.path.join(HERE, "vp9_cfr.webm"), "rb") as f:
        webm = f.read()
    damaged = {
        "truncated.mp4": mp4[:len(mp4) // 2],  # the index (moov) is at the end: unopenable
        "truncated.webm": webm[:len(webm) * 2 // 3],  # the last frames are missing
        "empty.mp4": b"",
        "random.mkv": np.random.default_rng(7).integers(0, 256, 4096, np.uint8).tobytes(),
    }
    for name, data in damaged.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    total = sum(os.path.getsize(os.path.join(HERE, n)) for n in os.listdir(HERE))
    print(f"wrote {len(VIDEOS) + len(damaged)} files, {total} bytes in all")


if __name__ == "__main__":
    main()
