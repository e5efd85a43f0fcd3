"""fn.cast against DALI 2.4 itself: rounding half away from zero, saturation, bool.

Skipped unless nvidia.dali is importable; run it with
``/work/bench-venv/bin/python -m pytest tests/dali/test_cast_vs_dali.py``.
NaN is left out: DALI gives the type's minimum for 32/64-bit integers, stoker 0. So is an
integer halfway between two float16 values (61072 from uint16): DALI rounds it up, stoker
(numpy) to even.
"""

from __future__ import annotations

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")
import nvidia.dali.fn as dali_fn  # noqa: E402
import nvidia.dali.types as dali_types  # noqa: E402

import stoker  # noqa: E402

FLOATS = np.array([-1e10, -300.7, -2.5, -1.5, -0.5, -0.2, 0.0, 0.3, 0.5, 1.7, 2.5, 254.6,
                   255.5, 300.0, 7e4, 3e9, 1e20, np.inf, -np.inf], np.float32)
INTS = np.array([-70000, -129, -1, 0, 1, 127, 128, 255, 256, 65535, 70000], np.int64)
TARGETS = ["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "INT64", "UINT64", "BOOL",
           "FLOAT16", "FLOAT"]


def _run(lib, fn, types, data, target):
    @lib.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [data])
        return fn.cast(x, dtype=getattr(types, target))

    p = pipe()
    if hasattr(p, "build"):
        p.build()
    return np.asarray(p.run()[0][0])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", ["float32", "int64", "int32", "uint16"])
def test_cast_matches_dali(source, target):
    data = FLOATS if source == "float32" else INTS.astype(source)
    if target == "FLOAT16" and source != "float32":
        data = data[np.abs(data.astype(np.float64)) < 2048]  # exact in float16: no ties
    want = _run(dali, dali_fn, dali_types, data, target)
    got = _run(stoker, stoker.fn, stoker.types, data, target)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
