"""Conditionals against DALI 2.4's recorded outcomes (tests/data/conditionals.json, recorder
tests/data/record/conditionals.py): the same outputs per sample where DALI runs the case,
an error at the same stage (trace or run) where it refuses it, and stoker's error naming
the `if` (file and line) and what was wrong."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import GraphError, SampleError
from tests.conditional_cases import BATCH, CASES, source_r, source_x

RECORD = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                     "conditionals.json").read_text())["cases"]

# Per error case: stoker's exception type and phrases of its message.
ERRORS = {
    "non_scalar_condition": (SampleError, ["conditional_cases.py:", "one scalar per sample",
                                           "shape (1,)"]),
    "one_branch_only": (GraphError, ["conditional_cases.py:", "variable 'y' is assigned in "
                                     "one branch only (not in the false branch)"]),
    "divergent": (GraphError, ["conditional_cases.py:", "Divergent data", "a tuple of 2"]),
    "and_with_int": (SampleError, ["`and` takes one boolean scalar", "int32 as right"]),
    "dtype_mismatch": (SampleError, ["conditional_cases.py:", "'y' is int32 (1-d) in the "
                                     "true branch and float32 (1-d)"]),
    "ndim_mismatch": (SampleError, ["Divergent data", "int32 (1-d)", "int32 (0-d)"]),
    "constant_other_branch": (SampleError, ["Divergent data", "(0-d)"]),
    "conditional_expression": (TypeError, ["no truth value", "a if c else b"]),
    "while_loop": (TypeError, ["no truth value", "`while`"]),
}


def build(name: str):
    case = CASES[name]

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=source_x, batch=False)
        r = fn.external_source(source=source_r, batch=False)
        return case(fn, types, x, r)

    return pipe


def outputs(name: str) -> list:
    p = build(name)()
    p.build()
    outs = p.run()
    return outs if isinstance(outs, tuple | list) else [outs]


@pytest.mark.parametrize("name", sorted(set(CASES) - set(ERRORS)))
def test_outputs_match_dali(name):
    want = RECORD[name]["outputs"]
    got = outputs(name)
    assert len(got) == len(want)
    for k, (tl, expected) in enumerate(zip(got, want, strict=True)):
        assert len(tl) == BATCH
        for j, w in enumerate(expected):
            sample = np.asarray(tl.at(j))
            assert str(sample.dtype) == w["dtype"], (name, k, j)
            assert list(sample.shape) == w["shape"], (name, k, j)
            np.testing.assert_array_equal(sample.ravel(), np.array(w["values"], w["dtype"]))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_at_dalis_stage_name_the_if(name):
    dali = RECORD[name]["error"]
    kind, phrases = ERRORS[name]
    with pytest.raises(kind) as info:
        p = build(name)()
        p.build()
        p.run()
    stage = "run" if "p" in locals() else "trace"
    assert stage == dali["stage"], f"{name}: stoker fails at {stage}, DALI at {dali['stage']}"
    for phrase in phrases:
        assert phrase in str(info.value), (phrase, str(info.value))
