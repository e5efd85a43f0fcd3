"""``node[...]`` against numpy indexing, with layouts and errors as measured in DALI 2.4.

stoker also accepts ``...`` (DALI 2.4 raises NotImplementedError) and treats ``None`` as a
new axis, as numpy does (DALI 2.4 ignores it).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run

from stoker import fn, types
from stoker.errors import ArgumentTypeError, SampleError
from stoker.operators.tensor.subscript import newaxis

X = [np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.arange(60, dtype=np.int32)
     .reshape(3, 4, 5)]
DENSE = [np.arange(24, dtype=np.int32).reshape(2, 3, 4) + 100 * i for i in range(4)]





class _Index:
    def __getitem__(self, index):
        return index


IX = _Index()


@pytest.mark.parametrize("samples", [X, DENSE], ids=["ragged", "dense"])
@pytest.mark.parametrize("index,layout", [
    (IX[0], "WC"), (IX[-1], "WC"), (IX[1:], "HWC"), (IX[:, 1:3], "HWC"), (IX[::2], "HWC"),
    (IX[::-1], "HWC"), (IX[1::-1], "HWC"), (IX[:, ::-2], "HWC"), (IX[-2:], "HWC"),
    (IX[:-1], "HWC"), (IX[5:10], "HWC"), (IX[-10:1], "HWC"), (IX[2:1], "HWC"),
    (IX[:, 0], "HC"), (IX[1, :, -1], "W"), (IX[..., 0], "HW"), (IX[0, ...], "WC"),
    (IX[..., 1:, 0], "HW"), (IX[np.int64(1)], "WC"),
])
def test_indexing_matches_numpy(samples, index, layout):
    out = run(lambda x: x[index], samples, layouts=["HWC"])
    for got, x in zip(out.samples(), samples, strict=True):
        want = x[index]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert out.layout() == layout


def test_new_axes():
    out = run(lambda x: x[newaxis], X, layouts=["HWC"])
    assert out.at(0).shape == (1, 2, 3, 4) and out.layout() == ""  # DALI: unnamed: no layout
    out = run(lambda x: x[newaxis("N")], X, layouts=["HWC"])
    assert out.at(0).shape == (1, 2, 3, 4) and out.layout() == "NHWC"
    out = run(lambda x: x[:, newaxis, 0], X, layouts=["HWC"])
    np.testing.assert_array_equal(out[1], X[1][:, None, 0])
    assert out.layout() == ""
    out = run(lambda x: x[None, ..., newaxis("X")], X)
    assert out.at(0).shape == (1, 2, 3, 4, 1)


def test_datanode_indices_per_sample():
    idx = [np.array(1, np.int32), np.array(2, np.int32)]
    out = run(lambda x, i: x[i], X, idx, layouts=["HWC", None])
    np.testing.assert_array_equal(out[0], X[0][1])
    np.testing.assert_array_equal(out[1], X[1][2])
    assert out.layout() == "WC"
    out = run(lambda x, i: x[:, i:], X, idx)
    assert out.shape() == [(2, 2, 4), (3, 2, 5)]
    same = [np.array(1, np.int64)] * 4
    out = run(lambda x, i: x[-1, i], DENSE, same)  # dense: one index for the whole chunk
    for got, x in zip(out.samples(), DENSE, strict=True):
        np.testing.assert_array_equal(got, x[-1, 1])
    constant = run(lambda x: x[fn.constant(idata=1, shape=[])], X)
    np.testing.assert_array_equal(constant[1], X[1][1])


def test_index_errors_at_run_time_name_index_and_shape():
    with pytest.raises(SampleError, match=r"fn\._subscript .*index 2 is out of range for axis "
                                          r"0 with extent 2 \(sample shape \(2, 3, 4\)\)"):
        run(lambda x: x[2], X)
    with pytest.raises(SampleError, match=r"index -4 is out of range for axis 0"):
        run(lambda x: x[-4], X)
    with pytest.raises(SampleError, match=r"too many indices \(4\) for a 3-D sample"):
        run(lambda x: x[0, 0, 0, 0], X)
    with pytest.raises(SampleError, match="slice step on axis 0 is 0"):
        run(lambda x: x[::0], X)
    with pytest.raises(SampleError, match=r"cannot index a scalar \(0-D\) sample"):
        run(lambda x: x[0], [np.array(1, np.int32)])
    with pytest.raises(SampleError, match=r"must be a scalar \(0-D\) per sample, got shape "
                                          r"\(1,\)"):
        run(lambda x, i: x[i], X, [np.array([1], np.int32)] * 2)
    with pytest.raises(SampleError, match="must hold integers, got float32"):
        run(lambda x: x[fn.constant(fdata=1.0, shape=[])], X)
    with pytest.raises(SampleError, match="out of range"):
        run(lambda x: x[fn.cast(fn.constant(idata=7, shape=[]), dtype=types.INT64)], X)


def test_index_errors_at_definition():
    with pytest.raises(ArgumentTypeError, match="indices must be integers, slices, .* got "
                                                "float: 1.0"):
        run(lambda x: x[1.0], X)
    with pytest.raises(ArgumentTypeError, match="got list"):
        run(lambda x: x[[0, 1]], X)
    with pytest.raises(ArgumentTypeError, match="only one '...'"):
        run(lambda x: x[..., 0, ...], X)
    with pytest.raises(ArgumentTypeError, match="slice stop must be an integer, None or a "
                                                "DataNode, got float"):
        run(lambda x: x[:2.5], X)
    with pytest.raises(ArgumentTypeError, match="got bool"):
        run(lambda x: x[True], X)
    with pytest.raises(ArgumentTypeError, match="newaxis: the name must be one letter"):
        newaxis("NC")
