"""A video file's frame index: how many frames, when each is shown, where to seek for it.

A file is indexed once by reading its packets without decoding them (FFmpeg's demuxer
only; DALI does the same since 2025): every video packet's presentation timestamp (PTS)
and key flag. Sorted by PTS they give the frames in display order; frame ``k``'s *seek
frame* is the last key frame shown at or before it. Constant-frame-rate files keep only
(first PTS, step) and the key frames, so an index costs tens of bytes; variable frame
rate files keep every PTS. Files whose packets carry no timestamps (raw H.264/HEVC
streams) are indexed by counting packets and decoded from the start.

Indexes are cached in memory and on disk, keyed by (absolute path, size, mtime), so a
dataset is scanned once, not once per process and start as DALI does (``stoker
index-videos DIR`` builds them ahead). The folder is ``$STOKER_VIDEO_INDEX_DIR`` or
``~/.cache/stoker/video-index``; ``STOKER_VIDEO_INDEX_DIR=off`` keeps them in memory only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from stoker.errors import StokerError

INDEX_VERSION = 1


class VideoError(StokerError, ValueError, RuntimeError):
    """A video file that cannot be opened, indexed or decoded; the message names it."""


def import_av() -> Any:
    try:
        import av
    except ImportError:  # pragma: no cover - the video extra is missing
        raise ImportError("stoker's video operators need PyAV: pip install 'stoker[video]' "
                          "(or pip install av)") from None
    return av


@dataclass(frozen=True)
class VideoIndex:
    """Frames of one video stream in display order."""

    path: str
    n_frames: int
    time_base: Fraction
    keyframes: np.ndarray  # int64 frame numbers (display order) that decoding may start at
    codec: str
    width: int
    height: int
    pix_fmt: str
    rate: Fraction  # average frame rate from the container (0 when unknown)
    # Timestamps: either every PTS (variable rate) or a first PTS and a step.
    pts_table: np.ndarray | None = None
    pts0: int = 0
    step: int = 0
    has_pts: bool = True  # False: no timestamps (raw streams): decode from the start
    _seek: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def vfr(self) -> bool:
        return self.pts_table is not None

    @property
    def pts(self) -> np.ndarray:
        """Every frame's PTS (int64, display order)."""
        if self.pts_table is not None:
            return self.pts_table
        return self.pts0 + self.step * np.arange(self.n_frames, dtype=np.int64)

    def frame_pts(self, k: int) -> int:
        return int(self.pts_table[k]) if self.pts_table is not None else self.pts0 + self.step * k

    def frame_of_pts(self, pts: int) -> int:
        """The frame shown at ``pts`` (the last frame whose PTS is <= pts; -1 before the
        first)."""
        if self.pts_table is not None:
            return int(np.searchsorted(self.pts_table, pts, side="right")) - 1
        if self.step <= 0:
            return 0 if pts >= self.pts0 else -1
        return min(self.n_frames - 1, (pts - self.pts0) // self.step) if pts >= self.pts0 \
            else -1

    def seek_frame(self, k: int) -> int:
        """The key frame to start decoding at for frame ``k``."""
        i = int(np.searchsorted(self.keyframes, k, side="right")) - 1
        return int(self.keyframes[max(i, 0)])

    def previous_keyframe(self, key: int) -> int | None:
        i = int(np.searchsorted(self.keyframes, key, side="left")) - 1
        return int(self.keyframes[i]) if i >= 0 else None

    def timestamps(self, frames: np.ndarray) -> np.ndarray:
        """Seconds from the first frame, float64, for frame numbers (-1 stays -1)."""
        frames = np.asarray(frames, np.int64)
        tb = float(self.time_base)
        if not self.has_pts:
            per = 1.0 / float(self.rate) if self.rate else 0.0
            out = frames * per
        else:
            pts = self.pts
            out = (pts[np.clip(frames, 0, self.n_frames - 1)] - pts[0]) * tb
        return np.where(frames < 0, -1.0, out)

    # -- storage ---------------------------------------------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        meta = {"version": INDEX_VERSION, "n": self.n_frames, "tb": [self.time_base.numerator,
                self.time_base.denominator], "codec": self.codec, "w": self.width,
                "h": self.height, "pix_fmt": self.pix_fmt, "rate": [self.rate.numerator,
                self.rate.denominator], "pts0": self.pts0, "step": self.step,
                "has_pts": self.has_pts}
        out = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
               "keyframes": self.keyframes}
        if self.pts_table is not None:
            out["pts"] = self.pts_table
        return out

    @classmethod
    def from_arrays(cls, path: str, arrays: Any) -> VideoIndex:
        meta = json.loads(bytes(arrays["meta"]).decode())
        if meta.get("version") != INDEX_VERSION:
            raise ValueError("old index version")
        return cls(path=path, n_frames=int(meta["n"]), time_base=Fraction(*meta["tb"]),
                   keyframes=np.asarray(arrays["keyframes"], np.int64), codec=meta["codec"],
                   width=int(meta["w"]), height=int(meta["h"]), pix_fmt=meta["pix_fmt"],
                   rate=Fraction(*meta["rate"]),
                   pts_table=np.asarray(arrays["pts"], np.int64) if "pts" in arrays else None,
                   pts0=int(meta["pts0"]), step=int(meta["step"]),
                   has_pts=bool(meta["has_pts"]))


def open_container(av: Any, source: Any, path: str) -> Any:
    """``av.open`` whose failures name the file."""
    try:
        return av.open(source, "r")
    except Exception as e:
        raise VideoError(f"cannot open video {path!r}: {_reason(e)}") from None


def _reason(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    # PyAV's messages end with the file name, which ours begin with.
    text = re.sub(r"^\[Errno -?\d+\] ", "", text)
    return re.sub(r": '[^']*'$", "", text)


def video_stream(container: Any, path: str) -> Any:
    streams = container.streams.video
    if not streams:
        raise VideoError(f"video {path!r} has no video stream")
    return streams[0]


def scan(source: Any, path: str) -> VideoIndex:
    """Indexes a file (a path or a file-like object) by reading its packets."""
    av = import_av()
    with open_container(av, source, path) as container:
        stream = video_stream(container, path)
        ctx = stream.codec_context
        pts_list: list[int] = []
        keys: list[bool] = []
        timed = True
        try:
            for packet in container.demux(stream):
                if packet.size == 0:
                    continue
                ts = packet.pts if packet.pts is not None else packet.dts
                if ts is None:
                    timed = False
                    ts = len(pts_list)
                elif ts < 0:  # DALI skips these too (edit-list pre-roll)
                    continue
                pts_list.append(int(ts))
                keys.append(bool(packet.is_keyframe))
        except Exception as e:
            if not pts_list:
                raise VideoError(f"cannot read video {path!r}: {_reason(e)}") from None
            # A truncated file: the frames before the damage are still usable.
        if not pts_list:
            raise VideoError(f"video {path!r} has no frames")
        rate = stream.average_rate or stream.guessed_rate or Fraction(0)
        info = dict(path=path, n_frames=len(pts_list), time_base=stream.time_base or
                    Fraction(1, 1), codec=ctx.name, width=ctx.width, height=ctx.height,
                    pix_fmt=ctx.pix_fmt or "", rate=Fraction(rate))
    pts = np.asarray(pts_list, np.int64)
    key = np.asarray(keys, bool)
    if not timed:
        return VideoIndex(**info, keyframes=np.zeros(1, np.int64), has_pts=False)
    order = np.argsort(pts, kind="stable")
    pts, key = pts[order], key[order]
    keyframes = np.flatnonzero(key).astype(np.int64)
    if len(keyframes) == 0 or keyframes[0] != 0:
        keyframes = np.concatenate([[0], keyframes]).astype(np.int64)
    steps = np.diff(pts)
    if len(pts) == 1 or (steps[0] > 0 and np.all(steps == steps[0])):
        step = int(steps[0]) if len(pts) > 1 else 0
        return VideoIndex(**info, keyframes=keyframes, pts0=int(pts[0]), step=step)
    return VideoIndex(**info, keyframes=keyframes, pts_table=pts)


# -- caches ------------------------------------------------------------------------------------

_memory: dict[tuple, VideoIndex] = {}
_lock = threading.Lock()


def cache_dir() -> str | None:
    where = os.environ.get("STOKER_VIDEO_INDEX_DIR")
    if where is not None and where.lower() in ("off", "0", "none", ""):
        return None
    return where or os.path.join(os.path.expanduser("~"), ".cache", "stoker", "video-index")


def _key(path: str) -> tuple[str, int, int]:
    try:
        st = os.stat(path)
    except OSError as e:
        raise VideoError(f"cannot open video {path!r}: {e.strerror}") from None
    return os.path.abspath(path), st.st_size, st.st_mtime_ns


def _disk_path(key: tuple) -> str | None:
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha1("\0".join(map(str, key)).encode()).hexdigest()
    return os.path.join(folder, digest[:2], digest + ".npz")


def cached_on_disk(path: str) -> bool:
    """Whether ``path`` (as it is now: size and mtime) has an index in the disk cache."""
    try:
        disk = _disk_path(_key(path))
    except VideoError:
        return False
    return disk is not None and os.path.exists(disk)


def index_file(path: str) -> VideoIndex:
    """The index of ``path``, from the memory cache, the disk cache, or a scan."""
    key = _key(path)
    found = _memory.get(key)
    if found is not None:
        return found
    disk = _disk_path(key)
    index = None
    if disk is not None and os.path.exists(disk):
        try:
            with np.load(disk) as arrays:
                index = VideoIndex.from_arrays(path, arrays)
        except Exception:
            index = None  # unreadable or old: scan again
    if index is None:
        index = scan(path, path)
        if disk is not None:
            _save(disk, index)
    with _lock:
        _memory[key] = index
    return index


def _save(disk: str, index: VideoIndex) -> None:
    try:
        os.makedirs(os.path.dirname(disk), exist_ok=True)
        tmp = f"{disk}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            np.savez(f, **index.to_arrays())
        os.replace(tmp, disk)
    except OSError:
        pass  # a read-only home: the memory cache still holds it


def clear_memory_cache() -> None:
    with _lock:
        _memory.clear()
