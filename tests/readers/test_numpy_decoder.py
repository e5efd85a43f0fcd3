"""fn.decoders.numpy against DALI 2.4's recorded outcomes (tests/data/dali_numpy_dump.json,
recorder tests/data/record/numpy_dump.py)."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import stoker.fn as fn
from stoker import pipeline_def, types

HERE = pathlib.Path(__file__).resolve().parents[1] / "data"
sys.path.insert(0, str(HERE / "record"))
from numpy_dump import CASES, npy_bytes  # noqa: E402

DATA = json.loads((HERE / "dali_numpy_dump.json").read_text())["decoders.numpy"]
# Where stoker differs on purpose (README, "Differences from DALI, on purpose").
DECODES_WHERE_DALI_FAILS = {"fortran_float32"}


def _run(name):
    arrays, dtype = CASES[name]
    batch = [npy_bytes(*a) for a in arrays]
    kw = {} if dtype is None else {"dtype": getattr(types, dtype)}

    @pipeline_def(batch_size=len(batch), num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.numpy(fn.external_source(lambda: batch), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return out.layout(), [np.asarray(t) for t in out]


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoders_numpy_matches_dali(name):
    want = DATA[name]
    if name in DECODES_WHERE_DALI_FAILS:
        _, got = _run(name)
        values, dtype, shape, _ = CASES[name][0][0]
        np.testing.assert_array_equal(got[0], np.array(values, dtype).reshape(shape))
        assert got[0].flags.c_contiguous
        return
    if want.get("error"):
        with pytest.raises(Exception, match="must share one type|same number of dimensions|"
                                            "big-endian"):
            _run(name)
        return
    layout, got = _run(name)
    assert layout == want["layout"]
    for g, w in zip(got, want["samples"], strict=True):
        assert (g.dtype.name, list(g.shape)) == (w["dtype"], w["shape"])
        np.testing.assert_array_equal(g.astype(np.float64).ravel(), w["values"])
