"""fn.slice against numpy slicing and values measured in DALI 2.4 CPU pipelines.

DALI facts pinned here: the arguments list axes as (W, H) by default; relative and float
coordinates round half away from zero, the end as round(start + shape); out-of-bounds
policies map to numpy's pad modes (reflect_1001 = 'symmetric', reflect_101 = 'reflect').
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run, same

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

IMG = [np.arange(48, dtype=np.uint8).reshape(4, 6, 2), np.arange(64, dtype=np.uint8)
       .reshape(8, 4, 2)]
V = [np.arange(10, dtype=np.float32)]
ROW = [np.arange(5, dtype=np.int32)]







@pytest.mark.parametrize("kwargs,windows", [
    ({"rel_start": [0.5, 0.25], "rel_shape": [0.5, 0.5]},
     [np.s_[1:3, 3:6], np.s_[2:6, 2:4]]),
    ({"start": [1, 2], "shape": [2, 2]}, [np.s_[2:4, 1:3]] * 2),
    ({"start": [1, 2], "end": [3, 4]}, [np.s_[2:4, 1:3]] * 2),
    ({"start": [1, 2], "rel_end": [0.5, 0.5]}, [np.s_[2:2, 1:3], np.s_[2:4, 1:2]]),
    ({"start": [1, 2]}, [np.s_[2:, 1:]] * 2),
    ({"shape": [2, 2]}, [np.s_[:2, :2]] * 2),
    ({"rel_start": [0.3, 0.3], "rel_shape": [0.3, 0.3]}, [np.s_[1:2, 2:4], np.s_[2:5, 1:2]]),
    ({"rel_start": [0.1, 0.1], "rel_end": [0.62, 0.62]}, [np.s_[0:2, 1:4], np.s_[1:5, 0:2]]),
    ({"start": [1], "shape": [2], "axes": [0]}, [np.s_[1:3]] * 2),
    ({"start": [1], "shape": [1], "axis_names": "C"}, [np.s_[:, :, 1:2]] * 2),
    ({"start": [1], "shape": [1], "axes": [-1]}, [np.s_[:, :, 1:2]] * 2),
])
def test_slice_windows_match_dali(kwargs, windows):
    out = run(lambda x: fn.slice(x, **kwargs), IMG, layouts=["HWC"])
    same(out, [img[w] for img, w in zip(IMG, windows, strict=True)])
    assert out.layout() == "HWC"


@pytest.mark.parametrize("kwargs,want", [
    ({"rel_start": [0.15], "rel_shape": [0.1]}, [2.0]),
    ({"rel_start": [0.25], "rel_shape": [0.1]}, [3.0]),
    ({"rel_start": [0.0], "rel_end": [0.35]}, [0.0, 1.0, 2.0, 3.0]),  # float32: 0.35 * 10 = 3.5
    ({"rel_start": [0.0], "rel_end": [0.45]}, [0.0, 1.0, 2.0, 3.0, 4.0]),
])
def test_slice_relative_coordinates_round_half_away(kwargs, want):
    assert run(lambda x: fn.slice(x, axes=[0], **kwargs), V)[0].tolist() == want


@pytest.mark.parametrize("anchor,shape,normalized,want", [
    ([1.5], [2.5], False, [2.0, 3.0]), ([2.5], [2.0], False, [3.0, 4.0]),
    ([1.4], [2.4], False, [1.0, 2.0, 3.0]), ([0.15], [0.1], True, [2.0]),
    ([0.14], [0.12], True, [1.0, 2.0]),
])
def test_slice_float_anchor_and_shape_inputs(anchor, shape, normalized, want):
    a, s = [np.array(anchor, np.float32)], [np.array(shape, np.float32)]
    out = run(lambda x, a_, s_: fn.slice(x, a_, s_, axes=[0], normalized_anchor=normalized,
                                         normalized_shape=normalized), V, a, s)
    assert out[0].tolist() == want


def test_slice_integer_and_per_sample_inputs():
    anchors = [np.array([1, 2], np.int32), np.array([0, 1], np.int32)]
    shapes = [np.array([2, 2], np.int32), np.array([3, 1], np.int32)]
    out = run(lambda x, a, s: fn.slice(x, a, s), IMG, anchors, shapes, layouts=["HWC", None, None])
    same(out, [IMG[0][2:4, 1:3], IMG[1][1:2, 0:3]])
    out = run(lambda x, a: fn.slice(x, start=a, shape=[2, 2]), IMG, anchors)
    same(out, [IMG[0][2:4, 1:3], IMG[1][1:3, 0:2]])
    mixed = run(lambda x, a, s: fn.slice(x, a, s, normalized_anchor=False),
                IMG, [np.array([1.0, 2.0], np.float32)] * 2, [np.array([0.5, 0.5], np.float32)] * 2)
    same(mixed, [IMG[0][2:4, 1:4], IMG[1][2:6, 1:3]])


def test_slice_default_axes_follow_the_layout():
    chw = run(lambda x: fn.slice(x, start=[1, 2], shape=[1, 1]), IMG, layouts=["CHW"])
    same(chw, [img[:, 2:3, 1:2] for img in IMG])  # W = axis 2, H = axis 1
    # An explicit axes=[1, 0] is honoured over the layout.
    explicit = run(lambda x: fn.slice(x, start=[1, 2], shape=[1, 1], axes=[1, 0]), IMG,
                   layouts=["CHW"])
    same(explicit, [img[2:3, 1:2] for img in IMG])
    # Without a W and H in the layout the indices [1, 0] are used (DALI 2.4 raises instead).
    same(run(lambda x: fn.slice(x, start=[1, 2], shape=[2, 2]), IMG, layouts=["XYZ"]),
         [img[2:4, 1:3] for img in IMG])


def test_slice_out_of_bounds_pad_and_trim():
    pad = run(lambda x: fn.slice(x, start=[3, -1], shape=[3, 3], out_of_bounds_policy="pad",
                                 fill_values=[7, 8]), IMG, layouts=["HWC"])
    want0 = np.empty((3, 3, 2), np.uint8)
    want0[...] = [7, 8]
    want0[1:, :] = IMG[0][0:2, 3:6]
    same(pad[:1], [want0])
    assert pad[1][2].tolist() == [[14, 15], [7, 8], [7, 8]]  # DALI
    trim = run(lambda x: fn.slice(x, start=[3, -1], shape=[3, 3],
                                  out_of_bounds_policy="trim_to_shape"), IMG, layouts=["HWC"])
    same(trim, [IMG[0][0:2, 3:6], IMG[1][0:2, 3:4]])
    far = run(lambda x: fn.slice(x, start=[-30], shape=[10], axes=[0],
                                 out_of_bounds_policy="trim_to_shape"), ROW)
    assert far[0].shape == (0,)


@pytest.mark.parametrize("policy,start,size,want", [
    ("reflect", -3, 10, [2, 1, 0, 0, 1, 2, 3, 4, 4, 3]),
    ("reflect_101", -3, 10, [3, 2, 1, 0, 1, 2, 3, 4, 3, 2]),
    ("wrap", -3, 12, [2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3]),
    ("reflect", -8, 20, [2, 3, 4, 4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 0, 1]),
    ("reflect_101", -8, 20, [0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3]),
    ("clamp", -3, 10, [0, 0, 0, 0, 1, 2, 3, 4, 4, 4]),
    ("edge", -3, 10, [0, 0, 0, 0, 1, 2, 3, 4, 4, 4]),
    ("constant", -3, 10, [0, 0, 0, 0, 1, 2, 3, 4, 0, 0]),
])
def test_slice_border_policies_match_dali(policy, start, size, want):
    out = run(lambda x: fn.slice(x, start=[start], shape=[size], axes=[0],
                                 out_of_bounds_policy=policy), ROW)
    assert out[0].tolist() == want


def test_slice_dtype_saturates_and_fill_casts_like_dali():
    f = [np.array([[0.4, 1.5, 2.5, -3.0, 300.7]], np.float32)]
    out = run(lambda x: fn.slice(x, start=[0], shape=[5], axes=[1], dtype=types.UINT8), f)
    assert out[0].dtype == np.uint8 and out[0].tolist() == [[0, 1, 2, 0, 255]]
    u8 = [np.ones(2, np.uint8)]
    for fill, want in ((-1.0, 255), (300.6, 44)):
        out = run(lambda x, f_=fill: fn.slice(x, start=[0], shape=[4], axes=[0],
                                              out_of_bounds_policy="pad", fill_values=[f_]), u8)
        assert out[0].tolist() == [1, 1, want, want]
    half = run(lambda x: fn.slice(x, start=[0], shape=[1], axes=[0], dtype=types.FLOAT16), IMG)
    assert half[0].dtype == np.float16 and half[0].shape == (1, 6, 2)


def test_slice_errors_at_definition_or_build():
    # Arguments that exclude each other fail the build, as in DALI, in DALI's words.
    cases = [
        ({"start": [1, 1], "rel_start": [0.1, 0.1], "shape": [1, 1]},
         '"start" and "rel_start" arguments are mutually exclusive'),
        ({"start": [1, 1], "end": [3, 3], "shape": [1, 1]},
         "'end', 'shape' given: \"end\", \"rel_end\", \"shape\", and \"rel_shape\" "
         "arguments are mutually exclusive"),
        ({"start": [1], "shape": [1], "axes": [2], "axis_names": "H"},
         '"axes" and "axis_names" are mutually exclusive'),
        ({}, "nothing to slice"),
        ({"start": [1], "out_of_bounds_policy": "bogus"}, "'out_of_bounds_policy' must be one of"),
        ({"start": [1], "axis_names": "D"}, "axis 'D' of 'axis_names' is not in the input layout"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ArgumentError, match=message):
            run(lambda x, kw=kwargs: fn.slice(x, **kw), IMG, layouts=["HWC"])
    ints = [np.array([1, 2], np.int32)]
    with pytest.raises(ArgumentError, match="give both the anchor and the shape inputs"):
        run(lambda x, a: fn.slice(x, a), IMG[:1], ints)
    with pytest.raises(ArgumentError, match="mutually exclusive"):
        run(lambda x, a, s: fn.slice(x, a, s, start=[1, 1]), IMG[:1], ints, ints)


def test_slice_errors_at_run_time_name_the_window():
    with pytest.raises(SampleError, match=r"fn\.slice .*slice window \[2:4, 5:7, 0:2\] is "
                                          r"outside the sample of shape \(4, 6, 2\); use "
                                          "out_of_bounds_policy='pad'"):
        run(lambda x: fn.slice(x, start=[5, 2], shape=[2, 2]), IMG)
    with pytest.raises(SampleError, match="slice end 1 on axis 1 is before its start 3"):
        run(lambda x: fn.slice(x, start=[3, 3], end=[1, 1]), IMG)
    with pytest.raises(SampleError, match="slice shape -1 on axis 1 is negative"):
        run(lambda x: fn.slice(x, start=[1, 1], shape=[-1, 2]), IMG)
    with pytest.raises(SampleError, match="'start' has 3 values for 2 sliced axes"):
        run(lambda x: fn.slice(x, start=[1, 1, 1], shape=[1]), IMG)
    with pytest.raises(SampleError, match=r"'axes' \[0, 0\]: Axis index 0 occurs more than "
                                          "once"):
        run(lambda x: fn.slice(x, start=[1, 1], shape=[1, 1], axes=[0, 0]), IMG)
    with pytest.raises(SampleError, match=r"Axis 3 out of range\. Expected range is \[-3, 2\] "
                                          "for a 3D input"):
        run(lambda x: fn.slice(x, start=[1], shape=[1], axes=[3]), IMG)
    with pytest.raises(SampleError, match="'fill_values' has 3 values but the output has 2 "
                                          r"channels \(axis 2\)"):
        run(lambda x: fn.slice(x, start=[3, -1], shape=[3, 3], out_of_bounds_policy="pad",
                               fill_values=[7, 8, 9]), IMG, layouts=["HWC"])
    with pytest.raises(SampleError, match="must both be integers or both floats, got int32 "
                                          "and float32"):
        run(lambda x, a, s: fn.slice(x, a, s), IMG[:1], [np.array([1, 2], np.int32)],
            [np.array([0.5, 0.5], np.float32)])
