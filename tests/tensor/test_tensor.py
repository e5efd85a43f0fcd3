"""fn.one_hot against a numpy reference and values measured in DALI 2.4 CPU pipelines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

LABELS = [np.array([0, 2, 1], np.int32), np.array([3, -1, 5], np.int32)]





def one_hot_ref(x, n, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    hot = np.trunc(x).astype(np.int64)[..., None] == np.arange(n)
    out = np.where(hot, on, off).astype(dtype)
    return np.moveaxis(out, -1, x.ndim if axis < 0 else axis)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_matches_reference(axis):
    out = run(lambda x: fn.one_hot(x, num_classes=4, axis=axis), LABELS, layouts=["N"])
    for got, x in zip(out, LABELS, strict=True):
        np.testing.assert_array_equal(got, one_hot_ref(x, 4, axis))
        assert got.dtype == np.float32
    assert out.layout() == ""  # DALI: no axis_name, no layout
    # Out-of-range classes (-1, 5) are all off.
    assert not np.take(out[1], [1, 2], axis=1 if axis == 0 else 0).any()


def test_one_hot_axis_name_inserts_into_layout():
    assert run(lambda x: fn.one_hot(x, num_classes=4, axis_name="K"), LABELS,
               layouts=["N"]).layout() == "NK"
    two_d = [np.array([[0, 1], [2, 0]], np.uint8)]
    out = run(lambda x: fn.one_hot(x, num_classes=3, axis=1, axis_name="K"), two_d,
              layouts=["HW"])
    assert out.layout() == "HKW"
    np.testing.assert_array_equal(out[0], one_hot_ref(two_d[0], 3, 1))


def test_one_hot_values_cast_like_a_c_cast():
    out = run(lambda x: fn.one_hot(x, num_classes=3, dtype=types.UINT8, on_value=300,
                                   off_value=-1.5), LABELS)
    assert out[0].dtype == np.uint8 and out[0][0].tolist() == [44, 255, 255]  # DALI
    out = run(lambda x: fn.one_hot(x, num_classes=3, dtype=types.INT32, on_value=2.7,
                                   off_value=-1.5), LABELS)
    assert out[0][1].tolist() == [-1, -1, 2]


def test_one_hot_scalars_and_dali_single_element_rule():
    scalars = [np.array(2, np.int64), np.array(1, np.int64)]
    out = run(lambda x: fn.one_hot(x, num_classes=4, axis_name="K"), scalars)
    assert out.layout() == "K" and out[0].tolist() == [0, 0, 1, 0]
    # Every sample holds one element: each is a scalar (DALI's legacy rule)...
    single = [np.array([[2]], np.int64), np.array([[1]], np.int64)]
    out = run(lambda x: fn.one_hot(x, num_classes=4), single)
    assert [o.shape for o in out] == [(4,), (4,)] and out[1].tolist() == [0, 1, 0, 0]
    # ... unless an axis is given, or some sample holds more than one.
    assert run(lambda x: fn.one_hot(x, num_classes=4, axis=0), single)[0].shape == (4, 1, 1)
    mixed = [np.array([2], np.int64), np.array([1, 0], np.int64)]
    assert [o.shape for o in run(lambda x: fn.one_hot(x, num_classes=4), mixed)] == \
        [(1, 4), (2, 4)]


def test_one_hot_float_classes_truncate_and_zero_classes():
    out = run(lambda x: fn.one_hot(x, num_classes=4),
              [np.array([2.7, 1.0, -0.5, 3.2], np.float32)])
    assert out[0].argmax(axis=1).tolist() == [2, 1, 0, 3]
    assert run(lambda x: fn.one_hot(x), LABELS)[0].shape == (3, 0)


def test_one_hot_errors():
    with pytest.raises(SampleError, match=r"fn\.one_hot .*'axis' 2 is out of range for 1-D "
                                          r"samples \(valid: -1\.\.1\)"):
        run(lambda x: fn.one_hot(x, num_classes=4, axis=2), LABELS)
    with pytest.raises(ArgumentError, match="'num_classes' must be in"):
        run(lambda x: fn.one_hot(x, num_classes=-1), LABELS)
    # DALI's words (measured on DALI 2.4), which code written for it may look for.
    with pytest.raises(ArgumentError, match="'axis_name' must be one letter: Unsupported "
                                            'axis_name value.* got "KK" instead'):
        run(lambda x: fn.one_hot(x, num_classes=3, axis_name="KK"), LABELS, layouts=["N"])
    with pytest.raises(SampleError, match="'axis_name' 'K' needs an input with a layout "
                                          r"\(Input layout mismatch - expected input layout "
                                          "to be of size 1"):
        run(lambda x: fn.one_hot(x, num_classes=3, axis_name="K"), LABELS)


def test_cast_of_nan_is_zero_and_infinities_saturate():
    """fn.cast's float -> integer conversion (DALI 2.4 gives 0 for NaN to 8/16-bit types;
    stoker gives 0 for every integer type)."""
    from stoker.kernels.cpu.tensor.tensor import cast_cpu

    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 2.5, -2.5, 300.0], np.float32)
    np.testing.assert_array_equal(cast_cpu(x, np.uint8), [0, 0, 255, 0, 3, 0, 255])
    np.testing.assert_array_equal(cast_cpu(x, np.int16), [0, 0, 32767, -32768, 3, -3, 300])
    big = np.iinfo(np.int64)
    np.testing.assert_array_equal(cast_cpu(x.astype(np.float64), np.int64),
                                  [0, 0, big.max, big.min, 3, -3, 300])
