"""Arithmetic on DataNodes against DALI 2.4's measured behaviour (tests/data/dali_arith.json).

The table was recorded by running DALI 2.4 CPU pipelines. stoker deliberately also accepts
float16 operands (DALI's CPU backend rejects them), so float16 entries are skipped here and
float16 is tested on its own.
"""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker import math as smath
from stoker.errors import SampleError
from stoker.kernels.cpu.tensor import arith

TABLE = json.loads((pathlib.Path(__file__).parents[1] / "data" / "dali_arith.json").read_text())
OPS = {"+": "add", "-": "sub", "*": "mul", "/": "fdiv", "//": "div", "%": "mod", "**": "pow",
       "&": "bitand", "|": "bitor", "^": "bitxor", "==": "eq", "<": "lt", "!=": "neq",
       "<=": "leq", ">": "gt", ">=": "geq"}
DTYPES = [d for d in TABLE["dtypes"] if d != "float16"]


def _ours(op: str, dtypes: list) -> str:
    try:
        return np.dtype(arith.result_type(op, [np.dtype(d) for d in dtypes])).name
    except TypeError:
        return "error"


def _expected(entry: str) -> str:
    return "error" if entry.startswith("error") else entry


@pytest.mark.parametrize("symbol", list(OPS))
def test_binary_result_types_match_dali(symbol):
    mismatches = []
    for lhs in DTYPES:
        for rhs in DTYPES:
            want = _expected(TABLE[symbol][lhs][rhs])
            got = _ours(OPS[symbol], [lhs, rhs])
            if got != want:
                mismatches.append(f"{lhs} {symbol} {rhs}: DALI {want}, stoker {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("table,value,tensor_first", [
    ("scalar_int_rhs", 3, True), ("scalar_float_rhs", 0.5, True),
    ("scalar_int_lhs", 3, False), ("scalar_float_lhs", 0.5, False),
    ("scalar_bool_rhs", True, True)])
def test_python_scalars_are_typed_like_dali(table, value, tensor_first):
    mismatches = []
    for symbol, by_type in TABLE[table].items():
        for dtype in DTYPES:
            scalar = arith.scalar_type(np.dtype(dtype), value, None)
            pair = [dtype, scalar] if tensor_first else [scalar, dtype]
            want, got = _expected(by_type[dtype]), _ours(OPS[symbol], pair)
            if got != want:
                mismatches.append(f"{table} {symbol} {dtype}: DALI {want}, stoker {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", ["sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "abs",
                                  "fabs", "floor", "ceil", "sin", "cos", "tan", "tanh"])
def test_math_unary_result_types_match_dali(name):
    for dtype in DTYPES:
        want = _expected(TABLE["math_unary"][name][dtype])
        assert _ours(name, [dtype]) == want, dtype


@pytest.mark.parametrize("name", ["atan2", "min", "max", "pow", "fpow"])
def test_math_binary_result_types_match_dali(name):
    for lhs in DTYPES:
        for rhs in DTYPES:
            want = _expected(TABLE["math_binary"][name][lhs][rhs])
            assert _ours(name, [lhs, rhs]) == want, (lhs, rhs)


def _run(build, batch_size=1):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1,
                  exec_pipelined=False)
    def pipe():
        return build()

    p = pipe()
    try:
        return [o.as_array()[0] for o in p.run()]
    finally:
        p.close()


def _src(values, dtype):
    arr = np.array(values, dtype=dtype)
    return fn.external_source(source=lambda: [arr])


CASE = re.compile(r"^(?P<lt>[a-z0-9]+) \[(?P<lv>[^\]]*)\] (?P<op>\S+) "
                  r"(?:(?P<rt>[a-z0-9]+) )?(?:\[(?P<rv>[^\]]*)\]|(?P<scalar>[-0-9.e()*True]+))$")


def _values(text: str) -> list:
    words = {"T": True, "F": False, "True": True, "False": False}
    return [words[v] if v in words else json.loads(v) for v in text.split(",")]


def _expected_values(values: list) -> np.ndarray:
    return np.array([float(v) for v in values], np.float64)


CASES = sorted(k for k, v in TABLE["semantics"].items() if CASE.match(k) and "dtype" in v)


@pytest.mark.parametrize("case", CASES)
def test_values_match_dali_semantics(case):
    """Each recorded 'T [..] OP T2 [..]' or 'T [..] OP scalar' case, end to end in a pipeline."""
    spec, m = TABLE["semantics"][case], CASE.match(case)
    lhs_type = m["lt"]
    binary = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
              "**": lambda a, b: a ** b, "<": lambda a, b: a < b, "==": lambda a, b: a == b,
              "&": lambda a, b: a & b, "^": lambda a, b: a ^ b}[m["op"]]

    def build():
        a = _src(_values(m["lv"]), lhs_type)
        b = (_src(_values(m["rv"]), m["rt"] or lhs_type) if m["rv"] is not None
             else eval(m["scalar"]))  # a literal from the recorded case, e.g. 10 or (-3)
        return binary(a, b)

    (out,) = _run(build)
    assert out.dtype.name == spec["dtype"]
    np.testing.assert_allclose(out.astype(np.float64), _expected_values(spec["values"]),
                               equal_nan=True)


def test_recorded_value_cases_are_all_covered():
    # Guards the regex: the cases it does not parse are the non-binary forms listed here.
    skipped = sorted(set(TABLE["semantics"]) - set(CASES))
    assert all(not CASE.match(k) or "error" in TABLE["semantics"][k] for k in skipped)
    assert len(CASES) >= 40


def test_integer_division_by_zero_names_the_operation():
    with pytest.raises(SampleError, match=r"integer '//' by zero"):
        _run(lambda: _src([1, 2], "int32") // _src([0, 1], "int32"))


def test_boolean_subtraction_is_rejected_like_dali():
    with pytest.raises(SampleError, match="not defined for boolean operands"):
        _run(lambda: _src([True], "bool") - _src([False], "bool"))


def test_int_literal_outside_int32_is_refused_at_the_call():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return _src([1], "int64") + 2**40

    with pytest.raises(OverflowError, match="does not fit in int32"):
        pipe()


def test_typed_constant_keeps_its_type():
    (out,) = _run(lambda: _src([250], "uint8") + types.Constant(10, dtype=types.UINT8))
    assert out.dtype == np.uint8 and out[0] == 4  # wraps like uint8 arithmetic


def test_float16_arithmetic_is_supported_beyond_dali():
    (out,) = _run(lambda: _src([1.5, 2.0], "float16") * _src([2.0, 0.5], "float16"))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array([3.0, 1.0], np.float16))


def test_math_functions_match_numpy():
    x = np.array([0.25, 1.0, 4.0], np.float32)
    y = np.array([2.0, 0.5, -1.0], np.float32)
    outs = _run(lambda: (smath.sqrt(_src(x, "float32")), smath.rsqrt(_src(x, "float32")),
                         smath.atan2(_src(x, "float32"), _src(y, "float32")),
                         smath.clamp(_src(y, "float32"), 0.0, 1.0),
                         smath.log2(_src(x, "float32")), -_src(x, "float32"),
                         abs(_src(y, "float32"))))
    refs = [np.sqrt(x), 1 / np.sqrt(x), np.arctan2(x, y), np.clip(y, 0, 1), np.log2(x), -x,
            np.abs(y)]
    for got, ref in zip(outs, refs, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_per_sample_scalars_broadcast_over_images():
    images = [np.full((2, 2, 3), i, np.float32) for i in range(3)]
    scale = [np.float32(i + 1) for i in range(3)]

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, exec_pipelined=False)
    def pipe():
        x = fn.external_source(source=lambda: images, layout="HWC")
        s = fn.external_source(source=lambda: scale)
        return x * s

    (out,) = pipe().run()
    for i in range(3):
        np.testing.assert_array_equal(out.at(i), images[i] * scale[i])
    assert out.layout() == "HWC"
