"""fn.readers.numpy: arrays and regions of interest against numpy's own loading and
slicing, per-sample region arguments, byte orders, Fortran order, big files (mapped), and
bad files (named, or skipped under on_error="skip").

DALI's outcomes on the shared cases are replayed in test_numpy_vs_dali.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker import Pipeline, SampleError, fn, ops, pipeline_def
from stoker.readers import DatasetError
from stoker.readers.npy import READ_WHOLE


def read(batch_size=1, iterations=1, skip=False, **kw):
    pipe = Pipeline(batch_size=batch_size, num_threads=2, device_id=None, seed=3,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        pipe.set_outputs(fn.readers.numpy(name="R", **kw))
    pipe.build()
    out = []
    for _ in range(iterations):
        (tl,) = pipe.run()
        out += [np.array(tl.at(i)) for i in range(len(tl))]
    pipe.close()
    return out, pipe


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
       data=st.data(), fortran=st.booleans(), dtype=st.sampled_from(["<i2", ">f4", "<u8",
                                                                     "|b1", "<c8"]))
def test_regions_equal_numpy_slicing(tmp_path_factory, shape, data, fortran, dtype):
    arr = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    if fortran:
        arr = np.asfortranarray(arr)
    path = str(tmp_path_factory.mktemp("roi") / "a.npy")
    np.save(path, arr)
    axes = data.draw(st.permutations(range(len(shape))))[:data.draw(
        st.integers(1, len(shape)))]
    start = [data.draw(st.integers(-2, shape[a])) for a in axes]
    size = [data.draw(st.integers(0, shape[a] + 2)) for a in axes]
    policy = data.draw(st.sampled_from(["pad", "trim_to_shape", "error"]))
    lo, hi = [0] * len(shape), list(shape)
    for a, s, n in zip(axes, start, size, strict=True):
        lo[a], hi[a] = s, s + n
    inside = all(0 <= a and b <= e for a, b, e in zip(lo, hi, shape, strict=True))
    kw = dict(files=[path], roi_start=start, roi_shape=size, roi_axes=list(axes),
              out_of_bounds_policy=policy, fill_value=3.0)
    if policy == "error" and not inside:
        with pytest.raises(SampleError, match="Slice can't be placed out of bounds"):
            read(**kw)
        return
    (got,), _ = read(**kw)
    want_dtype = np.dtype(dtype).newbyteorder("=")
    if policy == "trim_to_shape":
        lo = [min(max(v, 0), e) for v, e in zip(lo, shape, strict=True)]
        hi = [min(max(v, a), e) for v, a, e in zip(hi, lo, shape, strict=True)]
    padded = np.full([b - a for a, b in zip(lo, hi, strict=True)], 3, want_dtype)
    src = tuple(slice(max(a, 0), min(b, e)) for a, b, e in zip(lo, hi, shape, strict=True))
    dst = tuple(slice(max(a, 0) - a, min(b, e) - a) for a, b, e in zip(lo, hi, shape,
                                                                         strict=True))
    if all(s.stop > s.start for s in src):
        padded[dst] = arr[src]
    assert got.dtype == want_dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, padded)


def test_per_sample_regions_from_other_operators(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(10, dtype=np.int32))
    starts = [np.array([1], np.int32), np.array([4], np.int32), np.array([6], np.int32)]
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=None)
    with pipe:
        start = fn.external_source(source=lambda: starts)
        pipe.set_outputs(fn.readers.numpy(files=[str(tmp_path / "a.npy")] * 3,
                                          roi_start=start, rel_roi_shape=[0.2]))
    pipe.build()
    (tl,) = pipe.run()
    assert [tl.at(i).tolist() for i in range(3)] == [[1, 2], [4, 5], [6, 7]]


def test_whole_arrays_big_endian_0d_and_big_files_mapped(tmp_path):
    big = np.arange(READ_WHOLE, dtype=np.float64).reshape(-1, 16)  # mapped, not read
    arrays = {"be.npy": np.arange(6, dtype=">i4").reshape(2, 3),
              "s.npy": np.array(7.5), "big.npy": big,
              "f.npy": np.asfortranarray(np.arange(12, dtype="<u2").reshape(3, 4))}
    for name, a in arrays.items():
        np.save(tmp_path / name, a)
    for name, a in arrays.items():
        for mmap in (True, False):
            (got,), _ = read(files=[str(tmp_path / name)], dont_use_mmap=not mmap)
            assert got.dtype == a.dtype.newbyteorder("=") and got.shape == a.shape
            np.testing.assert_array_equal(got, a)
            got[...] = 0  # outputs are writable; the file keeps its values
        assert np.array_equal(np.load(tmp_path / name), a)


@pytest.mark.parametrize("content, words", [
    (b"not numpy at all", "is not a .npy file"),
    (b"\x93NUMPY\x01\x00\x10\x00{garbage      }\n", "malformed .npy header at offset 10"),
    (b"\x93NUMPY\x09\x00\x10\x00", "format version 9.0 is not supported"),
    (b"\x93NUMPY\x01\x00\xff\x00{'descr'", "the file ends inside its .npy header"),
])
def test_bad_files_are_named_or_skipped(tmp_path, content, words):
    np.save(tmp_path / "good.npy", np.arange(3, dtype=np.int64))
    (tmp_path / "bad.npy").write_bytes(content)
    files = [str(tmp_path / "good.npy"), str(tmp_path / "bad.npy")]
    with pytest.raises(SampleError, match=words) as e:
        read(files=files, batch_size=2)
    assert "bad.npy" in str(e.value)
    got, pipe = read(files=files, batch_size=2, skip=True)
    assert [g.tolist() for g in got] == [[0, 1, 2]]
    (where, why), = pipe.skipped_samples()
    assert where.endswith("bad.npy") and words in why


def test_truncated_data_and_object_arrays_are_refused(tmp_path):
    np.save(tmp_path / "t.npy", np.arange(100, dtype=np.int64))
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-8])
    with pytest.raises(SampleError, match=r"needs 800 bytes of data from offset \d+, the "
                                          "file has 792 .is it truncated"):
        read(files=[str(tmp_path / "t.npy")])
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(SampleError, match="arrays of dtype object are not supported"):
        read(files=[str(tmp_path / "o.npy")])


def test_listing_errors_and_the_legacy_class(tmp_path):
    with pytest.raises(DatasetError, match="no file matching file_filter='\\*.npy'"):
        read(file_root=str(tmp_path))
    with pytest.raises(DatasetError, match="file_root '.*nope' does not exist"):
        read(file_root=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="through 'files' or 'file_list', not both"):
        fn.readers.numpy(files=["a"], file_list="b")
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.uint8))
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(ops.readers.Numpy(file_root=str(tmp_path), roi_start=[1],
                                           roi_end=[3])())
    pipe.build()
    assert pipe.run()[0].at(0).tolist() == [1, 2]


@pytest.mark.parametrize("kw, window", [
    ({"roi_start": 2}, np.s_[2:, 2:]),                      # one value: every axis (DALI)
    ({"roi_start": 2, "roi_end": 5}, np.s_[2:5, 2:5]),
    ({"rel_roi_start": 0.5}, np.s_[3:, 5:]),
    ({"roi_shape": 3}, np.s_[0:3, 0:3]),
    ({"roi_start": 2, "roi_axes": [1]}, np.s_[:, 2:]),
])
def test_one_roi_value_applies_to_every_axis(tmp_path, kw, window):
    # DALI 2.4's outputs for these calls on a 6 x 10 array were the same windows (run once).
    a = np.arange(60).reshape(6, 10)
    np.save(tmp_path / "a.npy", a)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.numpy(file_root=str(tmp_path), **kw)

    p = pipe()
    p.build()
    np.testing.assert_array_equal(np.array(p.run()[0][0]), a[window])
