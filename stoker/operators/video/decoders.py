"""``fn.decoders.video`` (and DALI's deprecated ``fn.experimental.decoders.video``).

Each sample is a whole encoded video (uint8, 1-D); the output is its frames, uint8 FHWC,
all of them or a selection (DALI 2.4's rules, code over docs):

* ``frames=[...]``: those frames in that order (repeats allowed); alone.
* ``start_frame`` (0), ``stride`` (1), and either ``sequence_length`` or ``end_frame``:
  ``start, start + stride, ...``; the length is ``sequence_length`` (with ``pad_mode=
  "none"`` capped at the frames there are), ``ceil((end - start) / stride)``, or up to the
  last frame.
* Frames past the end take ``pad_mode``: ``"constant"`` (the default here, ``fill_value``),
  ``"edge"``, ``"reflect_1001"``, ``"reflect_101"``; ``"none"`` refuses them.

The CPU kernel indexes the bytes (a demux pass in memory) and decodes on the sample's
thread; ``device="mixed"`` decodes through ``kernels/gpu/video/nvdec.py``.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.readers.video_index import VideoError, scan
from stoker.readers.video_windows import PAD_MODES, pad_frames


def _given(args: dict, key: str) -> bool:
    value = args.get(key)
    return value is not None and not (isinstance(value, np.ndarray) and value.size == 0)


def _int(value: Any) -> int:
    return int(np.asarray(value).reshape(-1)[0])


def _pad_mode(value: Any) -> str:
    """pad_mode, a string, or per sample the string's bytes (uint8) as DALI passes it."""
    if value is None:
        return "constant"
    if isinstance(value, np.ndarray):
        if value.dtype != np.uint8:
            raise ValueError(f"argument 'pad_mode' takes a string (per sample: its bytes as "
                             f"uint8), not {value.dtype} data")
        value = value.tobytes().decode(errors="replace")
    if str(value) not in PAD_MODES:
        raise ValueError(f"argument 'pad_mode' must be one of {', '.join(PAD_MODES)}, "
                         f"got {value!r}")
    return PAD_MODES[str(value)]


def select_frames(n: int, args: dict) -> np.ndarray:
    """The frame numbers a sample's arguments select from a video of ``n`` frames."""
    mode = _pad_mode(args.get("pad_mode"))
    if _given(args, "frames"):
        frames = np.asarray(args["frames"], np.int64).reshape(-1)
        if (frames < 0).any():
            raise ValueError(f"argument 'frames' holds negative frame numbers: "
                             f"{frames.tolist()}")
        if mode == "none" and (frames >= n).any():
            raise ValueError(f"argument 'frames' asks for frame {int(frames.max())} of a "
                             f"video of {n} frames; change `pad_mode` to pad past the end")
        return pad_frames(frames, 0, n, mode)
    start = _int(args["start_frame"]) if _given(args, "start_frame") else 0
    stride = _int(args["stride"]) if _given(args, "stride") else 1
    if stride < 1:
        raise ValueError(f"argument 'stride' must be at least 1, got {stride}")
    if not 0 <= start < n:
        raise ValueError(f"argument 'start_frame' is {start}, but the video has {n} frames")
    if _given(args, "sequence_length"):
        length = _int(args["sequence_length"])
        if mode == "none":
            length = min(length, math.ceil((n - start) / stride))
    elif _given(args, "end_frame"):
        end = _int(args["end_frame"])
        if end <= start:
            raise ValueError(f"argument 'end_frame' ({end}) must be greater than "
                             f"start_frame ({start})")
        if mode == "none":
            end = min(end, n)
        length = math.ceil((end - start) / stride)
    else:
        length = math.ceil((n - start) / stride)
    frames = start + stride * np.arange(length, dtype=np.int64)
    return pad_frames(frames, 0, n, mode)


def _fill(args: dict) -> np.ndarray:
    fill = list(args.get("fill_value") or [0])
    return np.asarray(fill if len(fill) > 1 else fill * 3, np.int64).clip(0, 255) \
        .astype(np.uint8)


def _request(data: Any, args: dict, who: str) -> Any:
    from stoker.kernels.gpu.video.nvdec import ClipRequest

    data = np.asarray(data)
    if data.ndim != 1 or data.size == 0:
        raise VideoError(f"{who}: expects the encoded video as a non-empty 1-D uint8 array, "
                         f"got shape {data.shape}")
    buf = data.view(np.uint8).tobytes()
    index = scan(io.BytesIO(buf), who)
    frames = select_frames(index.n_frames, args)
    return ClipRequest(io.BytesIO(buf), index, frames, _fill(args))


def video_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    from stoker.kernels.cpu.video.decode import Decoder, decode_into

    who = ctx.describe() if hasattr(ctx, "describe") else "sample"
    r = _request(ins[0], args, who)
    out = buffers.empty((len(r.frames), r.index.height, r.index.width, 3), np.uint8)
    dec = Decoder(r.source, r.index)
    try:
        decode_into(dec, r.frames, r.fill, False, out)
    finally:
        dec.close()
    return out


def video_gpu_kernel(ins: list, args: dict, ctx: Any) -> list:
    from stoker.executor.context import SampleFailure
    from stoker.kernels.gpu.common import sample_args
    from stoker.kernels.gpu.video.nvdec import decode_clips

    data = ins[0]
    per = sample_args(args, ctx.n)
    requests = []
    for j in range(ctx.n):
        try:
            requests.append(_request(data[j], per[j], ctx.sample(j).describe()))
        except Exception as e:
            raise SampleFailure(j, e) from e
    return decode_clips(requests, ctx.device, ctx.map)


def _check(args: dict) -> None:
    from stoker.errors import ArgumentError

    name = "fn.decoders.video"
    if "frames" in args and any(k in args for k in ("start_frame", "stride",
                                                   "sequence_length", "end_frame")):
        raise ArgumentError(f"{name}: 'frames' cannot be combined with start_frame, stride, "
                            "sequence_length or end_frame")
    if "sequence_length" in args and "end_frame" in args:
        raise ArgumentError(f"{name}: give 'sequence_length' or 'end_frame', not both")


def _example_video() -> list[np.ndarray]:
    import os

    from stoker.operators.video.reader_source import EXAMPLE_VIDEO as _SAMPLE

    # (An installed stoker has no test data; the battery runs in the repository.)
    return [np.fromfile(_SAMPLE, np.uint8) if os.path.exists(_SAMPLE) else np.ones(1, np.uint8)]


SCHEMA = OpSchema(
    name="decoders.video",
    doc="Decodes whole encoded videos (any codec PyAV's FFmpeg decodes): uint8 FHWC, all "
        "frames or those frames/start_frame/stride/sequence_length/end_frame select.",
    inputs=(Input("encoded", "The encoded video, a 1-D uint8 array per sample."),),
    args=(
        Arg("affine", "bool", True, "Accepted for portability (thread pinning)."),
        Arg("build_index", "bool", True, "Accepted: the frames are always indexed."),
        Arg("frames", "ints", None, "Frame numbers to decode, in order.", per_sample=True),
        Arg("start_frame", "int", None, "First frame.", per_sample=True),
        Arg("stride", "int", None, "Distance between frames.", per_sample=True),
        Arg("sequence_length", "int", None, "Frames to decode.", per_sample=True),
        Arg("end_frame", "int", None, "Frame to stop before.", per_sample=True),
        Arg("pad_mode", "str", "constant", "Frames past the end: 'constant', 'edge', "
            "'reflect_1001', 'reflect_101' or 'none' (an error).", per_sample=True,
            choices=tuple(PAD_MODES)),
        Arg("fill_value", "ints", [0], "Colour of constant padding (0-255)."),
    ),
    devices=("cpu", "mixed"),
    kernel=video_kernel,
    gpu_kernel=video_gpu_kernel,
    layout=lambda layouts, args: "FHWC",
    dtype=lambda dtypes, args: np.dtype(np.uint8),
    check=lambda args: _check({k: v for k, v in args.items()
                               if v is not None and k in args.get("_given", ())}),
    examples=(Example(inputs=(_example_video(),), args={"sequence_length": 4, "stride": 3}),
              Example(inputs=(_example_video(),), args={"frames": [3, 1, 1]}),
              Example(inputs=([np.zeros(0, np.uint8)],), raises=RuntimeError,
                      match="non-empty")),
)
register(SCHEMA)
