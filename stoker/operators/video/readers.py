"""``fn.experimental.readers.video``, ``fn.readers.video`` and ``fn.readers.video_resize``.

Each reads windows of ``sequence_length`` frames (``stoker/readers/video_windows.py``)
from video files and decodes them (``reader_source.py``). Outputs: the clips (uint8 FHWC,
or float for the legacy reader's ``dtype=FLOAT``), then ``[labels] [frame_num]
[timestamps]`` when asked for, in DALI's order.

Devices: DALI 2.4's legacy readers run only on the GPU and its new reader decodes only
VP8, VP9 and MJPEG on the CPU. Here every reader runs on the CPU with every codec PyAV's
FFmpeg has (H.264, HEVC, VP8, VP9, AV1, MPEG-4, MJPEG, ...); with ``device="gpu"`` and a
GPU, decoding goes to NVDEC (``stoker/kernels/gpu/video``); without one, the pipeline runs
the CPU reader after the usual one warning.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.operators.image.resize import RESAMPLING_ARGS, SIZE_ARGS
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.video.gpu_readers import gpu_split, windows_schema
from stoker.operators.video.reader_source import EXAMPLE_VIDEO, VideoReader, frame_num_mode
from stoker.readers.video_windows import PAD_MODES

_SAMPLE = EXAMPLE_VIDEO

SOURCE_ARGS = (
    Arg("filenames", "strs", [], "Video files, in reading order."),
    Arg("file_root", "str", "", "Folder of class folders: label = folder index."),
    Arg("file_list", "str", "", "Text file of 'file label [start [end]]' lines."),
    Arg("labels", "ints", None, "A label per file of 'filenames' (adds the labels output)."),
    Arg("sequence_length", "int", REQUIRED, "Frames per sample.", range=(1, None)),
    Arg("stride", "int", 1, "Distance between consecutive frames of a sample.",
        range=(1, None)),
    Arg("step", "int", -1, "Distance between the first frames of consecutive samples; "
        "<= 0: stride * sequence_length (DALI's code; its documentation says "
        "sequence_length)."),
    Arg("enable_frame_num", "any", "none", "'scalar' (or True): the first frame's number; "
        "'sequence': every frame's; 'none' (or False)."),
    Arg("enable_timestamps", "bool", False, "Also output each frame's time in seconds."),
    Arg("image_type", "image_type", types.RGB, "RGB or YCbCr."),
)

LOADER_ARGS = (
    Arg("random_shuffle", "bool", False, "Deliver each epoch's windows in a random order: "
        "an exact permutation per epoch, reproducible from 'seed'."),
    Arg("initial_fill", "int", 1024, "Accepted for portability: stoker's shuffle is an "
        "exact permutation.", range=(1, None)),
    Arg("shard_id", "int", 0, "Which shard this reader reads.", range=(0, None)),
    Arg("num_shards", "int", 1, "Number of shards.", range=(1, None)),
    Arg("stick_to_shard", "bool", False, "Read the same shard every epoch."),
    Arg("pad_last_batch", "bool", False, "Repeat the shard's last sample to whole batches."),
    Arg("lazy_init", "bool", False, "Index the files on first use instead of at build()."),
    Arg("read_ahead", "bool", False, "Accepted for portability."),
    Arg("dont_use_mmap", "bool", False, "Accepted for portability."),
    Arg("prefetch_queue_depth", "int", 1, "Accepted for portability.", range=(1, None)),
    Arg("skip_cached_images", "bool", False, "Accepted for portability."),
    Arg("tensor_init_bytes", "int", 1048576, "Accepted for portability."),
)

NEW_ARGS = (
    Arg("file_list_format", "str", "timestamps", "file_list ranges in 'frames' or "
        "'timestamps' (seconds).", choices=("frames", "timestamps")),
    Arg("file_list_rounding", "str", "start_down_end_up", "How fractional frame numbers "
        "round.", choices=("start_down_end_up", "start_up_end_down", "all_up", "all_down")),
    Arg("file_list_include_end", "bool", True, "Accepted: DALI 2.4 ends ranges before "
        "their end frame whatever it says (measured)."),
    Arg("pad_mode", "str", "none", "The tail sample: 'none' (no tail), 'constant' "
        "(fill_value), 'edge'/'repeat', 'reflect_1001'/'symmetric', 'reflect_101'/'reflect'.",
        per_sample=True, choices=tuple(PAD_MODES)),
    Arg("fill_value", "ints", [0], "Colour of constant padding: one value or one per "
        "channel, 0-255."),
    Arg("uniform_sample", "bool", False, "One sample per file: sequence_length frames "
        "spread evenly over it."),
)

LEGACY_ARGS = (
    Arg("pad_sequences", "bool", False, "Also give the tail windows, their missing frames "
        "zero (frame numbers and timestamps -1)."),
    Arg("file_list_frame_num", "bool", False, "file_list ranges are frame numbers (else "
        "seconds)."),
    Arg("file_list_include_preceding_frame", "bool", False, "Seconds round down at the "
        "start and up at the end (else up, then down)."),
    Arg("dtype", "dtype", types.UINT8, "UINT8 or FLOAT."),
    Arg("normalized", "bool", False, "FLOAT output in [0, 1] instead of [0, 255]."),
    Arg("channels", "int", 3, "Channels of the output (3).", range=(3, 3)),
    Arg("skip_vfr_check", "bool", False, "Accepted: stoker reads variable frame rate files "
        "through their timestamps."),
    Arg("additional_decode_surfaces", "int", 2, "Accepted for portability (NVDEC "
        "surfaces).", range=(0, None)),
)


def _check_common(fn_name: str, args: dict) -> None:
    given = [k for k in ("filenames", "file_root", "file_list") if args.get(k)]
    if len(given) != 1:
        raise ArgumentError(f"{fn_name}: give exactly one of 'filenames', 'file_root' and "
                            f"'file_list', got {given or 'none'}")
    if args.get("labels") is not None and not args.get("filenames"):
        raise ArgumentError(f"{fn_name}: argument 'labels' goes with 'filenames' only")
    if frame_num_mode(args.get("enable_frame_num")) not in ("none", "scalar", "sequence"):
        raise ArgumentError(f"{fn_name}: argument 'enable_frame_num' must be 'none', "
                            f"'scalar' or 'sequence', got {args.get('enable_frame_num')!r}")
    if int(args.get("image_type", 0)) not in (int(types.RGB), int(types.YCbCr)):
        raise ArgumentError(f"{fn_name}: argument 'image_type' must be RGB or YCbCr")
    if not args["shard_id"] < args["num_shards"]:
        raise ArgumentError(f"{fn_name}: argument 'shard_id' must be less than num_shards="
                            f"{args['num_shards']}, got {args['shard_id']}")


def _check_new(args: dict) -> None:
    _check_common("fn.experimental.readers.video", args)
    fill = args.get("fill_value") or [0]
    if len(fill) not in (1, 3) or any(not 0 <= v <= 255 for v in fill):
        raise ArgumentError("fn.experimental.readers.video: argument 'fill_value' must be "
                            f"one value or three, each 0-255, got {fill!r}")


def _check_legacy(name: str) -> Any:
    def check(args: dict) -> None:
        _check_common(f"fn.{name}", args)
        if types.to_numpy(args["dtype"]) not in (np.uint8, np.float32):
            raise ArgumentError(f"fn.{name}: argument 'dtype' must be UINT8 or FLOAT")
        if name == "readers.video_resize":
            from stoker.operators.image.resize import check_size_args

            check_size_args(name, args)
    return check


def _has_labels(args: dict) -> bool:
    return args.get("labels") is not None or bool(args.get("file_root")) or \
        bool(args.get("file_list"))


def _num_outputs(args: dict) -> int:
    return 1 + _has_labels(args) + (frame_num_mode(args.get("enable_frame_num")) != "none") \
        + bool(args.get("enable_timestamps"))


def _dtypes(in_dtypes: list, args: dict) -> list:
    main = np.dtype(types.to_numpy(args.get("dtype", types.UINT8)))
    out = [main]
    if _has_labels(args):
        out.append(np.dtype(np.int32))
    if frame_num_mode(args.get("enable_frame_num")) != "none":
        out.append(np.dtype(np.int32))
    if args.get("enable_timestamps"):
        out.append(np.dtype(np.float64))
    return out


def _layouts(in_layouts: list, args: dict) -> list:
    return ["FHWC"] + [""] * (_num_outputs(args) - 1)


class LegacyVideoReader(VideoReader):
    """readers.video: the legacy windows, uint8 or float clips."""

    legacy = True

    @property
    def finishes(self) -> bool:
        return types.to_numpy(self.args["dtype"]) == np.float32

    def finished_as(self, clip: np.ndarray) -> tuple | None:
        return clip.shape, np.dtype(np.float32)

    def finish(self, clip: np.ndarray, out: np.ndarray | None = None) -> Any:
        if types.to_numpy(self.args["dtype"]) != np.float32:
            return clip
        if out is None:
            out = np.empty(clip.shape, np.float32)
        if self.args["normalized"]:  # (float32(x) * float32(1 / 255), as DALI scales)
            np.multiply(clip, np.float32(1 / 255), out=out, dtype=np.float32)
        else:
            np.copyto(out, clip)
        return out

    def outputs(self, data: Any, windows: list, video: Any) -> list:
        outs = super().outputs(data, windows, video)
        # Padded frames: frame numbers and timestamps -1 (DALI's legacy reader).
        return outs

    def fill_value(self) -> np.ndarray | None:
        return None


class ResizingVideoReader(LegacyVideoReader):
    """readers.video_resize: the legacy reader's clips through fn.resize's kernel."""

    finishes = True

    def finished_as(self, clip: np.ndarray) -> tuple | None:
        return None  # (the resize's size: known once resized)

    def finish(self, clip: np.ndarray, out: np.ndarray | None = None) -> Any:
        from stoker.operators.image.resize import resize_kernel

        args = {**self.args, "_in_layouts": ("FHWC",), "dtype": None}
        return super().finish(resize_kernel([clip], args, None), out)


_EXAMPLE = Example(args={"filenames": [_SAMPLE], "sequence_length": 3, "step": 20})

windows_schema(register(OpSchema(
    name="experimental.readers.video", gpu_split=gpu_split("experimental.readers.video"),
    doc="Reads sequences of frames from video files (any codec PyAV's FFmpeg decodes) and "
        "decodes them: uint8 FHWC clips, then [labels] [frame_num] [timestamps].",
    args=(*SOURCE_ARGS, *NEW_ARGS, *LOADER_ARGS),
    num_outputs=_num_outputs, devices=("cpu", "gpu"), stage="source", instance=VideoReader,
    layout=_layouts, dtype=_dtypes, check=_check_new,
    examples=(_EXAMPLE,
              Example(args={"filenames": [_SAMPLE], "file_root": "x", "sequence_length": 2},
                      raises=ArgumentError, match="exactly one of")),
)))

windows_schema(register(OpSchema(
    name="readers.video", gpu_split=gpu_split("readers.video"),
    doc="DALI's legacy video reader (GPU-only in DALI; here also on the CPU): sequences "
        "of frames from video files, uint8 or float FHWC, then [labels] [frame_num] "
        "[timestamps].",
    args=(*SOURCE_ARGS, *LEGACY_ARGS, *LOADER_ARGS),
    num_outputs=_num_outputs, devices=("cpu", "gpu"), stage="source",
    instance=LegacyVideoReader, layout=_layouts, dtype=_dtypes,
    check=_check_legacy("readers.video"),
    examples=(Example(args={"filenames": [_SAMPLE], "sequence_length": 3, "step": 20,
                            "dtype": types.FLOAT, "normalized": True}),
              Example(args={"filenames": [_SAMPLE], "sequence_length": 3,
                            "dtype": types.INT32}, raises=ArgumentError,
                      match="must be UINT8 or FLOAT")),
)))

windows_schema(register(OpSchema(
    name="readers.video_resize", gpu_split=gpu_split("readers.video_resize"),
    doc="readers.video followed by fn.resize of every frame (resize's arguments).",
    args=(*SOURCE_ARGS, *LEGACY_ARGS, *LOADER_ARGS,
          *[a for a in (*RESAMPLING_ARGS, *SIZE_ARGS) if a.name not in ("dtype",)]),
    num_outputs=_num_outputs, devices=("cpu", "gpu"), stage="source",
    instance=ResizingVideoReader, layout=_layouts, dtype=_dtypes,
    check=_check_legacy("readers.video_resize"),
    examples=(Example(args={"filenames": [_SAMPLE], "sequence_length": 2, "step": 20,
                            "resize_x": 32, "resize_y": 24}),
              Example(args={"filenames": [_SAMPLE], "sequence_length": 2, "resize_z": 3},
                      raises=ArgumentError, match="give exactly one of")),
)))
