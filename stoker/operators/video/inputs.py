"""``fn.experimental.inputs.video``: long videos fed whole, given out a batch of sequences
at a time.

``pipe.feed_input(name, [encoded])`` queues one encoded video (a batch of one 1-D uint8
sample); each run then gives up to ``max_batch_size`` consecutive sequences of
``sequence_length`` frames from it, decoding only those, and moves on to the next queued
video when one is used up. The last sequence of a video is shorter
(``last_sequence_policy="partial"``) or padded with zero frames (``"pad"``). Running with
nothing queued is an error (DALI's ``blocking=False``).
"""

from __future__ import annotations

import io
from collections import deque
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, PipelineError
from stoker.graph.node import OpNode
from stoker.kernels.cpu import buffers
from stoker.operators.machinery.registry import call_op, register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.readers.video_index import scan


class VideoInput:
    can_top_up = False

    def __init__(self, op: OpNode, pipeline: Any):
        self.op = op
        self.args = op.args
        self.queue: deque = deque()
        self.current: Any = None  # (decoder, index, next frame)
        for video in self.args.get("source") or []:  # stoker's extension: queued at build
            self.feed([np.asarray(video)])

    def feed(self, data: Any, layout: Any = None) -> None:
        samples = list(data) if not isinstance(data, np.ndarray) or data.ndim > 1 else [data]
        if len(samples) != 1:
            raise ArgumentError(f"{self.op.describe()}: feed one encoded video at a time (a "
                                f"batch of 1 sample), got {len(samples)}")
        arr = np.asarray(samples[0])
        if arr.ndim != 1 or arr.size == 0:
            raise ArgumentError(f"{self.op.describe()}: the fed video must be a non-empty "
                                f"1-D uint8 array, got shape {arr.shape}")
        self.queue.append(arr.view(np.uint8).tobytes())

    def _open_next(self) -> None:
        from stoker.kernels.cpu.video.decode import Decoder

        data = self.queue.popleft()
        index = scan(io.BytesIO(data), "fed video")
        self.current = [Decoder(io.BytesIO(data), index), index, 0]

    def next_batch(self, bctx: Any) -> tuple[list, None]:
        from stoker.kernels.cpu.video.decode import decode_into

        if self.current is None:
            if not self.queue:
                raise PipelineError(f"{self.op.describe()}: no video was fed; call "
                                    "pipe.feed_input(name, [encoded_video]) before run()")
            self._open_next()
        dec, index, start = self.current
        length = self.args["sequence_length"]
        pad = self.args["last_sequence_policy"] == "pad"
        out = []
        while len(out) < bctx.batch_size and start < index.n_frames:
            frames = start + np.arange(length, dtype=np.int64)
            real = frames[frames < index.n_frames]
            rows = frames if pad else real
            clip = buffers.empty((len(rows), index.height, index.width, 3), np.uint8)
            decode_into(dec, np.where(rows < index.n_frames, rows, -1), None, False, clip)
            out.append(clip)
            start += length
        self.current[2] = start
        if start >= index.n_frames:
            dec.close()
            self.current = None
        return [out], None

    def close(self) -> None:
        if self.current is not None:
            self.current[0].close()
            self.current = None


def _check(args: dict) -> None:
    if args["last_sequence_policy"] not in ("partial", "pad"):
        raise ArgumentError("fn.experimental.inputs.video: argument 'last_sequence_policy' "
                            f"must be 'partial' or 'pad', got {args['last_sequence_policy']!r}")


def _example() -> list:
    from stoker.operators.video.decoders import _example_video

    return _example_video()


register(OpSchema(
    name="experimental.inputs.video",
    doc="Gives consecutive sequences of frames of videos fed whole with feed_input, "
        "max_batch_size sequences per run (uint8 FHWC).",
    args=(Arg("sequence_length", "int", REQUIRED, "Frames per sequence.", range=(1, None)),
          Arg("last_sequence_policy", "str", "partial", "'partial' (shorter) or 'pad' "
              "(zero frames) for a video's last sequence."),
          Arg("blocking", "bool", False, "Accepted: a run with nothing fed is an error."),
          Arg("no_copy", "bool", False, "Accepted for portability."),
          Arg("affine", "bool", True, "Accepted for portability."),
          Arg("source", "any", None, "stoker's extension: encoded videos (1-D uint8 "
              "arrays) queued at build, as if fed one by one with feed_input.")),
    devices=("cpu", "mixed"),
    stage="source",
    instance=VideoInput,
    layout=lambda layouts, args: "FHWC",
    dtype=lambda dtypes, args: np.dtype(np.uint8),
    check=_check,
    # device="mixed": the frames decode on the CPU and move to the GPU.
    gpu_split=lambda kwargs, device, name: call_op(
        "experimental.inputs.video", [], {**kwargs, "device": "cpu", "name": name}).gpu(),
    examples=(Example(args={"sequence_length": 7, "source": _example()}),
              Example(args={"sequence_length": 7, "last_sequence_policy": "pad",
                            "source": _example()}),
              Example(args={"sequence_length": 2, "last_sequence_policy": "drop"},
                      raises=ArgumentError, match="'partial' or 'pad'"),),
))
