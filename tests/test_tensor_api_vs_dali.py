"""stoker's batch and sample objects, and its constant pipeline outputs, against DALI 2.4's
answers to the same questions (tests/tensor_api_cases.py), recorded by
tests/data/record/tensor_api.py into tests/data/dali_tensor_api.json."""

from __future__ import annotations

import builtins
import json
import pathlib

import pytest
from tensor_api_cases import OUTPUT_FORMS, PROBES, ask, objects, output_outcome

from stoker import fn, pipeline_def, types
from stoker.tensors import TensorCPU, TensorListCPU

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "dali_tensor_api.json")
                      .read_text())


def _agree(ours: object, dali: object) -> bool:
    # An error agrees when stoker's is an instance of every builtin DALI's is (stoker's
    # error classes subclass several builtins, so `except <DALI's type>` still catches it).
    if isinstance(dali, dict) and "raises" in dali:
        return isinstance(ours, dict) and "raises" in ours and \
            set(dali["raises"]) <= set(ours["raises"]) and ours.get("stage") == dali.get("stage")
    return ours == dali


def test_the_recording_covers_every_probe() -> None:
    assert list(RECORDED["probes"]) == PROBES
    assert list(RECORDED["outputs"]) == list(OUTPUT_FORMS)


@pytest.mark.parametrize("expr", PROBES)
def test_batch_and_sample_objects_answer_as_dali(expr: str) -> None:
    ours = ask(expr, objects(TensorCPU, TensorListCPU, types))
    assert _agree(ours, RECORDED["probes"][expr]), f"{expr}: stoker {ours}, DALI " \
        f"{RECORDED['probes'][expr]}"


@pytest.mark.parametrize("name", list(OUTPUT_FORMS))
def test_a_value_returned_from_a_pipeline_is_the_constant_dali_makes(name: str) -> None:
    ours = output_outcome(pipeline_def, fn, types, OUTPUT_FORMS[name])
    dali = RECORDED["outputs"][name]
    assert _agree(ours, dali), f"{name} ({OUTPUT_FORMS[name]}): stoker {ours}, DALI {dali}"


def test_errors_are_described_by_builtin_types() -> None:
    assert all(hasattr(builtins, name) for v in RECORDED["probes"].values()
               if isinstance(v, dict) and "raises" in v for name in v["raises"])
