"""Batched JPEG decoding on the GPU, for the device="mixed" decoders.

Two libraries can do it: nvImageCodec (``nvidia.nvimgcodec``, the one DALI uses: nvJPEG,
the A100/H100 hardware JPEG decoder with ``load_hint`` = DALI's ``hw_decoder_load``, and
region-of-interest decoding) and torchvision (``torchvision.io.decode_jpeg`` with
``device="cuda"``: batched nvJPEG, whole images, cropped afterwards). Which one a process
uses is chosen once, by timing both on the first batch that needs one, unless
``STOKER_MIXED_DECODER`` names it (``nvimgcodec``, ``torchvision`` or ``cpu``; ``cpu``
decodes with the CPU kernels and uploads). A kernel here knows nothing of graphs: it
takes encoded buffers and windows and returns HWC uint8 tensors on the device.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from time import perf_counter
from typing import Any

import numpy as np

BACKENDS = ("nvimgcodec", "torchvision", "cpu")
_ENV = "STOKER_MIXED_DECODER"

_choice: dict[Any, str] = {}  # device -> backend chosen for this process
_choice_lock = threading.Lock()
_local = threading.local()  # per thread (one GPU thread per pipeline): library decoders


@functools.cache
def installed() -> tuple[str, ...]:
    """The GPU JPEG libraries importable here, in order of preference (looked up once:
    ``backend_for`` asks at every batch)."""
    found = []
    if importlib.util.find_spec("nvidia") is not None and \
            importlib.util.find_spec("nvidia.nvimgcodec") is not None:
        found.append("nvimgcodec")
    if importlib.util.find_spec("torchvision") is not None:
        found.append("torchvision")
    return tuple(found)


def requested() -> str | None:
    """The backend named by STOKER_MIXED_DECODER, if any (checked)."""
    name = os.environ.get(_ENV, "").strip().lower()
    if not name:
        return None
    if name not in BACKENDS:
        raise ValueError(f"{_ENV}={name!r}: must be one of {', '.join(BACKENDS)}")
    return name


def backend_for(device: Any) -> str | None:
    """The backend to use on ``device``: "cpu" on CPU tensors or when asked, the measured
    choice once made, or None when the first batch must measure it (``choose``)."""
    if getattr(device, "type", "cpu") != "cuda":
        return "cpu"
    name = requested()
    if name is not None:
        if name != "cpu" and name not in installed():
            raise RuntimeError(f"{_ENV}={name} but that library is not installed")
        return name
    candidates = installed()
    if not candidates:
        return "cpu"
    if len(candidates) == 1:
        return candidates[0]
    return _choice.get(str(device))


def choose(device: Any, datas: list[np.ndarray], windows: list, gray: bool, options: dict
           ) -> tuple[str, list]:
    """Times every installed library on this batch (second run of each, after a warm-up),
    keeps the faster one for the process and returns (its name, its decoded batch)."""
    timings: dict[str, float] = {}
    outputs: dict[str, list] = {}
    import torch

    for name in installed():
        try:
            for _ in range(2):
                torch.cuda.current_stream(device).synchronize()
                start = perf_counter()
                out = decode(name, device, datas, windows, gray, options)
                torch.cuda.current_stream(device).synchronize()
                timings[name] = perf_counter() - start
            outputs[name] = out
        except Exception:  # a library that fails here is not chosen
            continue
    if not timings:
        with _choice_lock:
            _choice[str(device)] = "cpu"
        return "cpu", []
    best = min(timings, key=timings.get)
    with _choice_lock:
        _choice[str(device)] = best
    return best, outputs[best]


def decode(name: str, device: Any, datas: list[np.ndarray], windows: list, gray: bool,
           options: dict) -> list:
    """HWC uint8 tensors on ``device``: each JPEG in ``datas`` decoded (RGB, or its luma
    plane when ``gray``), cut to its window (y, x, h, w) or whole when the window is None.
    An entry is None where the library could not decode that image."""
    if name == "nvimgcodec":
        return _nvimgcodec(device, datas, windows, gray, options)
    if name == "torchvision":
        return _torchvision(device, datas, windows, gray)
    raise ValueError(f"no GPU JPEG backend {name!r}")


# -- nvImageCodec ---------------------------------------------------------------------------

def _nvimgcodec_decoder(device: Any, options: dict) -> Any:
    from nvidia import nvimgcodec

    key = (str(device), round(float(options.get("hw_decoder_load", 0.65)), 4),
           bool(options.get("fancy_upsampling", False)))
    cache = getattr(_local, "nvimgcodec", None)
    if cache is None:
        cache = _local.nvimgcodec = {}
    if key not in cache:
        kinds = nvimgcodec.BackendKind
        backends = [nvimgcodec.Backend(kinds.HW_GPU_ONLY, load_hint=key[1]),
                    nvimgcodec.Backend(kinds.HYBRID_CPU_GPU),
                    nvimgcodec.Backend(kinds.GPU_ONLY)]
        cache[key] = nvimgcodec.Decoder(device_id=device.index or 0, backends=backends,
                                        options=f":fancy_upsampling={int(key[2])}")
    return cache[key]


def _nvimgcodec(device: Any, datas: list[np.ndarray], windows: list, gray: bool,
                options: dict) -> list:
    import torch
    from nvidia import nvimgcodec

    decoder = _nvimgcodec_decoder(device, options)
    sources = []
    for data, win in zip(datas, windows, strict=True):
        stream = nvimgcodec.CodeStream(np.ascontiguousarray(data))
        if win is None:
            sources.append(stream)
            continue
        y, x, h, w = win
        region = nvimgcodec.Region(int(y), int(x), int(y + h), int(x + w))
        if hasattr(stream, "get_sub_code_stream"):  # nvImageCodec 0.5 and later
            sources.append(stream.get_sub_code_stream(region=region))
        else:
            sources.append(nvimgcodec.DecodeSource(stream, region))
    spec = nvimgcodec.ColorSpec
    rgb = getattr(spec, "SRGB", None) or spec.RGB  # named RGB in releases before 0.5
    params = nvimgcodec.DecodeParams(color_spec=spec.GRAY if gray else rgb,
                                     allow_any_depth=False, apply_exif_orientation=False)
    cuda_stream = torch.cuda.current_stream(device).cuda_stream
    images = decoder.decode(sources, params=params, cuda_stream=cuda_stream)
    if len(images) != len(sources):  # older releases drop failed images from the list
        return [None] * len(sources)
    out = []
    for img in images:
        if img is None:
            out.append(None)
            continue
        t = torch.from_dlpack(img)
        if t.ndim == 2:
            t = t.unsqueeze(-1)
        elif t.ndim == 3 and t.shape[0] == 1 and t.shape[-1] != 1:  # planar luma
            t = t.permute(1, 2, 0)
        out.append(t)
    return out


# -- torchvision ----------------------------------------------------------------------------

def _torchvision(device: Any, datas: list[np.ndarray], windows: list, gray: bool) -> list:
    import torch
    from torchvision.io import ImageReadMode, decode_jpeg

    # Copies of the encoded bytes (small next to the pixels): torch wants writable memory.
    encoded = [torch.from_numpy(np.array(d, np.uint8).reshape(-1)) for d in datas]
    mode = ImageReadMode.GRAY if gray else ImageReadMode.RGB
    images = decode_jpeg(encoded, mode=mode, device=device)
    out = []
    for img, win in zip(images, windows, strict=True):
        if win is not None:
            y, x, h, w = win
            img = img[:, y:y + h, x:x + w]
        out.append(img.permute(1, 2, 0).contiguous())
    return out
