"""Cases of DALI 2.4's CPU video operators on the VP9 and MJPEG test files, shared by the
recorder (tests/data/record/video_outputs.py) and the replay (test_video_vs_dali.py).

A case is (name, operator, arguments); file names are relative to tests/data/video.
file_list cases carry the list's text, written next to the videos at run time.
``run_case`` runs one with either library.
"""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import Any

import numpy as np

VIDEOS = pathlib.Path(__file__).resolve().parents[1] / "data" / "video"

V = "vp9_cfr.webm"  # 40 frames, 65x49
F = "vp9_vfr.webm"  # 30 frames, irregular timestamps
M = "mjpeg.avi"  # 30 frames, 64x48

READER = "experimental.readers.video"
CASES = [
    ("plain", READER, {"filenames": [V], "sequence_length": 5}),
    ("stride_step", READER, {"filenames": [V, M], "sequence_length": 4, "stride": 3,
                             "step": 7, "labels": [3, 9], "enable_frame_num": "sequence",
                             "enable_timestamps": True}),
    ("step0", READER, {"filenames": [M], "sequence_length": 6, "stride": 2, "step": 0}),
    ("vfr", READER, {"filenames": [F], "sequence_length": 4, "stride": 2,
                     "enable_timestamps": True, "enable_frame_num": "scalar"}),
    ("frame_num_true", READER, {"filenames": [M], "sequence_length": 3, "step": 10,
                                "labels": [1], "enable_frame_num": True}),
    *[(f"pad_{mode}", READER, {"filenames": [V], "sequence_length": 6, "stride": 3,
                               "pad_mode": mode, "fill_value": [9, 8, 7],
                               "enable_frame_num": "sequence"})
      for mode in ("constant", "edge", "reflect_1001", "reflect_101")],
    ("pad_long", READER, {"filenames": [M], "sequence_length": 40, "pad_mode": "edge"}),
    ("uniform", READER, {"filenames": [V, M], "sequence_length": 7, "uniform_sample": True,
                         "enable_frame_num": "sequence"}),
    ("uniform_repeat", READER, {"filenames": [M], "sequence_length": 45,
                                "uniform_sample": True}),
    ("file_root", READER, {"file_root": "<root>", "sequence_length": 10, "step": 10}),
    ("list_frames", READER, {"file_list": f"{V} 5 3 11\n{M} 6 -10 -1\n{M} 7\n",
                             "file_list_format": "frames", "sequence_length": 2,
                             "enable_frame_num": "sequence"}),
    ("list_frames_float", READER, {"file_list": f"{M} 7 1.5 5.5\n", "file_list_format":
                                   "frames", "sequence_length": 1,
                                   "enable_frame_num": "scalar"}),
    *[(f"list_seconds_{r}", READER, {"file_list": f"{M} 5 0.05 0.25\n{V} 6 0.011 0.09\n",
                                     "file_list_rounding": r, "sequence_length": 1,
                                     "enable_frame_num": "scalar"})
      for r in ("start_down_end_up", "all_up")],
    ("shards", READER, {"filenames": [V, M], "sequence_length": 5, "step": 5,
                        "num_shards": 3, "shard_id": 1}),
    ("decoder_all", "decoders.video", {}),
    ("decoder_range", "decoders.video", {"start_frame": 3, "stride": 4,
                                         "sequence_length": 5}),
    ("decoder_end", "decoders.video", {"start_frame": 2, "end_frame": 9, "stride": 2}),
    ("decoder_frames", "decoders.video", {"frames": [5, 1, 1, 29]}),
    ("decoder_pad", "decoders.video", {"start_frame": 25, "sequence_length": 8,
                                       "pad_mode": "edge"}),
    ("decoder_pad_const", "decoders.video", {"frames": [2, 33], "fill_value": [40]}),
    ("decoder_pad_none", "decoders.video", {"start_frame": 26, "sequence_length": 8,
                                            "pad_mode": "none"}),
    ("decoder_frames_none_past", "decoders.video", {"frames": [1, 31], "pad_mode": "none"}),
]
# decoders.video runs on these files, one per sample.
DECODER_FILES = [M, V]


def materialize(args: dict, tmp: str) -> dict:
    args = dict(args)
    if "filenames" in args:
        args["filenames"] = [str(VIDEOS / f) for f in args["filenames"]]
    if args.get("file_root") == "<root>":
        for cls, names in (("a", ["vp9_cfr.webm"]), ("b", ["mjpeg.avi", "vp8_cfr.webm"])):
            os.makedirs(os.path.join(tmp, "root", cls), exist_ok=True)
            for n in names:
                shutil.copy(VIDEOS / n, os.path.join(tmp, "root", cls, n))
        args["file_root"] = os.path.join(tmp, "root")
    if "file_list" in args:
        path = os.path.join(tmp, "list.txt")
        lines = [f"{VIDEOS / line.split(' ', 1)[0]} {line.split(' ', 1)[1]}"
                 for line in args["file_list"].splitlines()]
        pathlib.Path(path).write_text("\n".join(lines) + "\n")
        args["file_list"] = path
    return args


def run_case(fn: Any, pipeline: Any, op: str, args: dict, tmp: str, num_threads: int) -> dict:
    """The case's outcome with ``fn`` and ``Pipeline`` of DALI or of stoker: the epoch
    size and, per sample, its frame identities (read from the pixels), shape, layout,
    source_info, the first pixel's values over the frames, the other outputs, and every
    output's dtype."""
    from stoker.readers.video_synth import frame_indices

    args = materialize(args, tmp)
    pipe = pipeline(batch_size=1, num_threads=num_threads, device_id=None, seed=1)
    with pipe:
        if op == "decoders.video":
            enc = fn.readers.file(files=[str(VIDEOS / f) for f in DECODER_FILES])[0]
            outs = fn.decoders.video(enc, **args)
        else:
            outs = fn.experimental.readers.video(name="R", **args)
        outs = outs if isinstance(outs, list) else [outs]
        pipe.set_outputs(*outs)
    pipe.build()
    n = len(DECODER_FILES) if op == "decoders.video" else pipe.reader_meta("R")["epoch_size"]
    samples = []
    for _ in range(n):
        out = pipe.run()
        video = np.array(out[0].at(0))
        samples.append({"frames": frame_indices(video), "shape": list(video.shape),
                        "layout": out[0].layout(), "source": out[0][0].source_info(),
                        "corner": video[:, 0, 0].tolist(),
                        "extra": [np.array(o.at(0)).tolist() for o in out[1:]],
                        "dtypes": [str(np.array(o.at(0)).dtype) for o in out]})
    if hasattr(pipe, "close"):  # stoker's pipelines hold threads; DALI's has no close()
        pipe.close()
    return {"epoch_size": n, "samples": samples}
