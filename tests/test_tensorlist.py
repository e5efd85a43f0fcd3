"""``TensorListCPU`` (``TensorList``): one batch as returned by ``Pipeline.run()``, dense or
ragged, and its samples: ``at(i)`` numpy arrays, ``[i]`` ``TensorCPU`` objects. What DALI
2.4 answers to the same questions is replayed in tests/test_tensor_api_vs_dali.py."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, TensorList, fn, types
from stoker.errors import ShapeError
from stoker.tensors import TensorCPU, TensorListCPU


def _dense() -> TensorList:
    return TensorList(np.arange(24, dtype=np.float32).reshape(4, 2, 3), layout="HW")


def _ragged() -> TensorList:
    return TensorList([np.zeros((2, 3), np.uint8), np.ones((4, 3), np.uint8)], layout="HW")


# -- samples ---------------------------------------------------------------------------------


def test_len_and_at_give_numpy_samples() -> None:
    tl = _dense()
    assert len(tl) == 4
    assert isinstance(tl.at(1), np.ndarray)
    np.testing.assert_array_equal(tl.at(1), np.arange(6, 12).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(tl[3]), tl.at(3))
    assert [s.shape() for s in tl] == [[2, 3]] * 4


def test_at_of_ragged_batch_gives_each_sample() -> None:
    tl = _ragged()
    assert len(tl) == 2
    assert tl.at(0).shape == (2, 3) and tl.at(1).shape == (4, 3)
    assert tl.at(1).sum() == 12 and tl[1].shape() == [4, 3]


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
    with pytest.raises(ShapeError, match=r"TensorList.as_array: samples have different shapes "
                                         r"\(\(2, 3\), \(4, 3\)\); .*use at\(i\) per sample"):
        _ragged().as_array()


def test_as_tensor_is_a_tensorcpu_over_the_same_array() -> None:
    tl = _dense()
    whole = tl.as_tensor()
    assert isinstance(whole, TensorCPU) and whole.layout() == "NHW"
    assert np.shares_memory(np.asarray(whole), tl.as_array())
    with pytest.raises(RuntimeError, match="different shapes"):  # as in DALI
        _ragged().as_tensor()


def test_is_dense_tensor_tells_uniform_from_ragged() -> None:
    assert _dense().is_dense_tensor()
    assert TensorList([np.zeros(3), np.ones(3)]).is_dense_tensor()
    assert not _ragged().is_dense_tensor()


def test_shape_lists_each_sample_shape() -> None:
    assert _dense().shape() == [(2, 3)] * 4
    assert _ragged().shape() == [(2, 3), (4, 3)]


def test_layout_and_dtype() -> None:
    assert _dense().layout() == "HW"
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


def test_repr_names_type_layout_and_shapes_as_dali() -> None:
    assert repr(_ragged()) == ('TensorListCPU(\n    dtype=DALIDataType.UINT8,\n    layout="HW",'
                               '\n    device="cpu",\n    num_samples=2,\n'
                               '    shape=[(2, 3), (4, 3)])')
    assert repr(_dense()[0]) == ('TensorCPU(\n    dtype=DALIDataType.FLOAT,\n    layout="HW",\n'
                                 '    device="cpu",\n    shape=(2, 3))')
    assert str(_dense()[0]).startswith("TensorCPU(\n    [[0. 1. 2.]\n     [3. 4. 5.]],")


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


# -- samples as TensorCPU --------------------------------------------------------------------


def test_a_sample_is_a_tensorcpu_view_of_the_batch() -> None:
    tl = _dense()
    sample = tl[2]
    assert isinstance(sample, TensorCPU)
    assert (sample.shape(), sample.dtype, sample.layout(), sample.ndim()) == \
        ([2, 3], types.FLOAT, "HW", 2)
    assert np.shares_memory(np.asarray(sample), tl.as_array())
    assert sample.data_ptr() == tl.at(2).ctypes.data
    assert sample.as_cpu() is sample


def test_a_sample_carries_the_source_info_of_its_file() -> None:
    tl = TensorList([np.zeros(1, np.uint8)] * 2, source_info=["a.jpg", "b.jpg"])
    assert [t.source_info() for t in tl] == ["a.jpg", "b.jpg"]
    assert tl[1].get_property("source_info") == "b.jpg"
    assert _dense()[0].get_property("source_info") is None


def test_squeezing_a_sample_leaves_the_batch_alone() -> None:
    tl = TensorList(np.zeros((2, 1, 3), np.float32), layout="AB")
    sample = tl[0]
    assert sample.squeeze() and sample.shape() == [3] and sample.layout() == "B"
    assert tl.shape() == [(1, 3), (1, 3)] and tl[0].layout() == "AB"


def test_samples_go_through_numpy_and_dlpack_without_copies() -> None:
    tl = _ragged()
    sample = tl[1]
    assert np.shares_memory(np.asarray(sample), tl.at(1))
    assert np.shares_memory(np.from_dlpack(sample), tl.at(1))
    copied = np.array(sample)
    copied[0, 0] = 9
    assert tl.at(1)[0, 0] == 1, "np.array(sample) must not alias the batch"


def test_a_batch_from_another_batch_shares_its_samples_with_a_new_layout() -> None:
    tl = _dense()
    other = TensorListCPU(tl, "XY")
    assert other.layout() == "XY" and tl.layout() == "HW"
    assert np.shares_memory(other.as_array(), tl.as_array())
    assert TensorListCPU(tl).layout() == "HW"


def test_a_batch_of_samples_with_other_types_or_ranks_is_refused() -> None:
    with pytest.raises(TypeError, match="sample 1 has type int32, sample 0 has float64"):
        TensorListCPU([np.zeros(2), np.zeros(2, np.int32)])
    with pytest.raises(TypeError, match="sample 1 has 1 dimension"):
        TensorListCPU([np.zeros((2, 2)), np.zeros(2)])
    with pytest.raises(ValueError, match="layout 'XYZ' has 3 dimension"):
        TensorListCPU(np.zeros((2, 3, 3)), "XYZ")


def test_tensorlist_is_tensorlistcpu() -> None:
    assert TensorList is TensorListCPU
    assert _dense().as_cpu() is not None and isinstance(_dense(), TensorListCPU)


# -- GPU batches (torch tensors; CPU ones here) ------------------------------------------------


def test_gpu_batch_samples_are_tensorgpu_and_torch_at_gives_the_tensor() -> None:
    torch = pytest.importorskip("torch")
    from stoker.tensors import TensorGPU, TensorListGPU

    data = torch.arange(12, dtype=torch.float32).reshape(2, 2, 3)
    tl = TensorListGPU(data, layout="HW")
    sample = tl[1]
    assert isinstance(sample, TensorGPU) and isinstance(tl.at(1), TensorGPU)
    assert (sample.shape(), sample.dtype, sample.layout()) == ([2, 3], types.FLOAT, "HW")
    assert tl.torch_at(1).data_ptr() == data[1].data_ptr()
    assert sample.as_torch().data_ptr() == data[1].data_ptr()
    host = sample.as_cpu()
    assert isinstance(host, TensorCPU) and host.layout() == "HW"
    np.testing.assert_array_equal(np.asarray(host), data[1].numpy())
    whole = tl.as_tensor()
    assert isinstance(whole, TensorGPU) and whole.layout() == "NHW" and whole.shape() == [2, 2, 3]
    assert tl.as_torch() is data
    assert [type(t).__name__ for t in tl] == ["TensorGPU"] * 2


def test_gpu_batch_of_ragged_samples_refuses_one_tensor_as_dali() -> None:
    torch = pytest.importorskip("torch")
    from stoker.tensors import TensorListGPU

    tl = TensorListGPU([torch.zeros(2), torch.zeros(3)])
    assert not tl.is_dense_tensor() and tl.shape() == [(2,), (3,)]
    with pytest.raises(RuntimeError, match="different shapes"):
        tl.as_tensor()


def test_scalar_samples_are_0d_arrays_that_outlive_their_tensorcpu() -> None:
    # dense[i] of a 1-D batch is a numpy scalar, whose __array_interface__ lends a buffer
    # that dies with it: a sample must hold a 0-d view of the batch instead.
    tl = TensorList(np.array([3, 1, 4, 1], np.int32))
    values = [np.asarray(t) for t in tl]
    np.testing.assert_array_equal(np.stack(values), [3, 1, 4, 1])
    assert all(v.shape == () and np.shares_memory(v, tl.as_array()) for v in values)
    assert isinstance(tl.at(2), np.ndarray) and tl.at(2).shape == () and int(tl.at(2)) == 4
    ragged = TensorList([np.float32(2.5), np.float32(1.5)])
    assert [np.asarray(t).tolist() for t in ragged] == [2.5, 1.5]


def test_constructors_take_a_dlpack_capsule_without_a_copy() -> None:
    torch = pytest.importorskip("torch")
    data = torch.arange(6, dtype=torch.int16).reshape(3, 2)
    tl = TensorListCPU(data.__dlpack__(), "X")
    assert tl.shape() == [(2,)] * 3 and tl.dtype is types.INT16 and tl.layout() == "X"
    t = TensorCPU(data.__dlpack__(), "AB")
    assert t.data_ptr() == data.data_ptr() and t.shape() == [3, 2]
