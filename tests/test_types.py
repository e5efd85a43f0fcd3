"""``stoker.types`` mirrors ``nvidia.dali.types``: enum values, layouts, conversions, constants."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, fn, types

# Values as DALI 2.4 defines them (nvidia.dali.types), so integers saved by DALI code agree.
DALI_DATA_TYPES = {
    "NO_TYPE": -1, "UINT8": 0, "UINT16": 1, "UINT32": 2, "UINT64": 3, "INT8": 4, "INT16": 5,
    "INT32": 6, "INT64": 7, "FLOAT16": 8, "FLOAT": 9, "FLOAT64": 10, "BOOL": 11, "STRING": 12,
}
DALI_IMAGE_TYPES = {"RGB": 0, "BGR": 1, "GRAY": 2, "YCbCr": 3, "ANY_DATA": 4}
DALI_INTERP_TYPES = {"INTERP_NN": 0, "INTERP_LINEAR": 1, "INTERP_CUBIC": 2,
                     "INTERP_LANCZOS3": 3, "INTERP_TRIANGULAR": 4, "INTERP_GAUSSIAN": 5}
NUMPY_OF = {
    types.UINT8: np.uint8, types.UINT16: np.uint16, types.UINT32: np.uint32,
    types.UINT64: np.uint64, types.INT8: np.int8, types.INT16: np.int16,
    types.INT32: np.int32, types.INT64: np.int64, types.FLOAT16: np.float16,
    types.FLOAT: np.float32, types.FLOAT64: np.float64, types.BOOL: np.bool_,
}


@pytest.mark.parametrize(("enum", "expected"), [
    (types.DALIDataType, DALI_DATA_TYPES),
    (types.DALIImageType, DALI_IMAGE_TYPES),
    (types.DALIInterpType, DALI_INTERP_TYPES),
], ids=["data", "image", "interp"])
def test_enum_members_have_dali_values_and_module_aliases(enum, expected) -> None:
    for name, value in expected.items():
        assert int(enum[name]) == value
        assert getattr(types, name) is enum[name]


def test_layout_constants_are_sample_layouts() -> None:
    assert (str(types.NHWC), str(types.NCHW), str(types.NFHWC), str(types.NFCHW),
            str(types.SAME)) == ("HWC", "CHW", "FHWC", "FCHW", "")
    assert types.NHWC == "HWC"


@pytest.mark.parametrize("dali_type", list(NUMPY_OF), ids=lambda t: t.name)
def test_to_numpy_and_to_dali_round_trip(dali_type) -> None:
    np_type = NUMPY_OF[dali_type]
    assert types.to_numpy(dali_type) == np.dtype(np_type)
    assert types.to_dali(np_type) is dali_type
    assert types.to_dali(np.dtype(np_type)) is dali_type
    assert types.to_dali(types.to_numpy(dali_type)) is dali_type


def test_dali_conversion_names_are_available() -> None:
    # nvidia.dali.types spells them to_numpy_type (a numpy scalar type) and to_dali_type.
    assert types.to_numpy_type(types.FLOAT) is np.float32
    assert types.to_numpy_type(types.BOOL) is np.bool_
    assert types.to_dali_type(np.int16) is types.INT16
    assert types.to_dali_type("uint8") is types.UINT8


def test_to_numpy_of_string_type_raises_type_error() -> None:
    with pytest.raises(TypeError, match="data type STRING has no numpy equivalent"):
        types.to_numpy(types.STRING)


def test_to_dali_of_unsupported_numpy_type_raises_type_error() -> None:
    with pytest.raises(TypeError, match="numpy dtype complex64 has no DALI equivalent"):
        types.to_dali(np.complex64)


def test_to_dali_maps_text_arrays_to_string() -> None:
    assert types.to_dali(np.array(["a"]).dtype) is types.STRING


def test_float32_is_an_alias_of_float() -> None:
    assert types.FLOAT32 is types.FLOAT and str(types.FLOAT) == "FLOAT"


# -- types.Constant ----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "dtype"), [(1.5, types.FLOAT), (3, types.INT32),
                                              (True, types.BOOL)])
def test_scalar_constant_infers_dali_type(value, dtype) -> None:
    c = types.Constant(value)
    assert c.dtype is dtype and c.value == value
    assert c.value.dtype == types.to_numpy(dtype)


def test_scalar_constant_keeps_declared_type() -> None:
    c = types.Constant(300, types.INT16)
    assert c.dtype is types.INT16 and c.value.dtype == np.int16


@pytest.mark.parametrize(("value", "dtype", "python"), [
    (np.float64(1.5), types.FLOAT64, 1.5),
    (np.array(240.0, np.float32), types.FLOAT, 240.0),
    (np.int16(-3), types.INT16, -3),
    (np.array(True), types.BOOL, True),
])
def test_scalar_constant_of_numpy_value_keeps_its_type(value, dtype, python) -> None:
    # As in DALI: a numpy scalar or 0-d array brings its own type.
    c = types.Constant(value)
    assert isinstance(c, types.ScalarConstant) and c.dtype is dtype
    assert c.value == python and c.value.dtype == types.to_numpy(dtype) and c.shape == []


def test_scalar_constant_declared_type_wins_over_numpy_type() -> None:
    c = types.Constant(np.array(7, np.int64), types.UINT8)
    assert c.dtype is types.UINT8 and c.value.dtype == np.uint8 and c.value == 7


def test_constant_of_an_enum_is_a_node_as_in_dali() -> None:
    # Enums take no part in arithmetic, so DALI makes them a constant node.
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        node = types.Constant(types.INTERP_CUBIC)
        assert not isinstance(node, types.ScalarConstant)
        pipe.set_outputs(node)
    (out,) = pipe.run()
    pipe.close()
    assert int(np.asarray(out.at(0))) == int(types.INTERP_CUBIC)


def test_scalar_constant_of_unsupported_value_raises_type_error() -> None:
    with pytest.raises(TypeError, match="types.Constant: cannot infer a type for 'x'"):
        types.Constant("x")


def _arith(expression) -> list[np.ndarray]:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, exec_pipelined=False)
    with pipe:
        x = fn.external_source(source=lambda: [np.array([250, 3], np.uint8)])
        i = fn.external_source(source=lambda: [np.array([7, -7], np.int32)])
        pipe.set_outputs(*expression(x, i))
    try:
        return [tl.at(0) for tl in pipe.run()]
    finally:
        pipe.close()


def test_typed_constants_in_arithmetic_follow_dali_promotion() -> None:
    # Expected types and values were produced by DALI 2.4 on the CPU with these inputs.
    outs = _arith(lambda x, i: (
        x + types.Constant(10, dtype=types.INT16),
        x * types.Constant(1.5),
        i / types.Constant(2),
        i // types.Constant(2, types.UINT8),
        types.Constant(100, types.UINT8) - x,
        x + types.Constant(True),
    ))
    expected = [(np.int16, [260, 13]), (np.float32, [375.0, 4.5]), (np.float32, [3.5, -3.5]),
                (np.int32, [3, -3]), (np.uint8, [106, 97]), (np.uint8, [251, 4])]
    for k, (out, (dtype, values)) in enumerate(zip(outs, expected, strict=True)):
        assert out.dtype == dtype, f"expression {k}"
        assert out.tolist() == values, f"expression {k}"


def test_array_constant_becomes_a_constant_node() -> None:
    (out,) = _arith(lambda x, i: (i * types.Constant(np.array([2, 3], np.int32)),))
    assert out.dtype == np.int32 and out.tolist() == [14, -21]


def test_constant_with_shape_and_layout_makes_a_tensor() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(types.Constant(7, dtype=types.UINT8, shape=[2, 2], layout="HW"))
    (out,) = pipe.run()
    pipe.close()
    assert out.layout() == "HW" and out.dtype is types.UINT8
    assert out.as_array().tolist() == [[[7, 7], [7, 7]]] * 2
