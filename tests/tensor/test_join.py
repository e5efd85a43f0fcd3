"""cat, stack and pad against numpy and values measured in DALI 2.4 CPU pipelines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run, same

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

A = [np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(1, 4)]
B = [np.arange(6, dtype=np.int32).reshape(2, 3) + 10, np.arange(8, dtype=np.int32)
     .reshape(2, 4) + 10]
SQ = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]







# -- cat --------------------------------------------------------------------------------------

def test_cat_matches_numpy_on_ragged_and_dense_batches():
    same(run(lambda a, b: fn.cat(a, b), A, B),
         [np.concatenate(p) for p in zip(A, B, strict=True)])
    for axis in (1, -1):
        same(run(lambda a, b, c, axis=axis: fn.cat(a, b, c, axis=axis), SQ, SQ, SQ),
             [np.concatenate([s] * 3, axis=axis) for s in SQ])


def test_cat_axis_name_and_layout_of_first_input():
    out = run(lambda a, b: fn.cat(a, b, axis_name="W"), SQ, SQ, layouts=["HW", None])
    same(out, [np.concatenate([s, s], axis=1) for s in SQ])
    assert out.layout() == "HW"
    # DALI takes the first input's layout, even when another input has a different one.
    assert run(lambda a, b: fn.cat(a, b), SQ, SQ, layouts=["HW", "AB"]).layout() == "HW"
    assert run(lambda a, b: fn.cat(a, b), SQ, SQ, layouts=[None, "AB"]).layout() == ""


def test_cat_errors():
    with pytest.raises(SampleError, match=r"input 1 has shape \(2, 4\) and input 0 has "
                                          r"\(1, 4\); they may differ only in axis 1"):
        run(lambda a, b: fn.cat(a, b, axis=1), A, B)
    with pytest.raises(SampleError, match="same type and number of dimensions; input 0 is "
                                          "int32 2-D, input 1 is float32 2-D"):
        run(lambda a, b: fn.cat(a, b), A, [s.astype(np.float32) for s in A])
    with pytest.raises(SampleError, match=r"'axis' 2 is out of range for 2-D samples "
                                          r"\(valid: -2\.\.1\)"):
        run(lambda a, b: fn.cat(a, b, axis=2), A, B)
    with pytest.raises(SampleError, match="cannot concatenate scalars"):
        run(lambda a, b: fn.cat(a, b), [np.array(1, np.int32)], [np.array(2, np.int32)])
    with pytest.raises(ArgumentError, match="'axis' and 'axis_name' are mutually exclusive"):
        run(lambda a, b: fn.cat(a, b, axis=1, axis_name="W"), SQ, SQ, layouts=["HW", "HW"])
    with pytest.raises(ArgumentError, match="axis 'W' of 'axis_name' is not in the first "
                                            "input's layout ''"):
        run(lambda a, b: fn.cat(a, b, axis_name="W"), SQ, SQ, layouts=[None, "HW"])


# -- stack ------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,np_axis", [(0, 0), (1, 1), (2, 2), (-1, 2), (-2, 1)])
def test_stack_matches_numpy(axis, np_axis):
    same(run(lambda a, b: fn.stack(a, b, axis=axis), B, B),
         [np.stack([s, s], axis=np_axis) for s in B])


def test_stack_layout_from_axis_name():
    out = run(lambda a, b: fn.stack(a, b, axis=1, axis_name="C"), SQ, SQ, layouts=["HW", "HW"])
    assert out.layout() == "HCW"
    assert run(lambda a, b: fn.stack(a, b), SQ, SQ, layouts=["HW", "HW"]).layout() == ""
    scalars = run(lambda a, b: fn.stack(a, b, axis_name="K"), [np.array(1, np.int32)],
                  [np.array(2, np.int32)])
    assert scalars.layout() == "K" and scalars[0].tolist() == [1, 2]


def test_stack_errors():
    with pytest.raises(SampleError, match=r"input 1 has shape \(2, 4\) and input 0 has "
                                          r"\(1, 4\); stacked tensors must have equal shapes"):
        run(lambda a, b: fn.stack(a, b), A, B)
    with pytest.raises(SampleError, match=r"'axis' 3 is out of range for 2-D samples "
                                          r"\(valid: -2\.\.2\)"):
        run(lambda a, b: fn.stack(a, b, axis=3), SQ, SQ)
    with pytest.raises(ArgumentError, match="'axis_name' must be one letter, got 'CC'"):
        run(lambda a, b: fn.stack(a, b, axis_name="CC"), SQ, SQ)
    with pytest.raises(SampleError, match="'axis_name' needs inputs with a layout"):
        run(lambda a, b: fn.stack(a, b, axis_name="C"), SQ, SQ)


# -- pad ----------------------------------------------------------------------------------------

V = [np.array([3, 4, 2, 5, 4], np.int32), np.array([2, 2], np.int32),
     np.array([3, 199, 5], np.int32)]


def _padded(rows, fill, dtype=np.int32):
    width = max(len(r) for r in rows)
    return [np.array(list(r) + [fill] * (width - len(r)), dtype) for r in rows]


@pytest.mark.parametrize("kwargs,want", [
    ({}, _padded([[3, 4, 2, 5, 4], [2, 2], [3, 199, 5]], -1)),
    ({"axes": (0,), "shape": (7,)}, _padded([[3, 4, 2, 5, 4, -1, -1], [2, 2], [3, 199, 5]], -1)),
    ({"axes": (0,), "align": (4,)}, _padded([[3, 4, 2, 5, 4, -1, -1, -1], [2], [3]], -1)),
    ({"axes": (0,), "shape": (1,), "align": (2,)},
     [np.array(r, np.int32) for r in ([3, 4, 2, 5, 4, -1], [2, 2], [3, 199, 5, -1])]),
])
def test_pad_1d_like_dali(kwargs, want):
    if kwargs.get("align") == (4,):
        want = [np.concatenate([v, np.full(8 - len(v), -1, np.int32)]) for v in V]
    if kwargs.get("shape") == (7,):
        want = [np.concatenate([v, np.full(7 - len(v), -1, np.int32)]) for v in V]
    same(run(lambda x: fn.pad(x, fill_value=-1, **kwargs), V), want)


def test_pad_2d_axes_align_and_minimum_shape_like_dali():
    a = [np.arange(1, 13, dtype=np.int32).reshape(3, 4), np.array([[1, 2], [4, 5]], np.int32)]
    out = run(lambda x: fn.pad(x, axes=(0, 1), align=(4, 5)), a)
    same(out, [np.pad(a[0], ((0, 1), (0, 1))), np.pad(a[1], ((0, 2), (0, 3)))])
    b = [np.arange(1, 7, dtype=np.int32).reshape(2, 3), np.array([[1, 2], [4, 5], [6, 7]],
                                                                 np.int32)]
    out = run(lambda x: fn.pad(x, axes=(0, 1), align=(1, 2), shape=(4, -1)), b)
    same(out, [np.pad(b[0], ((0, 2), (0, 1))), np.pad(b[1], ((0, 1), (0, 2)))])
    out = run(lambda x: fn.pad(x, axis_names="W", fill_value=42), a, layouts=["HW"])
    same(out, [a[0], np.pad(a[1], ((0, 0), (0, 2)), constant_values=42)])
    assert out.layout() == "HW"


def test_pad_dense_batch_with_per_sample_fill_and_shape():
    dense = [np.ones((2, 3), np.float32), np.ones((2, 3), np.float32) * 2]
    fill = [np.array(5.0, np.float32), np.array(-5.0, np.float32)]
    out = run(lambda x, f: fn.pad(x, fill_value=f, shape=[4, -1]), dense, fill)
    same(out, [np.pad(dense[0], ((0, 2), (0, 0)), constant_values=5),
               np.pad(dense[1], ((0, 2), (0, 0)), constant_values=-5)])
    shapes = [np.array([3], np.int32), np.array([5], np.int32)]
    out = run(lambda x, s: fn.pad(x, axes=[0], shape=s), dense, shapes)
    assert [o.shape for o in out] == [(3, 3), (5, 3)]
    same(run(lambda x: fn.pad(x), dense), dense)  # nothing to pad


def test_pad_fill_value_converts_like_a_c_cast():
    # DALI 2.4: -1 -> 255 and 300 -> 44 for uint8 (wrapping), 2.7 -> 2 for int32.
    u8 = [np.array([1, 2, 3], np.uint8), np.array([1], np.uint8)]
    assert run(lambda x: fn.pad(x, fill_value=-1), u8)[1].tolist() == [1, 255, 255]
    assert run(lambda x: fn.pad(x, fill_value=300), u8)[1].tolist() == [1, 44, 44]
    assert run(lambda x: fn.pad(x, fill_value=2.7), V)[1].tolist() == [2, 2, 2, 2, 2]
    f16 = run(lambda x: fn.pad(fn.cast(x, dtype=types.FLOAT16), fill_value=0.5), u8)
    assert f16[1].dtype == np.float16 and f16[1].tolist() == [1.0, 0.5, 0.5]


def test_pad_errors():
    # DALI's words (measured, DALI 2.4): code written for DALI may look for them.
    with pytest.raises(SampleError, match=r"fn\.pad .*Axis 2 out of range\. Expected range "
                                          r"is \[-2, 1\] for a 2D input"):
        run(lambda x: fn.pad(x, axes=[2]), A)
    with pytest.raises(SampleError, match="Axis index 0 occurs more than once"):
        run(lambda x: fn.pad(x, axes=[0, -2]), A)
    with pytest.raises(SampleError, match="cannot pad scalars"):
        run(lambda x: fn.pad(x), [np.array(1.0, np.float32)])
    with pytest.raises(SampleError, match="'shape' must have one extent per padded axis"):
        run(lambda x: fn.pad(x, axes=[1], shape=[4, 4]), A)
    with pytest.raises(SampleError, match="'align' .* one value or one per padded axis"):
        run(lambda x: fn.pad(x, axes=[0], align=[2, 3]), A)
    # As in DALI: a bad alignment fails the run, both axes and axis_names the build.
    with pytest.raises(SampleError, match="Values of `align` argument must be positive"):
        run(lambda x: fn.pad(x, align=[0]), A)
    with pytest.raises(ArgumentError, match='"axes" and "axis_names" are mutually exclusive'):
        run(lambda x: fn.pad(x, axes=[0], axis_names="W"), A, layouts=["HW"])
    # A layout letter not in a named layout fails at the call; without a layout (which
    # feed_input may give at run time), at run, as in DALI.
    with pytest.raises(ArgumentError, match="axis 'C' of 'axis_names' is not in the input "
                                            "layout 'HW'"):
        run(lambda x: fn.pad(x, axis_names="C"), A, layouts=["HW"])
    with pytest.raises(SampleError, match="axis 'W' of 'axis_names' 'W': Axis 'W' is not "
                                          "present in the input layout ''"):
        run(lambda x: fn.pad(x, axis_names="W"), A)
