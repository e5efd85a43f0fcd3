"""DALI 2.4's CPU video reader and decoder, recorded on the VP9 and MJPEG test videos
(tests/data/record/video_outputs.py), replayed against stoker: the same frames (read from
their pixels), extra outputs, shapes, layouts and types, DALI's refusals refused, and the
decoded pixels bit for bit."""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

import numpy as np
import pytest

pytest.importorskip("av")
sys.path.insert(0, str(pathlib.Path(__file__).parent))

from video_cases import CASES, DECODER_FILES, materialize  # noqa: E402

from stoker import Pipeline, fn  # noqa: E402
from stoker.readers.video_synth import frame_indices  # noqa: E402

DATA = pathlib.Path(__file__).parents[1] / "data"
VIDEOS = DATA / "video"
RECORDED = json.loads((DATA / "dali_video_outputs.json").read_text())["cases"]
# Where stoker gives something else on purpose (README, "Differences from DALI").
DIFFERENT = {}


def _run(op: str, args: dict, tmp: str) -> dict:
    args = materialize(args, tmp)
    pipe = Pipeline(batch_size=1, num_threads=2, device_id=None, seed=1)
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
    pipe.close()
    return {"epoch_size": n, "samples": samples}


def _same(ours, theirs) -> bool:
    if isinstance(theirs, list):
        return isinstance(ours, list) and len(ours) == len(theirs) and \
            all(_same(a, b) for a, b in zip(ours, theirs, strict=True))
    if isinstance(theirs, float):
        return abs(ours - theirs) < 1e-6
    return ours == theirs


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_video_case_matches_dali(name):
    want = RECORDED[name]
    with tempfile.TemporaryDirectory() as tmp:
        if "error" in want:
            with pytest.raises(Exception):  # noqa: B017  (DALI's refusal: any error)
                _run(want["op"], want["args"], tmp)
            return
        got = _run(want["op"], want["args"], tmp)
    assert got["epoch_size"] == want["epoch_size"]
    for k, (g, w) in enumerate(zip(got["samples"], want["samples"], strict=True)):
        for key in ("frames", "shape", "layout", "corner", "extra", "dtypes"):
            assert _same(g[key], w[key]), f"sample {k}: {key}: {g[key]} vs DALI {w[key]}"
        assert pathlib.Path(g["source"]).name == pathlib.Path(w["source"]).name


@pytest.mark.parametrize("name", sorted(np.load(DATA / "dali_video_pixels.npz").files))
def test_decoded_pixels_equal_dalis(name):
    want = np.load(DATA / "dali_video_pixels.npz")[name]
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.decoders.video(fn.readers.file(files=[str(VIDEOS / name)])[0]))
    got = np.array(pipe.run()[0].at(0))
    pipe.close()
    assert got.shape == want.shape
    assert np.array_equal(got, want), np.abs(got.astype(int) - want).max()
