"""Argument value forms DALI accepts: here, ``None`` read as "not given"."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentTypeError


def _run(make):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        return make()

    p = pipe()
    p.build()
    return p.run()[0]


def test_dtype_none_gives_the_schema_default_not_float64():
    out = _run(lambda: fn.random.uniform(range=[0, 1], shape=[3], dtype=None))
    assert out.dtype == types.FLOAT
    assert np.asarray(out.at(0)).dtype == np.float32


def test_none_for_an_argument_with_a_default_is_the_default():
    given = _run(lambda: fn.random.coin_flip(probability=None, shape=[64], seed=5))
    default = _run(lambda: fn.random.coin_flip(shape=[64], seed=5))
    np.testing.assert_array_equal(np.asarray(given.at(0)), np.asarray(default.at(0)))


def test_none_for_a_required_argument_is_reported_missing():
    with pytest.raises(ArgumentTypeError, match="missing required argument 'dtype'"):
        _run(lambda: fn.cast(fn.random.uniform(range=[0, 1]), dtype=None))
