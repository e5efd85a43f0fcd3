"""``TensorList``: one batch as returned by ``Pipeline.run()``, dense or ragged."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, TensorList, fn, types


def _dense() -> TensorList:
    return TensorList(np.arange(24, dtype=np.float32).reshape(4, 2, 3), layout="HWC")


def _ragged() -> TensorList:
    return TensorList([np.zeros((2, 3), np.uint8), np.ones((4, 3), np.uint8)], layout="HWC")


# -- samples ---------------------------------------------------------------------------------


def test_len_and_at_give_numpy_samples() -> None:
    tl = _dense()
    assert len(tl) == 4
    assert isinstance(tl.at(1), np.ndarray)
    np.testing.assert_array_equal(tl.at(1), np.arange(6, 12).reshape(2, 3))
    np.testing.assert_array_equal(tl[3], tl.at(3))
    assert [s.shape for s in tl] == [(2, 3)] * 4


def test_at_of_ragged_batch_gives_each_sample() -> None:
    tl = _ragged()
    assert len(tl) == 2
    assert tl.at(0).shape == (2, 3) and tl[1].shape == (4, 3)
    assert tl[1].sum() == 12


def test_at_on_dense_batch_is_a_view_not_a_copy() -> None:
    tl = _dense()
    assert np.shares_memory(tl.at(2), tl.as_array())


# -- batch views -----------------------------------------------------------------------------


def test_as_array_of_dense_batch_does_not_copy() -> None:
    data = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    tl = TensorList(data)
    assert tl.as_array() is data
    assert np.shares_memory(np.asarray(tl), data)


def test_as_array_of_uniform_sample_list_stacks_once() -> None:
    tl = TensorList([np.full((2,), k, np.int32) for k in range(3)])
    first = tl.as_array()
    assert first.shape == (3, 2) and first[:, 0].tolist() == [0, 1, 2]
    assert np.shares_memory(tl.as_array(), first)


def test_as_array_of_ragged_batch_raises_clear_error() -> None:
    with pytest.raises(ValueError, match=r"TensorList.as_array: samples have different shapes "
                                         r"\(\(2, 3\), \(4, 3\)\); .*use at\(i\) per sample"):
        _ragged().as_array()


def test_as_tensor_is_as_array() -> None:
    tl = _dense()
    assert tl.as_tensor() is tl.as_array()
    with pytest.raises(ValueError, match="different shapes"):
        _ragged().as_tensor()


def test_is_dense_tensor_tells_uniform_from_ragged() -> None:
    assert _dense().is_dense_tensor()
    assert TensorList([np.zeros(3), np.ones(3)]).is_dense_tensor()
    assert not _ragged().is_dense_tensor()


def test_shape_lists_each_sample_shape() -> None:
    assert _dense().shape() == [(2, 3)] * 4
    assert _ragged().shape() == [(2, 3), (4, 3)]


def test_layout_and_dtype() -> None:
    assert _dense().layout() == "HWC"
    assert TensorList(np.zeros((1, 2))).layout() == ""
    assert _dense().dtype is types.FLOAT
    assert _ragged().dtype is types.UINT8
    assert _ragged().numpy_dtype == np.uint8


def test_np_asarray_is_the_batch_and_np_array_copies() -> None:
    tl = _dense()
    assert np.shares_memory(np.asarray(tl), tl.as_array())
    copied = np.array(tl)
    copied[0, 0, 0] = -1
    assert tl.at(0)[0, 0] == 0, "np.array(tl) must not alias the batch"
    assert np.asarray(tl, dtype=np.float64).dtype == np.float64


def test_dlpack_shares_memory_with_the_batch() -> None:
    tl = _dense()
    via_dlpack = np.from_dlpack(tl)
    assert np.shares_memory(via_dlpack, tl.as_array())
    np.testing.assert_array_equal(via_dlpack, tl.as_array())
    assert tl.__dlpack_device__() == (1, 0)  # kDLCPU


def test_source_info_defaults_to_empty_and_reports_given_paths() -> None:
    assert _dense().source_info(0) == ""
    tl = TensorList([np.zeros(1)] * 2, source_info=["a.jpg", "b.jpg"])
    assert tl.source_info(1) == "b.jpg"


def test_repr_names_length_type_layout_and_shapes() -> None:
    assert repr(_ragged()) == ("TensorList(len=2, dtype=UINT8, layout='HWC', "
                               "shapes=[(2, 3), (4, 3)])")


# -- from a pipeline -------------------------------------------------------------------------


def test_pipeline_output_of_uniform_batch_is_dense_without_copy() -> None:
    pipe = Pipeline(batch_size=4, num_threads=2, device_id=None, seed=3)
    with pipe:
        pipe.set_outputs(fn.random.uniform(shape=[2, 3]),
                         fn.external_source(source=lambda: [np.zeros(k + 1) for k in range(4)],
                                            layout="W"))
    dense, ragged = pipe.run()
    pipe.close()
    assert dense.is_dense_tensor() and dense.layout() == ""
    assert np.shares_memory(dense.as_array(), dense.as_array())
    assert np.shares_memory(dense.at(0), dense.as_array())
    assert dense.as_array().shape == (4, 2, 3) and dense.dtype is types.FLOAT
    assert not ragged.is_dense_tensor() and ragged.layout() == "W"
    assert ragged.shape() == [(1,), (2,), (3,), (4,)]
