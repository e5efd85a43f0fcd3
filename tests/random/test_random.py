"""fn.random.*: ranges as DALI 2.4 defines them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_pipeline

from stoker import fn, types


def _draw(**kwargs):
    (out,) = run_pipeline(lambda: fn.random.uniform(**kwargs), batch_size=4)
    return np.stack([np.asarray(s) for s in out])


@pytest.mark.parametrize("dtype", [types.FLOAT, types.FLOAT64, types.FLOAT16])
def test_uniform_range_is_half_open_even_one_step_wide(dtype):
    # DALI's range is [lo, hi): with hi the next value after lo, every draw is lo.
    np_type = types.to_numpy(dtype)
    lo = np_type.type(10.0)
    hi = np.nextafter(lo, np_type.type(11.0))
    x = _draw(range=[float(lo), float(hi)], shape=[20000], dtype=dtype)
    assert x.dtype == np_type
    assert (x == lo).all()
    # A wide range still reaches up to just below hi.
    y = _draw(range=[0.0, 1.0], shape=[50000], dtype=dtype)
    assert y.min() >= 0 and y.max() < 1 and y.max() > 0.99


def test_uniform_degenerate_range_gives_its_value():
    assert (_draw(range=[2.5, 2.5], shape=[10]) == np.float32(2.5)).all()
