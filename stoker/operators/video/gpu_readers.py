"""The video readers with ``device="gpu"``: windows picked on the CPU, decoded by NVDEC.

``fn.readers.video(device="gpu", ...)`` records two operators: a hidden CPU source (the
same reader, same arguments and name, so ``reader_name``, sharding, shuffling, epochs,
checkpoints and ``on_error="skip"`` are the CPU reader's) whose first output describes
each sample's window (its file and frame numbers) instead of decoding it, and a hidden
``mixed`` operator that decodes those windows on the GPU (``kernels/gpu/video/nvdec.py``:
NVDEC sessions, NV12 -> RGB on the device; codecs NVDEC lacks decode on the CPU and are
uploaded). The other outputs (labels, frame numbers, timestamps) move to the GPU as
DALI's GPU reader gives them. ``video_resize`` then runs ``fn.resize`` on the GPU.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentTypeError
from stoker.operators.machinery.registry import REGISTRY, call_op, register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema


class WindowsMixin:
    """A reader instance whose clips are window descriptions (JSON bytes per sample)."""

    reads_ahead = False

    def decode(self, data: Any, windows: list, bctx: Any) -> list:
        out = []
        for e, frames in windows:
            desc = {"path": data.entries[e].path, "frames": frames.tolist()}
            out.append(np.frombuffer(json.dumps(desc).encode(), np.uint8))
        return out


def _descriptions(ins: list, n: int) -> list[dict]:
    return [json.loads(bytes(np.asarray(ins[0][j]).astype(np.uint8))) for j in range(n)]


def decode_windows_gpu(ins: list, args: dict, ctx: Any) -> list:
    import torch

    from stoker.executor.context import SampleFailure
    from stoker.kernels.gpu.video.nvdec import ClipRequest, decode_clips
    from stoker.readers.video_index import index_file

    descs = _descriptions([[x.cpu().numpy() if hasattr(x, "cpu") else x for x in ins[0]]],
                          ctx.n)
    fill = np.asarray(args.get("fill_value") or [0], np.int64)
    fill = np.resize(fill, 3).clip(0, 255).astype(np.uint8)
    ycbcr = int(args.get("image_type", 0)) == int(types.YCbCr)
    requests = []
    for j, d in enumerate(descs):
        try:
            requests.append(ClipRequest(d["path"], index_file(d["path"]),
                                        np.asarray(d["frames"], np.int64), fill, ycbcr))
        except Exception as e:
            raise SampleFailure(j, e) from e
    clips = decode_clips(requests, ctx.device, ctx.map)
    if types.to_numpy(args.get("dtype", types.UINT8)) == np.float32:
        clips = [c.float() * (1 / 255 if args.get("normalized") else 1.0) for c in clips]
    if clips and all(c.shape == clips[0].shape for c in clips):
        return torch.stack(clips)
    return clips


def _described(first: int, count: int) -> np.ndarray:
    from stoker.operators.video.reader_source import EXAMPLE_VIDEO as _SAMPLE

    desc = {"path": _SAMPLE, "frames": list(range(first, first + count))}
    return np.frombuffer(json.dumps(desc).encode(), np.uint8)


register(OpSchema(
    name="_video_decode_windows",
    doc="Decodes the windows a video reader's CPU part described (device='gpu' readers).",
    inputs=(Input("windows", "JSON window descriptions (uint8)."),),
    args=(Arg("fill_value", "ints", [0], ""), Arg("image_type", "image_type", types.RGB, ""),
          Arg("dtype", "dtype", types.UINT8, ""), Arg("normalized", "bool", False, "")),
    devices=("mixed",),
    gpu_kernel=decode_windows_gpu,
    examples=(Example(inputs=([_described(0, 3)],)),
              Example(inputs=([_described(0, 3)],), args={"fill": 1},
                      raises=ArgumentTypeError, match="unknown argument 'fill'")),
    layout=lambda layouts, args: "FHWC",
    dtype=lambda dtypes, args: np.dtype(types.to_numpy(args.get("dtype", types.UINT8))),
))


def windows_schema(schema: OpSchema) -> OpSchema:
    """The hidden CPU source behind ``schema`` on the GPU."""
    instance = type(f"Windows{schema.instance.__name__}", (WindowsMixin, schema.instance),
                    {})
    from dataclasses import replace

    hidden = replace(schema, name=f"_{schema.name}.windows", devices=("cpu",),
                     instance=instance, gpu_split=None, check=None,
                     examples=(*[e for e in schema.examples if e.raises is None],
                               Example(args={"sequence_length": 1, "bogus": 1},
                                       raises=ArgumentTypeError, match="unknown argument")),
                     dtype=lambda dtypes, args, d=schema.dtype: [np.dtype(np.uint8),
                                                                  *d(dtypes, args)[1:]],
                     layout=lambda layouts, args, lay=schema.layout: ["", *lay(layouts,
                                                                               args)[1:]])
    register(hidden)
    return hidden


def gpu_split(name: str) -> Any:
    def split(kwargs: dict, device: str, op_name: str | None) -> Any:
        hidden = f"_{name}.windows"
        outs = call_op(hidden, [], {**kwargs, "device": "cpu", "name": op_name})
        outs = outs if isinstance(outs, list) else [outs]
        keep = {k: kwargs[k] for k in ("fill_value", "image_type", "dtype", "normalized")
                if k in kwargs and k in {a.name for a in REGISTRY["_video_decode_windows"].args}}
        video = call_op("_video_decode_windows", [outs[0]], {**keep, "device": "mixed"})
        if name == "readers.video_resize":
            from stoker.operators.image.resize import RESAMPLING_ARGS, SIZE_ARGS

            names = {a.name for a in (*RESAMPLING_ARGS, *SIZE_ARGS)} - {"dtype"}
            video = call_op("resize", [video], {**{k: v for k, v in kwargs.items()
                                                   if k in names}, "device": "gpu"})
        rest = [o.gpu() for o in outs[1:]]
        return [video, *rest] if rest else video
    return split
