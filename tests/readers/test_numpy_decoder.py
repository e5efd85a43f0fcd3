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


@pytest.mark.parametrize("no_copy", [False, True])
def test_large_arrays_are_views_of_owned_bytes_and_never_of_the_callers(no_copy):
    """Bytes the pipeline copied (large samples: recycled memory) are decoded into views
    of that copy; the caller's own arrays (no_copy=True) are copied. Either way the output
    keeps its values when the caller then overwrites what it fed."""
    import io

    from stoker.kernels.cpu import buffers

    rng = np.random.default_rng(0)
    arrays = [rng.random((150, 200, 3)).astype(np.float32) for _ in range(3)]  # > MIN_BYTES

    def npy(a):
        buf = io.BytesIO()
        np.save(buf, a)
        return np.frombuffer(buf.getvalue(), np.uint8).copy()

    fed = [npy(a) for a in arrays]

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: fed, no_copy=no_copy)
        return fn.decoders.numpy(x), x

    p = pipe()
    p.build()
    out, raw = p.run()
    got = [np.asarray(out.at(i)) for i in range(len(out))]
    assert all(np.array_equal(g, a) for g, a in zip(got, arrays, strict=True))
    source = [np.asarray(raw.at(i)) for i in range(len(raw))]
    assert all(np.shares_memory(g, b) for g, b in zip(got, source, strict=True)) == \
        (not no_copy)
    assert not any(np.shares_memory(g, f) for g, f in zip(got, fed, strict=True))
    assert all(buffers.recycled(b) for b in source) == (not no_copy)
    for f in fed:
        f[200:] = 0
    assert all(np.array_equal(g, a) for g, a in zip(got, arrays, strict=True))
