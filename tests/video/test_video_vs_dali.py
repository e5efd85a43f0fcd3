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

from video_cases import CASES, run_case  # noqa: E402

from stoker import Pipeline, fn  # noqa: E402

DATA = pathlib.Path(__file__).parents[1] / "data"
VIDEOS = DATA / "video"
RECORDED = json.loads((DATA / "dali_video_outputs.json").read_text())["cases"]
# Where stoker gives something else on purpose (README, "Differences from DALI").
DIFFERENT = {}


def _run(op: str, args: dict, tmp: str) -> dict:
    return run_case(fn, Pipeline, op, args, tmp, num_threads=2)


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
