"""Video decoding for ``device="gpu"``/``"mixed"``: NVDEC through PyAV, RGB made on the GPU.

A batch of clip requests (a source, its index, the frame numbers) is decoded by a
*backend* chosen at run time:

* ``nvdec``: PyAV's CUDA hardware decoding (``HWAccel("cuda")``), frames left on the GPU
  as NV12 planes and handed to torch through DLPack, converted to RGB on the GPU by
  ``nv12_to_rgb``. Several decoders run at once, each on its own thread (an H100 has 7
  NVDEC engines; one session per engine is what pays), and each thread keeps its
  decoders open (setting one up costs more than decoding a short clip).
* ``cpu``: the CPU decoder (``kernels/cpu/video/decode.py``) on the pipeline's threads,
  then one upload: for codecs NVDEC lacks (MJPEG; AV1 before Ampere) and where there is
  no GPU (CI runs the GPU pipeline on torch CPU tensors).
* ``fake``: the CPU decoder producing NV12 planes as NVDEC would, then the same torch
  conversion and bookkeeping as ``nvdec`` (``STOKER_NVDEC=fake``), so CI exercises
  everything but the hardware.

``STOKER_NVDEC=off`` forces ``cpu``. What has not run on a GPU yet: the ``nvdec`` backend
itself (hwaccel frames to DLPack, several sessions at once).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker.readers.video_index import VideoIndex

# Codecs NVDEC decodes (Turing and later; AV1 needs Ampere or Ada, not Hopper's GH100).
NVDEC_CODECS = {"h264", "hevc", "vp8", "vp9", "mpeg4", "mpeg2video", "mpeg1video", "vc1"}
# Decoding sessions at once: an H100 has 7 NVDEC engines.
SESSIONS = int(os.environ.get("STOKER_NVDEC_SESSIONS", "7"))


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
        clips = cpu_map(lambda k: _cpu_clip(requests[cpu_rows[k]]), len(cpu_rows))
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


def _nv12_clips(requests: list[ClipRequest], kind: str, device: Any, cpu_map: Any) -> list:
    """NVDEC sessions run on their own threads (they wait on the hardware, not a core);
    the fake backend decodes on the pipeline's threads."""
    if kind == "nvdec":
        return list(_sessions().map(lambda r: _nv12_clip(r, kind, device), requests))
    return cpu_map(lambda k: _nv12_clip(requests[k], kind, device), len(requests))


def _cpu_clip(r: ClipRequest) -> np.ndarray:
    from stoker.kernels.cpu.video.decode import Decoder, decode_into

    out = np.empty((len(r.frames), r.index.height, r.index.width, 3), np.uint8)
    dec = Decoder(r.source, r.index)
    try:
        decode_into(dec, r.frames, r.fill, r.ycbcr, out)
    finally:
        dec.close()
    return out


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

    from stoker.kernels.cpu.video.decode import Decoder

    h, w = r.index.height, r.index.width
    n = len(r.frames)
    y = torch.zeros((n, h, w), dtype=torch.uint8, device=device)
    uv = torch.zeros((n, (h + 1) // 2, (w + 1) // 2, 2), dtype=torch.uint8, device=device)
    full = r.index.pix_fmt.startswith("yuvj")
    dec = Decoder(r.source, r.index, hwaccel=(kind == "nvdec"))
    try:
        for row, frame in dec.frames_of(r.frames):
            fy, fuv = _planes(frame, kind, h, w)
            y[row] = fy.to(device, non_blocking=True) if fy.device != device else fy
            uv[row] = fuv.to(device, non_blocking=True) if fuv.device != device else fuv
    finally:
        dec.close()
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
