"""Video decoding for ``device="gpu"``/``"mixed"``: NVDEC through PyAV, RGB made on the GPU.

A batch of clip requests (a source, its index, the frame numbers) is decoded by a
*backend* chosen at run time:

* ``nvdec``: PyAV's CUDA hardware decoding (``HWAccel("cuda")``), frames left on the GPU
  as NV12 planes and handed to torch through DLPack, converted to RGB on the GPU by
  ``nv12_to_rgb``. Several decoders run at once, each on its own thread (an H100 has 7
  NVDEC engines; one session per engine is what pays). The clips of one file go to one
  session in frame order, and decoders stay open between batches (``_OpenDecoders``):
  setting one up costs more than decoding a short clip.
* ``cpu``: the CPU decoder (``kernels/cpu/video/decode.py``) on the pipeline's threads,
  then one upload: for codecs NVDEC lacks (MJPEG; AV1 before Ampere) and where there is
  no GPU (CI runs the GPU pipeline on torch CPU tensors).
* ``fake``: the CPU decoder producing NV12 planes as NVDEC would, then the same torch
  conversion and bookkeeping as ``nvdec`` (``STOKER_NVDEC=fake``), so CI exercises
  everything but the hardware.

``STOKER_NVDEC=off`` forces ``cpu``. What has not run on a GPU yet: the ``nvdec`` backend
itself (hwaccel frames to DLPack, several sessions at once, the stream ordering of
``_nv12_clip``).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker.readers.video_index import VideoIndex

# Codecs NVDEC decodes (Turing and later; AV1 needs Ampere or Ada, not Hopper's GH100).
NVDEC_CODECS = {"h264", "hevc", "vp8", "vp9", "mpeg4", "mpeg2video", "mpeg1video", "vc1"}
# Decoding sessions at once: an H100 has 7 NVDEC engines.
SESSIONS = int(os.environ.get("STOKER_NVDEC_SESSIONS", "7"))
# Decoders of files on disk kept open between clips, NVDEC's and the CPU fallback's each
# (an NVDEC decoder holds its surfaces in GPU memory: about 60 MB at 1080p).
KEPT_OPEN = 2 * SESSIONS


@dataclass
class ClipRequest:
    source: Any  # a path, or a file-like object of the encoded bytes
    index: VideoIndex
    frames: np.ndarray  # frame numbers, -1 for constant padding
    fill: np.ndarray | None = None
    ycbcr: bool = False


def backend_for(device: Any, codec: str) -> str:
    choice = os.environ.get("STOKER_NVDEC", "").lower()
    if choice in ("off", "cpu", "0"):
        return "cpu"
    if choice == "fake":
        return "fake"
    if getattr(device, "type", "cpu") != "cuda" or codec not in NVDEC_CODECS:
        return "cpu"
    return "nvdec" if hwaccel_available() else "cpu"


_hw: bool | None = None


def hwaccel_available() -> bool:
    global _hw
    if _hw is None:
        try:
            from av.codec.hwaccel import hwdevices_available

            _hw = "cuda" in hwdevices_available()
        except Exception:
            _hw = False
    return _hw


def decode_clips(requests: list[ClipRequest], device: Any, cpu_map: Any) -> list:
    """One (F, H, W, 3) uint8 tensor on ``device`` per request. ``cpu_map(fn, n)`` runs
    CPU work on the pipeline's threads."""
    import torch

    from stoker.kernels.gpu.common import upload_batch as upload

    out: list[Any] = [None] * len(requests)
    by_backend: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        by_backend.setdefault(backend_for(device, r.index.codec), []).append(i)
    cpu_rows = by_backend.get("cpu", [])
    if cpu_rows:
        clips: list[Any] = [None] * len(cpu_rows)
        runs = _runs([requests[i] for i in cpu_rows])

        def cpu_run(k: int) -> None:
            for j in runs[k]:
                clips[j] = _cpu_clip(requests[cpu_rows[j]])

        cpu_map(cpu_run, len(runs))
        for i, t in zip(cpu_rows, upload(clips, device), strict=True):
            out[i] = t
    for kind in ("nvdec", "fake"):
        rows = by_backend.get(kind, [])
        if not rows:
            continue
        planes = _nv12_clips([requests[i] for i in rows], kind, device, cpu_map)
        for i, (y, uv, full_range) in zip(rows, planes, strict=True):
            r = requests[i]
            rgb = nv12_to_rgb(y, uv, full_range)
            pad = torch.as_tensor(r.frames < 0)
            if bool(pad.any()):
                fill = torch.as_tensor(0 if r.fill is None else r.fill, dtype=torch.uint8)
                rgb[pad.to(rgb.device)] = fill.to(rgb.device)
            out[i] = rgb
    return out


def _runs(requests: list[ClipRequest]) -> list[list[int]]:
    """The requests' positions as runs (the video reader's ``plan_runs``): a file's clips
    in the order of their first frames, decoded one after another by one decoder (the
    next often needs no seek); sources that are not paths (bytes in memory) one clip a
    run. Longest runs first."""
    from stoker.operators.video.reader_source import plan_runs

    # (a source that is not a path gets a key of its own: no path holds a NUL)
    keys = [r.source if isinstance(r.source, str) else f"\0{i}"
            for i, r in enumerate(requests)]
    runs = plan_runs([(k, r.frames) for k, r in zip(keys, requests, strict=True)], 1)
    return sorted(runs, key=len, reverse=True)


def _nv12_clips(requests: list[ClipRequest], kind: str, device: Any, cpu_map: Any) -> list:
    """NVDEC sessions run on their own threads (they wait on the hardware, not a core);
    the fake backend decodes on the pipeline's threads."""
    out: list[Any] = [None] * len(requests)
    runs = _runs(requests)

    def run(k: int) -> None:
        for i in runs[k]:
            out[i] = _nv12_clip(requests[i], kind, device)

    if kind == "nvdec":
        list(_sessions().map(run, range(len(runs))))
    else:
        cpu_map(run, len(runs))
    return out


def _cpu_clip(r: ClipRequest) -> np.ndarray:
    from stoker.kernels.cpu.video.decode import decode_into

    out = np.empty((len(r.frames), r.index.height, r.index.width, 3), np.uint8)
    with OPEN.decoder(r, hwaccel=False) as dec:
        decode_into(dec, r.frames, r.fill, r.ycbcr, out)
    return out


class _OpenDecoders:
    """Decoders of files on disk kept open between clips and batches, shared by the
    threads: a clip takes an idle decoder of its file (or opens one) and gives it back
    when it has its frames; at most ``most`` idle ones are kept, the least recently used
    closed first. A decoder whose clip failed is closed, not given back. Sources that are
    not paths (a ``decoders.video`` sample's bytes) get a decoder of their own."""

    def __init__(self, most: int):
        self.most = most
        self.lock = threading.Lock()
        self.idle: OrderedDict[tuple, list[Any]] = OrderedDict()
        self.opened = 0  # decoders opened, for tests

    @contextmanager
    def decoder(self, r: ClipRequest, hwaccel: bool) -> Iterator[Any]:
        """A decoder of ``r``'s source for the ``with`` block: given back after it, closed
        if the block raised."""
        dec, key = self.take(r, hwaccel)
        try:
            yield dec
        except BaseException:
            dec.close()
            raise
        self.give(dec, key)

    def take(self, r: ClipRequest, hwaccel: bool) -> tuple[Any, tuple | None]:
        from stoker.kernels.cpu.video.decode import Decoder

        key = (r.source, id(r.index), hwaccel) if isinstance(r.source, str) else None
        if key is not None:
            with self.lock:
                idle = self.idle.get(key)
                if idle:
                    dec = idle.pop()
                    if not idle:
                        del self.idle[key]
                    return dec, key
        with self.lock:
            self.opened += 1
        return Decoder(r.source, r.index, hwaccel=hwaccel), key

    def give(self, dec: Any, key: tuple | None) -> None:
        closing = [dec]
        if key is not None:
            with self.lock:
                self.idle.setdefault(key, []).append(dec)
                self.idle.move_to_end(key)
                closing = []
                while sum(map(len, self.idle.values())) > self.most:
                    old_key, old = next(iter(self.idle.items()))
                    closing.append(old.pop(0))
                    if not old:
                        del self.idle[old_key]
        for d in closing:
            d.close()

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, OrderedDict()
        for decs in idle.values():
            for d in decs:
                d.close()


OPEN = _OpenDecoders(KEPT_OPEN)


# -- NV12 frames -------------------------------------------------------------------------------

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _sessions() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(SESSIONS, thread_name_prefix="stoker-nvdec")
        return _pool


def _nv12_clip(r: ClipRequest, kind: str, device: Any) -> tuple[Any, Any, bool]:
    """The clip's Y (F, H, W) and interleaved UV (F, H/2, W/2, 2) planes as uint8 tensors
    on ``device`` (padded rows zero), and whether the stream is full range."""
    import torch

    h, w = r.index.height, r.index.width
    n = len(r.frames)
    full = r.index.pix_fmt.startswith("yuvj")
    hw = kind == "nvdec"
    # NVDEC's frames come from FFmpeg's pool: each must stay alive until its copy has run.
    # FFmpeg writes them on its CUDA device's stream, the default stream where none is set
    # (assumed of PyAV's device; not yet checked on a GPU). So the clip is copied on the
    # default stream, and waited for, before its frames go back to the pool.
    stream = torch.cuda.stream(torch.cuda.default_stream(device)) if hw else nullcontext()
    with stream, OPEN.decoder(r, hwaccel=hw) as dec:
        y = torch.zeros((n, h, w), dtype=torch.uint8, device=device)
        uv = torch.zeros((n, (h + 1) // 2, (w + 1) // 2, 2), dtype=torch.uint8, device=device)
        frames = dec.frames_of(r.frames)
        for row, frame in frames:
            fy, fuv = _planes(frame, kind, h, w)
            y[row] = fy.to(device, non_blocking=True) if fy.device != device else fy
            uv[row] = fuv.to(device, non_blocking=True) if fuv.device != device else fuv
        if hw:
            torch.cuda.default_stream(device).synchronize()
        del frames
    return y, uv, full


def _planes(frame: Any, kind: str, h: int, w: int) -> tuple[Any, Any]:
    import torch

    if kind == "nvdec":  # CUDA frames: the planes are device memory (PyAV >= 17 DLPack)
        y = torch.from_dlpack(frame.planes[0])
        uv = torch.from_dlpack(frame.planes[1])
        return y[:h, :w], uv.view(uv.shape[0], -1, 2)[:(h + 1) // 2, :(w + 1) // 2]
    nv12 = frame.reformat(format="nv12", threads=1)
    p0, p1 = nv12.planes[0], nv12.planes[1]
    y = np.frombuffer(p0, np.uint8).reshape(-1, p0.line_size)[:h, :w]
    uv = np.frombuffer(p1, np.uint8).reshape(-1, p1.line_size)[:(h + 1) // 2, :2 * ((w + 1) // 2)]
    return torch.from_numpy(y.copy()), torch.from_numpy(uv.reshape(uv.shape[0], -1, 2).copy())


def nv12_to_rgb(y: Any, uv: Any, full_range: bool = False) -> Any:
    """(F, H, W) luma and (F, H/2, W/2, 2) chroma -> (F, H, W, 3) uint8 RGB with the BT.601
    matrix (limited range unless ``full_range``), chroma interpolated bilinearly at its
    sample positions (centred between luma pairs horizontally, MPEG-2 siting vertically),
    rounded and saturated. Within a few levels of the CPU decoder (swscale)."""
    import torch

    f, h, w = y.shape
    c = uv.permute(0, 3, 1, 2).float()  # F, 2, h2, w2
    # Upsample chroma to luma size: align_corners=False puts sample centres between
    # luma pixels, which is the horizontal siting of 4:2:0 in MPEG-4/H.264 "left" mode
    # approximated the way swscale's full-chroma interpolation does.
    c = torch.nn.functional.interpolate(c, size=(h, w), mode="bilinear", align_corners=False)
    yf = y.float()
    cb, cr = c[:, 0] - 128.0, c[:, 1] - 128.0
    if full_range:
        yv, kr, kgb, kgr, kb = yf, 1.402, 0.344136, 0.714136, 1.772
    else:
        yv = (yf - 16.0) * (255.0 / 219.0)
        s = 255.0 / 224.0
        kr, kgb, kgr, kb = 1.402 * s, 0.344136 * s, 0.714136 * s, 1.772 * s
    r = yv + kr * cr
    g = yv - kgb * cb - kgr * cr
    b = yv + kb * cb
    rgb = torch.stack([r, g, b], dim=-1)
    return rgb.round_().clamp_(0, 255).to(torch.uint8)
