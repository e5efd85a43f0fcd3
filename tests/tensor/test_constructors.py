"""fn.zeros / ones / full and their _like forms against DALI 2.4's recorded outputs
(tests/data/dali_constructors.json, recorder tests/data/record/constructors.py) and numpy."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import stoker.fn as fn
from stoker import pipeline_def, types

HERE = pathlib.Path(__file__).resolve().parents[1] / "data"
DATA = json.loads((HERE / "dali_constructors.json").read_text())


def _constant(spec: dict):
    # As the recorder builds it: a Python number, or a numpy array of the given dtype.
    return spec["value"] if spec["dtype"] is None else np.array(spec["value"], spec["dtype"])


def _build(case: dict, x):
    ins = [x if i == "x" else _constant(i) for i in case["inputs"]]
    call = {k: (getattr(types.DALIDataType, v) if k == "dtype" else v)
            for k, v in case["args"].items()}
    return getattr(fn, case["op"])(*ins, **call)


X = [np.array(s, np.uint8) for s in DATA["x"]]


def _run(case):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: X, layout="HWC")
        return _build(case, x)

    p = pipe()
    p.build()
    out = p.run()[0]
    return out.layout(), [np.asarray(t) for t in out]


@pytest.mark.parametrize("case", DATA["cases"],
                         ids=[f"{c['op']}-{c['inputs']}-{c['args']}" for c in DATA["cases"]])
def test_constructor_matches_dali(case):
    if case["out"].get("error"):
        with pytest.raises(Exception, match="shape|layout|broadcast"):
            _run(case)
        return
    layout, got = _run(case)
    assert layout == case["out"]["layout"]
    for g, want in zip(got, case["out"]["samples"], strict=True):
        assert (g.dtype.name, list(g.shape)) == (want["dtype"], want["shape"])
        np.testing.assert_array_equal(g.astype(np.float64).ravel(), want["values"])


def test_per_sample_shape_and_fill():
    shapes = [np.array([2, 1], np.int32), np.array([3, 2], np.int32)]
    fills = [np.float32(1.5), np.float32(-4)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        shape = fn.external_source(lambda: shapes)
        return (fn.zeros(shape=shape, dtype=types.FLOAT),
                fn.full(fn.external_source(lambda: fills), shape=shape))

    p = pipe()
    p.build()
    zeros, full = p.run()
    for j in range(2):
        np.testing.assert_array_equal(np.asarray(zeros[j]), np.zeros(shapes[j], np.float32))
        np.testing.assert_array_equal(np.asarray(full[j]), np.full(shapes[j], fills[j]))
