"""reshape, reinterpret, transpose, expand_dims, squeeze against numpy and DALI 2.4.

Expected values marked "DALI" were measured by running the same calls in DALI 2.4 CPU
pipelines (rounding of rel_shape, layouts kept or dropped, src_dims order).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run, same

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

X = [np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.arange(100, 124, dtype=np.int32)
     .reshape(2, 3, 4)]
RAGGED = [np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(12, dtype=np.float32)
          .reshape(4, 3)]







# -- reshape ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,layout", [([6, -1], ""), ([3, 2, 4], "HWC"), ([-1], "")])
def test_reshape_matches_numpy_and_keeps_layout_only_for_same_ndim(shape, layout):
    out = run(lambda x: fn.reshape(x, shape=shape), X, layouts=["HWC"])
    same(out, [s.reshape(shape) for s in X])
    assert out.layout() == layout


@pytest.mark.parametrize("rel,want", [([0.5, -1], (1, 24)), ([0.75, -1], (2, 12)),
                                      ([1, 0.83, -1], (2, 2, 6)), ([1, 0.84, -1], (2, 3, 4)),
                                      ([-1, 1, 1], (2, 3, 4)), ([1, 1, 1, -1], (2, 3, 4, 1))])
def test_reshape_rel_shape_rounds_to_nearest_like_dali(rel, want):
    out = run(lambda x: fn.reshape(x, rel_shape=rel), X, layouts=["HWC"])
    same(out, [s.reshape(want) for s in X])
    assert out.layout() == ("HWC" if len(want) == 3 else "")


def test_reshape_src_dims_reorders_extents_not_data():
    out = run(lambda x: fn.reshape(x, src_dims=[-1, 2, 1, 0]), X, layouts=["HWC"])
    same(out, [s.reshape(1, 4, 3, 2) for s in X])  # DALI: [1, 4, 3, 2], data order kept
    assert out.layout() == ""
    out = run(lambda x: fn.reshape(x, src_dims=[2, 1, 0], rel_shape=[2, 1, 0.5]), X,
              layouts=["HWC"])
    same(out, [s.reshape(8, 3, 1) for s in X])
    assert out.layout() == "HWC"  # DALI keeps the layout when the ndim is unchanged


def test_reshape_shape_from_input_and_per_sample_argument():
    shapes = [np.array([4, 6], np.int64), np.array([24, 1], np.int64)]
    out = run(lambda x, s: fn.reshape(x, s), X, shapes)
    same(out, [X[0].reshape(4, 6), X[1].reshape(24, 1)])
    out = run(lambda x, s: fn.reshape(x, shape=s), X, shapes)
    same(out, [X[0].reshape(4, 6), X[1].reshape(24, 1)])
    rel = [np.array([2, 0.5, 1], np.float32), np.array([1, 1, 1], np.float32)]
    out = run(lambda x, r: fn.reshape(x, rel_shape=r), [s[:, :2] for s in X], rel)
    assert [o.shape for o in out] == [(4, 1, 4), (2, 2, 4)]


def test_reshape_ragged_batch_and_layout_argument():
    out = run(lambda x: fn.reshape(x, shape=[-1], layout="N"), RAGGED, layouts=["HW"])
    same(out, [s.reshape(-1) for s in RAGGED])
    assert out.layout() == "N"
    out = run(lambda x: fn.reshape(x, layout="AB"), RAGGED, layouts=["HW"])
    same(out, RAGGED)
    assert out.layout() == "AB"


def test_reshape_errors_name_rule_and_values():
    with pytest.raises(SampleError, match=r"fn\.reshape .*cannot reshape a sample of shape "
                                          r"\(2, 3, 4\) \(24 elements\) to \(5, 4\)"):
        run(lambda x: fn.reshape(x, shape=[5, 4]), X)
    with pytest.raises(ArgumentError, match="may have one negative"):
        run(lambda x: fn.reshape(x, shape=[-1, -1]), X)
    with pytest.raises(ArgumentError, match="must not contain 0"):
        run(lambda x: fn.reshape(x, shape=[0, -1]), X)
    with pytest.raises(ArgumentError, match="'shape' and 'rel_shape' are mutually exclusive"):
        run(lambda x: fn.reshape(x, shape=[24], rel_shape=[1.0]), X)
    with pytest.raises(ArgumentError, match="a shape input and the arguments"):
        run(lambda x, s: fn.reshape(x, s, shape=[24]), X, [np.array([24], np.int32)] * 2)
    with pytest.raises(ArgumentError, match="fn.reshape: nothing to do"):
        run(lambda x: fn.reshape(x), X)
    with pytest.raises(ArgumentError, match="'layout' 'ABC' does not fit the 2-D output"):
        run(lambda x: fn.reshape(x, shape=[6, 4], layout="ABC"), X)
    with pytest.raises(SampleError, match="more than the 3 dimensions"):
        run(lambda x: fn.reshape(x, rel_shape=[1, 1, 1, 1]), X)
    with pytest.raises(SampleError, match="'src_dims' entry 3 is out of range"):
        run(lambda x: fn.reshape(x, src_dims=[3, 0]), X)
    with pytest.raises(SampleError, match="the shape input must hold integers, got float32"):
        run(lambda x, s: fn.reshape(x, s), X, [np.array([24.0], np.float32)] * 2)


def test_reshape_per_sample_shape_must_fit_the_kept_layout():
    # The new ndim is unknown when the graph is built, so the input's layout is kept and
    # checked per sample (DALI 2.4 fails here too, less clearly).
    shapes = [np.array([6, 4], np.int32)] * 2
    with pytest.raises(SampleError, match="output is 2-D but its layout 'HWC' has 3 letters; "
                                          "pass layout="):
        run(lambda x, s: fn.reshape(x, s), X, shapes, layouts=["HWC", None])
    out = run(lambda x, s: fn.reshape(x, s, layout=""), X, shapes, layouts=["HWC", None])
    assert out.layout() == "" and out[0].shape == (6, 4)


# -- reinterpret ------------------------------------------------------------------------------

def test_reinterpret_views_bytes_like_numpy():
    u8 = [np.arange(8, dtype=np.uint8).reshape(2, 4)] * 2
    out = run(lambda x: fn.reinterpret(x, dtype=types.INT32), u8, layouts=["HW"])
    same(out, [s.view(np.int32) for s in u8])
    assert out.layout() == "HW" and out[0].tolist() == [[50462976], [117835012]]  # DALI
    out = run(lambda x: fn.reinterpret(x, dtype=types.INT16, shape=[-1]), u8, layouts=["HW"])
    same(out, [s.reshape(-1).view(np.int16) for s in u8])
    assert out.layout() == ""
    with pytest.raises(SampleError, match=r"innermost dimension \(4 x 1 bytes\) is not a "
                                          "multiple of the 8-byte output type"):
        run(lambda x: fn.reinterpret(x, dtype=types.INT64), u8)


# -- transpose --------------------------------------------------------------------------------

@pytest.mark.parametrize("samples", [X, [np.ones((2, 3, 4), np.uint8), np.ones((5, 1, 2),
                                                                                np.uint8)]])
def test_transpose_matches_numpy_and_permutes_layout(samples):
    out = run(lambda x: fn.transpose(x, perm=[2, 0, 1]), samples, layouts=["HWC"])
    same(out, [np.transpose(s, (2, 0, 1)) for s in samples])
    assert out.layout() == "CHW"
    out = run(lambda x: fn.transpose(x), samples, layouts=["HWC"])
    same(out, [np.transpose(s) for s in samples])
    assert out.layout() == "CWH"


def test_transpose_layout_options():
    keep = run(lambda x: fn.transpose(x, perm=[2, 0, 1], transpose_layout=False), X,
               layouts=["HWC"])
    assert keep.layout() == "HWC"
    named = run(lambda x: fn.transpose(x, perm=[2, 0, 1], output_layout="ABC"), X,
                layouts=["HWC"])
    assert named.layout() == "ABC"
    assert run(lambda x: fn.transpose(x, perm=[1, 0, 2]), X).layout() == ""


def test_transpose_errors():
    with pytest.raises(ArgumentError, match=r"'perm' must be a permutation of 0\.\.2, got "
                                            r"\[2, 0, 0\]"):
        run(lambda x: fn.transpose(x, perm=[2, 0, 0]), X)
    with pytest.raises(ArgumentError, match="has 2 entries, but the input layout 'HWC' has 3"):
        run(lambda x: fn.transpose(x, perm=[1, 0]), X, layouts=["HWC"])
    with pytest.raises(SampleError, match=r"'perm' \[1, 0\] has 2 entries, but the sample "
                                          r"\(2, 3, 4\) has 3 dimensions"):
        run(lambda x: fn.transpose(x, perm=[1, 0]), X)


# -- expand_dims, squeeze ---------------------------------------------------------------------

def test_expand_dims_inserts_at_output_positions_with_names():
    out = run(lambda x: fn.expand_dims(x, axes=[0, 4], new_axis_names="NX"), X,
              layouts=["HWC"])
    same(out, [s.reshape(1, 2, 3, 4, 1) for s in X])
    assert out.layout() == "NHWCX"
    out = run(lambda x: fn.expand_dims(x, axes=[3, 0], new_axis_names="XY"), X,
              layouts=["HWC"])
    same(out, [s.reshape(1, 2, 3, 1, 4) for s in X])
    assert out.layout() == "YHWXC"  # DALI: names pair with 'axes' in the order given
    assert run(lambda x: fn.expand_dims(x, axes=[1]), X, layouts=["HWC"]).layout() == ""
    scalars = [np.array(1.5, np.float32)] * 2
    out = run(lambda x: fn.expand_dims(x, axes=[0], new_axis_names="X"), scalars)
    assert out.layout() == "X" and out[0].shape == (1,)


def test_expand_dims_errors():
    with pytest.raises(ArgumentError, match="names an axis twice"):
        run(lambda x: fn.expand_dims(x, axes=[0, 0]), X)
    with pytest.raises(ArgumentError, match="one letter per entry of 'axes'"):
        run(lambda x: fn.expand_dims(x, axes=[0, 1], new_axis_names="X"), X)
    with pytest.raises(ArgumentError, match="'axes' must be in"):
        run(lambda x: fn.expand_dims(x, axes=[-1]), X)
    with pytest.raises(SampleError, match="'axes' entry 4 is out of range: a 3-D sample with "
                                          "1 new axes has 4 dimensions"):
        run(lambda x: fn.expand_dims(x, axes=[4]), X)
    with pytest.raises(SampleError, match="'new_axis_names' needs an input with a layout"):
        run(lambda x: fn.expand_dims(x, axes=[0], new_axis_names="N"), X)


def test_squeeze_by_index_name_and_negative_index():
    y = [np.arange(6, dtype=np.uint8).reshape(1, 3, 1, 2)] * 2
    for build in (lambda x: fn.squeeze(x, axes=[0, 2]),
                  lambda x: fn.squeeze(x, axis_names="NW")):
        out = run(build, y, layouts=["NHWC"])
        same(out, [s.reshape(3, 2) for s in y])
        assert out.layout() == "HC"
    # Negative indices count from the back (DALI 2.4 silently ignores them).
    out = run(lambda x: fn.squeeze(x, axes=[-2]), y, layouts=["NHWC"])
    assert out.layout() == "NHC" and out[0].shape == (1, 3, 2)
    empty = run(lambda x: fn.squeeze(x, axes=[1]), [np.zeros((0, 3, 1), np.uint8)],
                layouts=["HWC"])
    assert empty.layout() == "HC" and empty[0].shape == (0, 1)  # DALI: volume 0 stays 0


def test_squeeze_per_sample_axes():
    y = [np.zeros((1, 3), np.float32), np.zeros((3, 1), np.float32)]
    axes = [np.array([0], np.int32), np.array([1], np.int32)]
    out = run(lambda x, a: fn.squeeze(x, axes=a), y, axes)
    assert [o.shape for o in out] == [(3,), (3,)] and out.layout() == ""


def test_squeeze_errors():
    y = [np.zeros((1, 3, 1, 2), np.uint8)]
    with pytest.raises(ArgumentError, match="exactly one of 'axes' and 'axis_names'"):
        run(lambda x: fn.squeeze(x), y)
    with pytest.raises(ArgumentError, match="exactly one of 'axes' and 'axis_names'"):
        run(lambda x: fn.squeeze(x, axes=[0], axis_names="W"), y, layouts=["NHWC"])
    with pytest.raises(ArgumentError, match="axis 'D' of 'axis_names' is not in the input "
                                            "layout 'NHWC'"):
        run(lambda x: fn.squeeze(x, axis_names="D"), y, layouts=["NHWC"])
    with pytest.raises(ArgumentError, match="names an axis twice"):
        run(lambda x: fn.squeeze(x, axes=[0, 0]), y)
    with pytest.raises(SampleError, match=r"cannot squeeze axis 1 of extent 3 \(sample shape "
                                          r"\(1, 3, 1, 2\)\)"):
        run(lambda x: fn.squeeze(x, axes=[1]), y)
    with pytest.raises(SampleError, match="'axes' 4 is out of range for 4-D samples"):
        run(lambda x: fn.squeeze(x, axes=[4]), y)
