"""Decoding chosen frames of a video on the CPU with PyAV (FFmpeg), frame-accurately.

``Decoder`` holds one open file and knows which frame it will output next. Asked for a
sorted set of frames, it goes forward when the next wanted frame is close ahead in the
stream, and otherwise seeks to the wanted frame's key frame (from the file's index) and
decodes forward from there, converting only the frames that are wanted. A frame is
identified by its timestamp, so B-frames, open GOPs and variable frame rates need no
special case; when a seek lands past the frame (a key flag FFmpeg set on a frame decoding
cannot start at), the decoder backs off to the key frame before and tries again.

FFmpeg releases the GIL while it demuxes, decodes and converts colours, so the pipeline's
threads decode different windows at once. Each thread keeps a few decoders open
(``thread_decoders``): consecutive windows of one file, which the reader hands to one
thread in order, then cost no reopening and often no seek.

Colour: RGB or YCbCr (4:4:4) as DALI's CPU decoder makes them: swscale with bilinear
chroma interpolation, full horizontal chroma, accurate rounding and the BT.601 matrix
whatever the stream's tag, the range from the pixel format (bit-exact with DALI 2.4 on
the VP9 and MJPEG test files). RGB from 8-bit 4:2:0 comes from a compiled loop that does
swscale's arithmetic 2.5-3.3x faster, straight into the batch (``yuv_loop.py``,
``Decoder._converted``); the same bytes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.video.nal import is_non_reference, packet_layout
from stoker.readers.video_index import VideoError, VideoIndex, import_av, open_container

# Go forward instead of seeking when the next wanted frame is at most this many frames
# ahead (DALI's MINIMUM_SEEK_LEAP), or in the GOP being decoded.
SEEK_LEAP = 10
# Decoders each thread keeps open.
OPEN_PER_THREAD = 4
# Key frames to go back by when a seek lands past the wanted frame, before giving up.
MAX_BACKOFFS = 8
# Chroma sitings the compiled RGB loop knows, as (horizontal, vertical) offsets in
# quarters of a chroma sample: centred between luma samples (-1, swscale's default, VP8/9)
# or on the even ones (0: H.264's "left" is (0, -1)).
SITINGS = ((-1, -1), (0, -1), (-1, 0), (0, 0))
# Frames of a file compared with swscale before it is left to swscale.
SITING_PROBES = 30
# path -> the siting that gives swscale's bytes for that file (None: none does). Decoders
# of in-memory videos (decoders.video, inputs.video) settle their own.
_sitings: dict[str, tuple[int, int] | None] = {}


class Stats:
    """Frames decoded and delivered, for the decode amplification ``stoker profile``
    reports (frames decoded per frame delivered: DALI warns past 3)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.decoded = 0
        self.delivered = 0
        self.seeks = 0

    def add(self, decoded: int, delivered: int, seeks: int) -> None:
        with self.lock:
            self.decoded += decoded
            self.delivered += delivered
            self.seeks += seeks

    @property
    def amplification(self) -> float:
        return self.decoded / self.delivered if self.delivered else 0.0

    def reset(self) -> None:
        with self.lock:
            self.decoded = self.delivered = self.seeks = 0


STATS = Stats()


def _conversion(av: Any) -> dict:
    from av.video.reformatter import Colorspace, Interpolation

    flags = Interpolation.BILINEAR | Interpolation.FULL_CHR_H_INT | Interpolation.ACCURATE_RND
    return {"interpolation": flags, "src_colorspace": Colorspace.ITU601, "threads": 1}


class Decoder:
    """One open video; ``read(frames, out)`` fills ``out[i]`` with frame ``frames[i]``."""

    def __init__(self, source: Any, index: VideoIndex, threads: int = 1,
                 hwaccel: bool = False):
        self.av = import_av()
        # NVDEC (kernels/gpu/video/nvdec.py): frames stay in GPU memory.
        self.hwaccel = hwaccel
        self.index = index
        self.path = index.path
        self.source = source
        self.restarted = False
        self.container = self._open()
        try:
            from stoker.readers.video_index import video_stream

            self.stream = video_stream(self.container, self.path)
            ctx = self.stream.codec_context
            ctx.thread_count = max(1, int(threads))
            if threads > 1:
                ctx.thread_type = "AUTO"
        except Exception:
            self.container.close()
            raise
        self.convert = _conversion(self.av)
        # H.264 and HEVC packets of frames nobody refers to and this read does not want
        # are not decoded (nal.py); None: every packet is.
        self.layout = packet_layout(self.stream) if index.has_pts and not hwaccel else None
        self.skip_below = -1  # frames before this one that are not in `wanted` may be left
        self.wanted: set[int] = set()
        self.skipped = 0
        self.next = 0  # the frame the decoder outputs next (None: unknown)
        self.floor = 0  # frames before this (since the last seek) may be broken
        self._frames = self._decode()
        self.decoded = 0
        self.seeks = 0
        # The chroma siting that gives swscale's bytes (_converted): () not settled yet,
        # None none does; shared between the decoders of a file on disk, by its path.
        self.siting: tuple = ()
        self.shared = isinstance(source, str)
        self.probes = 0  # frames compared with swscale

    def _open(self) -> Any:
        if not self.hwaccel:
            return open_container(self.av, self.source, self.path)
        from av.codec.hwaccel import HWAccel

        accel = HWAccel(device_type="cuda", allow_software_fallback=False, is_hw_owned=True)
        try:
            return self.av.open(self.source, "r", hwaccel=accel)
        except Exception as e:
            raise VideoError(f"cannot open video {self.path!r} for NVDEC: {e}") from None

    def close(self) -> None:
        self._frames = None
        self.container.close()

    # -- decoding --------------------------------------------------------------------------
    def _decode(self) -> Any:
        """(frame number, frame) in display order from the current position."""
        counted = 0
        for packet in self.container.demux(self.stream):
            if self.layout is not None and packet.pts is not None and packet.size:
                k = self.index.frame_of_pts(int(packet.pts))
                if k < self.skip_below and k not in self.wanted and \
                        is_non_reference(bytes(packet), self.layout):
                    self.skipped += 1
                    continue
            for frame in packet.decode():  # (the last, empty packet flushes the decoder)
                self.decoded += 1
                if not self.index.has_pts:
                    k = counted
                    counted += 1
                else:
                    ts = frame.pts if frame.pts is not None else frame.dts
                    k = self.index.frame_of_pts(int(ts)) if ts is not None else -1
                yield k, frame

    def _seek(self, key: int) -> None:
        self.seeks += 1
        if not self.index.has_pts or key == 0:
            self._restart()
            return
        try:
            self.container.seek(self.index.frame_pts(key), stream=self.stream, backward=True)
        except Exception:  # a container that cannot seek (raw streams): from the start
            self._restart()
            return
        self._frames = self._decode()
        self.next = None
        self.floor = key

    def _restart(self) -> None:
        """Decoding from the file's first frame: a fresh demuxer (seeking to 0 is not
        reliable in every container, and raw streams cannot seek at all)."""
        self.container.close()
        if hasattr(self.source, "seek"):
            self.source.seek(0)
        self.container = self._open()
        from stoker.readers.video_index import video_stream

        stream = video_stream(self.container, self.path)
        stream.codec_context.thread_count = self.stream.codec_context.thread_count
        self.stream = stream
        self._frames = self._decode()
        self.next = None
        self.floor = 0
        self.restarted = True

    def read(self, frames: np.ndarray, out: np.ndarray, fmt: str = "rgb24") -> None:
        """Decodes ``frames`` (frame numbers, -1 to leave a row alone) into ``out``
        (F, H, W, 3) uint8."""
        self._walk(frames, lambda frame, rows: self._store(frame, rows, out, fmt))

    def frames_of(self, frames: np.ndarray) -> list[tuple[int, Any]]:
        """(row, decoded frame) for each row of ``frames`` that is not -1 (for NV12
        consumers: the frames are not converted)."""
        got: list[tuple[int, Any]] = []
        self._walk(frames, lambda frame, rows: got.extend((r, frame) for r in rows))
        return got

    def _walk(self, frames: np.ndarray, sink: Any) -> None:
        try:
            self._walk_once(frames, sink)
        except VideoError:
            if self.layout is None or not self.skipped:
                raise
            # A stream the reference flags misdescribe: again, giving the decoder every
            # packet from here on.
            self.layout, self.next = None, None
            self._walk_once(frames, sink)
        finally:
            self.wanted, self.skip_below = set(), -1

    def _walk_once(self, frames: np.ndarray, sink: Any) -> None:
        frames = np.asarray(frames, np.int64)
        wanted = np.unique(frames[frames >= 0])
        if len(wanted) and wanted[-1] >= self.index.n_frames:
            raise VideoError(f"video {self.path!r}: frame {int(wanted[-1])} asked for, the "
                             f"file has {self.index.n_frames}")
        rows: dict[int, list[int]] = {}
        for row, k in enumerate(frames.tolist()):
            if k >= 0:
                rows.setdefault(k, []).append(row)
        # Unwanted non-reference frames are left out only below the last wanted frame: the
        # next read of this file may want the ones after it without seeking.
        self.wanted = set(rows)
        self.skip_below = int(wanted[-1]) if len(wanted) else -1
        for k in wanted.tolist():
            if k not in rows:
                continue  # stored on the way to an earlier frame
            self._goto(k)
            self._advance_to(k, rows, sink)
            if k in rows:
                raise VideoError(f"video {self.path!r}: the decoder gave no frame {k} "
                                 "(damaged stream?)")

    def _goto(self, k: int) -> None:
        nxt = self.next
        key = self.index.seek_frame(k)
        if nxt is not None and nxt <= k and (k - nxt <= SEEK_LEAP or key <= nxt):
            return
        self._seek(key)

    def _advance_to(self, k: int, rows: dict, sink: Any) -> None:
        self.restarted = False
        for _ in range(MAX_BACKOFFS):
            for idx, frame in self._frames:
                if idx < self.floor:
                    continue  # leading frames of an open GOP after a seek: not decodable
                if self.next is None and idx > k:
                    break  # the seek landed past the frame: back off below
                self.next = idx + 1
                if idx in rows:
                    sink(frame, rows.pop(idx))
                if idx >= k:
                    return
            else:
                if self.next is not None:
                    raise VideoError(f"video {self.path!r}: the stream ended before frame "
                                     f"{k} (truncated file?)")
            # Past the frame, or nothing decoded after the seek: start a key frame earlier,
            # and at last from the file's start.
            if self.restarted:
                break
            prev = self.index.previous_keyframe(self.floor)
            self._seek(prev if prev is not None else 0)
        raise VideoError(f"video {self.path!r}: cannot decode frame {k}")

    def _store(self, frame: Any, rows: list[int], out: np.ndarray, fmt: str) -> None:
        first = out[rows[0]]
        if not (fmt == "rgb24" and self._converted(frame, first)):
            first[...] = self._swscale(frame, fmt, *first.shape[:2])
        for row in rows[1:]:
            out[row] = first

    def _swscale(self, frame: Any, fmt: str, h: int, w: int) -> np.ndarray:
        rgb = frame.reformat(format=fmt, **self.convert)
        if fmt == "rgb24":
            plane = rgb.planes[0]
            pixels = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
            pixels = pixels[:h, :w * 3].reshape(h, w, 3)
        else:  # yuv444p planes -> HWC
            pixels = np.stack([np.frombuffer(p, np.uint8).reshape(-1, p.line_size)[:h, :w]
                               for p in rgb.planes[:3]], axis=-1)
        if pixels.shape[:2] != (h, w):
            raise VideoError(f"video {self.path!r}: a frame of {pixels.shape[1]}x"
                             f"{pixels.shape[0]} in a stream of {w}x{h} (resolution "
                             "changes are not supported)")
        return pixels

    def _converted(self, frame: Any, target: np.ndarray) -> bool:
        """Converts ``frame`` into ``target`` (H, W, 3) with the compiled loop where it
        gives swscale's bytes, 2.5-3.3x faster; False: swscale's turn.

        swscale places the chroma samples where the stream says they are (FFmpeg's
        chroma location, which PyAV does not show): the first frames of each file that
        tell the sitings apart go through swscale and every siting, and the one that
        matches swscale byte for byte serves the rest of the file (and the file's other
        decoders). No match, or no telling frame among the first ``SITING_PROBES``:
        swscale for the file."""
        h, w = target.shape[:2]
        if not (_fast_rgb(frame, w, h) and target.flags.c_contiguous):
            return False
        siting = self.siting
        if siting == () and self.shared:
            siting = self.siting = _sitings.get(self.path, ())
        if siting is None:
            return False
        to_rgb = loops("video.yuv_loop").to_rgb
        planes = [np.frombuffer(p, np.uint8).reshape(-1, p.line_size) for p in frame.planes]
        if siting:
            to_rgb(*planes, *siting, target)
            return True
        target[...] = want = self._swscale(frame, "rgb24", h, w)
        trial = np.empty_like(target)
        matches = []
        for candidate in SITINGS:
            to_rgb(*planes, *candidate, trial)
            if np.array_equal(trial, want):
                matches.append(candidate)
        self.probes += 1
        if len(matches) != 1 and self.probes < SITING_PROBES and matches:
            return True  # nothing told apart (flat chroma): the next frame
        self.siting = matches[0] if len(matches) == 1 else None
        if self.shared:
            _sitings[self.path] = self.siting
        return True


def _fast_rgb(frame: Any, width: int, height: int) -> bool:
    """Whether the compiled loop (``yuv_loop.to_rgb``) may convert ``frame`` into a
    stream of ``width`` x ``height``: 8-bit 4:2:0, not full range, and a size whose
    chroma is exactly half (swscale filters odd and tiny sizes otherwise)."""
    return (frame.format.name == "yuv420p" and frame.color_range != 2
            and frame.width == width and frame.height == height
            and width % 2 == 0 and height % 2 == 0 and min(width, height) >= 16)


def decode_into(decoder: Decoder, frames: np.ndarray, fill: np.ndarray | None, ycbcr: bool,
                out: np.ndarray) -> None:
    """Fills ``out`` (F, H, W, 3) with ``frames``; rows of -1 take ``fill`` (per channel,
    default 0). Counts the work in ``STATS``."""
    frames = np.asarray(frames, np.int64)
    pad = frames < 0
    if pad.any():
        out[pad] = 0 if fill is None else fill
    before, seeks = decoder.decoded, decoder.seeks
    decoder.read(frames, out, "yuv444p" if ycbcr else "rgb24")
    STATS.add(decoder.decoded - before, int((~pad).sum()), decoder.seeks - seeks)


# -- decoders kept open per thread --------------------------------------------------------------

_local = threading.local()


def thread_decoder(index: VideoIndex, threads: int = 1) -> Decoder:
    """This thread's open decoder of ``index``'s file (opened, or reused)."""
    cache: OrderedDict | None = getattr(_local, "decoders", None)
    if cache is None:
        cache = _local.decoders = OrderedDict()
    key = (index.path, id(index))
    dec = cache.get(key)
    if dec is not None:
        cache.move_to_end(key)
        return dec
    dec = Decoder(index.path, index, threads)
    cache[key] = dec
    while len(cache) > OPEN_PER_THREAD:
        _, old = cache.popitem(last=False)
        old.close()
    return dec


def drop_thread_decoder(index: VideoIndex) -> None:
    """Forgets this thread's decoder of ``index`` (after an error left it in doubt)."""
    cache = getattr(_local, "decoders", None)
    if cache:
        dec = cache.pop((index.path, id(index)), None)
        if dec is not None:
            dec.close()
