"""The JAX iterator against DALI 2.4's, recorded on CPU (tests/data/dali_jax_iterator.json,
recorder tests/data/record/jax_iterator.py): same samples in the same steps, same shapes
and dtypes, same len() per epoch, an error wherever DALI refuses.

DALI's CPU build cannot record two forms, both needing GPUs: ``sharding=`` (DALI puts every
CPU pipeline's batch on JAX device 0, and make_array_from_single_device_arrays refuses) and
``data_iterator`` with sharding (it creates the pipelines with device_id=i). stoker places
pipeline i on the i-th device of the sharding, so those cases are checked against DALI's
recorded "stack" form over the same shards: the same samples, as one (pipelines*batch, ...)
array instead of (pipelines, batch, ...).
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("jax")

HERE = pathlib.Path(__file__).parent
DALI = json.loads((HERE.parent / "data" / "dali_jax_iterator.json").read_text())


@pytest.fixture(scope="module")
def stoker_outcomes():
    run = subprocess.run([sys.executable, str(HERE / "jax_worker.py")], capture_output=True,
                         text=True, timeout=600, cwd=HERE.parents[1])
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _reference(name: str) -> tuple[dict, bool]:
    """DALI's outcome for a case, and whether it is the stack form standing in."""
    mode = name.split("-", 1)[0]
    if mode in ("sharding", "decorator"):
        return DALI["cases"]["stack-" + name.split("-", 1)[1]], True
    return DALI["cases"][name], False


@pytest.mark.parametrize("name", sorted(DALI["cases"]))
def test_case_matches_dali(stoker_outcomes, name):
    ours = stoker_outcomes["cases"][name]
    ref, stand_in = _reference(name)
    assert "error" not in ours, ours
    assert ours["lens"] == ref["lens"]
    assert len(ours["epochs"]) == len(ref["epochs"])
    for our_epoch, ref_epoch in zip(ours["epochs"], ref["epochs"], strict=True):
        assert len(our_epoch) == len(ref_epoch)
        for our_step, ref_step in zip(our_epoch, ref_epoch, strict=True):
            for key in ("data", "f"):
                o, r = our_step[key], ref_step[key]
                assert o["ids"] == r["ids"] and o["dtype"] == r["dtype"]
                if stand_in:  # one global array: the pipelines' batches one after another
                    assert o["shape"] == [r["shape"][0] * r["shape"][1], *r["shape"][2:]]
                else:
                    assert o["shape"] == r["shape"]


@pytest.mark.parametrize("name", sorted(DALI["errors"]))
def test_bad_use_fails_as_in_dali(stoker_outcomes, name):
    # DALI raises AssertionError; stoker raises its own error classes (with a message
    # naming the iterator and what to change): an error in the same place. One deliberate
    # difference: DALI silently drops the outputs output_map does not name; stoker refuses
    # a pipeline whose output count differs from output_map (README, differences).
    if name == "output_map_short":
        assert DALI["errors"][name] == "none"
    else:
        assert DALI["errors"][name] == "AssertionError"
    assert stoker_outcomes["errors"][name] in ("ArgumentError", "ShapeError")


def test_worker_had_four_devices(stoker_outcomes):
    assert stoker_outcomes["devices"] == 4
