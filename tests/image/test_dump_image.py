"""fn.dump_image writes DALI 2.4's file names and PPM text (tests/data/dali_numpy_dump.json,
recorder tests/data/record/numpy_dump.py) and passes the images on."""

from __future__ import annotations

import json
import pathlib

import numpy as np

import stoker.fn as fn
from stoker import pipeline_def

# What DALI 2.4 wrote for these two samples (fn.dump_image(x, suffix="abc")).
DALI_FILES = json.loads((pathlib.Path(__file__).resolve().parents[1] / "data" /
                         "dali_numpy_dump.json").read_text())["dump_image"]


def test_dump_image_writes_dalis_files_and_passes_images_on(tmp_path):
    batch = [np.arange(18, dtype=np.uint8).reshape(2, 3, 3), np.full((1, 2, 1), 7, np.uint8)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.dump_image(fn.external_source(lambda: batch, layout="HWC"), suffix="abc")

    p = pipe()
    p.build()
    out = p.run()[0]
    for got, want in zip(out, batch, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    assert out.layout() == "HWC"
    assert len(DALI_FILES) == 2
    for name, text in DALI_FILES.items():
        assert (pathlib.Path.cwd() / name).read_text() == text
