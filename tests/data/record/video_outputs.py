"""Records DALI 2.4's CPU video readers and decoders on the VP9 and MJPEG test videos.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/video_outputs.py
writes tests/data/dali_video_outputs.json (per case: each sample's frame identities,
read from the pixels, its other outputs, shapes, layouts, source_info, or DALI's error)
and tests/data/dali_video_pixels.npz (whole decoded clips, for the colour comparison).
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "video")]
import nvidia.dali as dali  # noqa: E402
from nvidia.dali import Pipeline, fn  # noqa: E402
from video_cases import CASES, run_case  # noqa: E402

VIDEOS = ROOT / "tests" / "data" / "video"
OUT = ROOT / "tests" / "data" / "dali_video_outputs.json"
PIXELS = ROOT / "tests" / "data" / "dali_video_pixels.npz"


def outcome(op: str, args: dict, tmp: str) -> dict:
    try:
        return run_case(fn, Pipeline, op, args, tmp, num_threads=1)
    except Exception as e:  # DALI's refusal is the case's outcome
        return {"error": type(e).__name__, "message": str(e).strip().splitlines()[-1][:300]}


def pixels() -> dict:
    out = {}
    for name in ("vp9_cfr.webm", "mjpeg.avi", "mjpeg_odd.avi", "vp8_cfr.webm",
                 "vp9_vfr.webm"):
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
        with pipe:
            pipe.set_outputs(fn.decoders.video(fn.readers.file(files=[str(VIDEOS / name)])[0]))
        pipe.build()
        out[name] = np.array(pipe.run()[0][0])
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = {name: {"op": op, "args": args, **outcome(op, args, tmp)}
                 for name, op, args in CASES}
    OUT.write_text(json.dumps({"dali_version": dali.__version__, "cases": cases}, indent=1)
                   + "\n")
    np.savez_compressed(PIXELS, **pixels())
    print(f"wrote {OUT} ({len(cases)} cases) and {PIXELS}")


if __name__ == "__main__":
    main()
