"""Argument value forms DALI accepts: None as "not given", bools for integers, ints for
floats, numpy scalars and arrays, tuples, ``types.Constant`` as a value and as an input.

The whole table (every operator, argument and form, against DALI's recorded outcome) is
in test_arg_forms_vs_dali.py; these are the cases users hit, checked on their results.
"""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError, ArgumentTypeError

IMG = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)


def _run(make):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        return make()

    p = pipe()
    p.build()
    try:
        out = p.run()
    finally:
        p.close()
    return out[0]


def _image():
    return fn.external_source(source=lambda: [IMG, IMG], layout="HWC")


def _first(tl) -> np.ndarray:
    return np.asarray(tl.as_cpu().at(0) if hasattr(tl, "as_cpu") else tl.at(0))


# -- None ---------------------------------------------------------------------------------------


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


def test_a_missing_argument_is_caught_as_dalis_runtime_error_too():
    # DALI reports it at build, as RuntimeError; stoker at the call, as both.
    with pytest.raises(RuntimeError, match="missing required argument 'dtype'"):
        _run(lambda: fn.cast(fn.random.uniform(range=[0, 1])))


def test_none_does_not_count_as_given_for_rules_between_arguments():
    # axis_names=None is the default, not "axis names given" (the input has no layout,
    # where given names could not be found).
    data = np.arange(16, dtype=np.uint8).reshape(4, 4)
    out = _run(lambda: fn.slice(fn.external_source(source=lambda: [data, data]),
                                rel_start=[0.5, 0.25], rel_shape=[0.5, 0.5], axis_names=None))
    np.testing.assert_array_equal(_first(out), data[1:3, 2:4])  # (x, y): axes "WH"


# -- numbers ------------------------------------------------------------------------------------


def test_bools_for_integer_arguments_as_in_dalis_resnet_pipeline():
    plain = _run(lambda: fn.crop_mirror_normalize(_image(), mirror=False, dtype=types.FLOAT))
    np.testing.assert_array_equal(_first(plain), IMG.transpose(2, 0, 1).astype(np.float32))
    flipped = _run(lambda: fn.flip(_image(), horizontal=True, vertical=False))
    np.testing.assert_array_equal(_first(flipped), IMG[:, ::-1])


@pytest.mark.parametrize("brightness", [2, np.int64(2), np.float32(2.0), np.array(2.0),
                                        np.array([2.0]), types.Constant(2.0),
                                        types.Constant(np.array(2.0, np.float32))])
def test_any_number_form_for_a_float_argument(brightness):
    out = _run(lambda: fn.brightness(_image(), brightness=brightness, dtype=types.FLOAT))
    np.testing.assert_allclose(_first(out), IMG.astype(np.float32) * 2)


@pytest.mark.parametrize("crop", [(2, 3), np.array([2, 3]), [np.int32(2), 3.0],
                                  np.array([2.0, 3.0], np.float32)])
def test_tuples_arrays_and_numpy_elements_for_vector_arguments(crop):
    out = _run(lambda: fn.crop(_image(), crop=crop, crop_pos_x=np.float32(0),
                               crop_pos_y=np.array(0.0)))
    np.testing.assert_array_equal(_first(out), IMG[:2, :3])


def test_whole_floats_for_integer_arguments_fractional_ones_refused():
    out = _run(lambda: fn.flip(_image(), horizontal=1.0, vertical=np.float64(0)))
    np.testing.assert_array_equal(_first(out), IMG[:, ::-1])
    # DALI truncates 1.5 to 1 without a word; stoker says so.
    with pytest.raises(ArgumentTypeError, match="'horizontal' must be an integer, got 1.5"):
        fn.flip(_image(), horizontal=1.5)


def test_a_list_for_a_boolean_argument_is_refused():
    # DALI reads any non-empty list as True, [False] included.
    with pytest.raises(ArgumentTypeError, match="'normalized' must be a boolean"):
        fn.erase(_image(), anchor=[0.1, 0.1], shape=[0.5, 0.5], normalized=[False])


def test_a_bool_for_an_enum_argument_is_refused():
    # DALI reads dtype=True as the data type numbered 1 (UINT16).
    with pytest.raises(ArgumentTypeError, match="'dtype' must be a data type"):
        fn.cast(_image(), dtype=True)


def test_integers_and_numpy_integers_for_enum_arguments():
    out = _run(lambda: fn.cast(_image(), dtype=np.int64(int(types.FLOAT))))
    assert out.dtype == types.FLOAT
    out = _run(lambda: fn.resize(_image(), size=[2, 3], interp_type=np.array(0)))
    assert _first(out).shape == (2, 3, 3)


def test_one_value_for_a_random_area_stands_for_both_ends():
    # As in DALI: random_area=0.5 draws the same windows as random_area=[0.5, 0.5].
    def windows(area):
        shapes = fn.external_source(source=lambda: [np.array([40, 60, 3])] * 2)
        return fn.random_crop_generator(shapes, random_area=area, seed=9)[1]

    np.testing.assert_array_equal(_first(_run(lambda: windows(0.5))),
                                  _first(_run(lambda: windows([0.5, 0.5]))))


def test_a_bad_value_is_caught_as_dalis_runtime_error_too():
    # DALI finds bad values in C++ at build or run (RuntimeError); stoker at the call.
    with pytest.raises(RuntimeError, match="'horizontal' must be in"):
        fn.flip(_image(), horizontal=2)
    with pytest.raises(ArgumentError):
        fn.flip(_image(), horizontal=2)


# -- strings ------------------------------------------------------------------------------------


def test_numpy_strings_for_string_arguments():
    out = _run(lambda: fn.reshape(_image(), shape=[24, 3], layout=np.str_("AB")))
    assert out.layout() == "AB"
    out = _run(lambda: fn.reshape(_image(), shape=[24, 3], layout=np.array("XY")))
    assert out.layout() == "XY"


def test_a_number_for_a_string_argument_is_refused():
    # DALI would take str(4) = "4".
    with pytest.raises(ArgumentTypeError, match="'layout' must be a layout string"):
        fn.reshape(_image(), shape=[24, 3], layout=4)


# -- types.Constant -----------------------------------------------------------------------------


def test_scalar_constant_as_a_vector_argument():
    data = np.arange(10, dtype=np.int32)
    out = _run(lambda: fn.slice(fn.external_source(source=lambda: [data, data]),
                                start=types.ScalarConstant(5), shape=[3], axes=[0]))
    np.testing.assert_array_equal(_first(out), data[5:8])


def test_zero_d_array_constant_as_an_argument():
    value = types.Constant(np.array(240.0, np.float32))
    out = _run(lambda: fn.normalize(fn.cast(_image(), dtype=types.FLOAT), mean=value,
                                    stddev=types.Constant(2)))
    np.testing.assert_allclose(_first(out), (IMG.astype(np.float32) - 240) / 2)


@pytest.mark.parametrize(("value", "dtype", "want"), [
    (types.Constant(1.0), types.INT32, np.int32(1)),
    (types.Constant(np.array(240.0, np.float32)), types.UINT8, np.uint8(240)),
    (types.Constant(7, types.UINT8), types.FLOAT, np.float32(7)),
])
def test_scalar_constant_as_an_operator_input(value, dtype, want):
    out = _run(lambda: fn.cast(value, dtype=dtype))
    got = _first(out)
    assert got.shape == () and got.dtype == want.dtype and got == want
