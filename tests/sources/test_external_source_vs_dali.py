"""Replays DALI 2.4's recorded outcomes (tests/data/dali_external_source_forms.json, made by
tests/data/record/external_source_forms.py) for every form of data external_source and
feed_input take (tests/external_source_cases.py): stoker must give the same outputs
(shapes, type, layout, values), or stop at the same stage with an exception that
``except <DALI's builtin type>`` catches. Deliberate differences are listed in DIFFERENT
with the reason (and in README's "Differences from DALI, on purpose")."""

from __future__ import annotations

import builtins
import json
import pathlib

import pytest
from external_source_cases import CASES, Lib, outcome

from stoker import fn, pipeline_def, types
from stoker.tensors import TensorCPU, TensorListCPU

try:
    import torch
except ImportError:
    torch = None

TABLE = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                    "dali_external_source_forms.json").read_text())["cases"]

# Where stoker does not do what DALI does, on purpose: case -> (stoker's outcome: "ok" or
# "<stage>:<exception builtin>", why).
DIFFERENT = {
    # DALI 2.4's CPU build asks torch for a CUDA stream and fails with AssertionError
    # ("Torch not compiled with CUDA enabled") on any torch tensor; stoker takes CPU tensors
    # like numpy arrays (the data a PyTorch user has at hand).
    "batch_torch_dense": ("ok", "torch tensors taken"),
    "batch_list_of_torch": ("ok", "torch tensors taken"),
    "sample_torch": ("ok", "torch tensors taken"),
    "feed_torch_dense": ("ok", "torch tensors taken"),
    "feed_list_of_torch": ("ok", "torch tensors taken"),
    # DALI refuses Python numbers and lists as samples ("Don't know how to extract the
    # shape"); stoker makes arrays of them as numpy does (int64/float64), which no DALI
    # pipeline can depend on failing.
    "batch_python_lists": ("ok", "Python numbers and lists are arrays"),
    "batch_python_ints": ("ok", "Python numbers and lists are arrays"),
    "sample_python_int": ("ok", "Python numbers and lists are arrays"),
    "sample_python_float": ("ok", "Python numbers and lists are arrays"),
    "sample_python_list": ("ok", "Python numbers and lists are arrays"),
    "feed_python_lists": ("ok", "Python numbers and lists are arrays"),
    "feed_python_ints": ("ok", "Python numbers and lists are arrays"),
    # DALI refuses strided (non-contiguous) arrays; stoker copies them.
    "batch_non_contiguous": ("ok", "strided arrays are copied"),
    "feed_non_contiguous": ("ok", "strided arrays are copied"),
    # A scalar where a batch (or num_outputs values) is due: DALI fails with an IndexError
    # from indexing it; stoker raises its SampleError (a RuntimeError) saying so.
    "batch_ndarray_0d": ("run:RuntimeError", "a scalar is not a batch"),
    "feed_ndarray_0d": ("feed:RuntimeError", "a scalar is not a batch"),
    "sample_n2_scalar": ("run:RuntimeError", "a scalar does not hold num_outputs values"),
    "batch_n2_one_batch_only": ("run:RuntimeError", "fewer batches than num_outputs"),
    "sample_n2_one_value": ("run:RuntimeError", "fewer values than num_outputs"),
    # A per-sample source returning a tuple without num_outputs: DALI fails ("Don't know how
    # to extract the shape out of tuple"); stoker makes the tuple of equal arrays one array.
    "sample_tuple_one_output": ("ok", "a tuple of equal arrays is an array"),
}


def _lib() -> Lib:
    return Lib(fn=fn, types=types, pipeline_def=pipeline_def, TensorListCPU=TensorListCPU,
               TensorCPU=TensorCPU, torch=torch)


def _kind(got: dict) -> str:
    if "error" not in got:
        return "ok"
    return f"{got['stage']}:{got['bases'][0] if got['bases'] else got['error']}"


def test_every_case_was_recorded():
    assert sorted(TABLE) == sorted(n for n in CASES if n in TABLE)
    missing = sorted(set(CASES) - set(TABLE))
    assert not missing, f"cases not recorded with DALI (re-run the recorder): {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_external_source_form_as_dali(name):
    lib = _lib()
    case = CASES[name](lib)
    if case.torch and torch is None:
        pytest.skip("torch is not installed")
    got = outcome(lib, case)
    want = TABLE[name]
    if name in DIFFERENT:
        assert _kind(want) != DIFFERENT[name][0], "DALI does this too: drop it from DIFFERENT"
        assert _kind(got) == DIFFERENT[name][0], got
        return
    if "error" in want:
        assert "error" in got, f"DALI raised {want['error']} at {want['stage']}: " \
                               f"{want['message'][:200]}; stoker gave {got['runs']}"
        assert got["stage"] == want["stage"], got
        dali_type = getattr(builtins, want["bases"][0]) if want["bases"] else Exception
        assert dali_type.__name__ in got["bases"], \
            f"stoker raised {got['error']} ({got['message']}), which `except " \
            f"{dali_type.__name__}` does not catch"
        assert got["runs"] == want["runs"]
        return
    assert "error" not in got, got
    assert got["runs"] == want["runs"]


