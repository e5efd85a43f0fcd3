"""Operator calls whose outcome was recorded from DALI 2.4 (tests/data/dali_op_cases.json).

A case is one pipeline: ``external_source`` inputs (lists of numpy samples, with an
optional layout), one ``fn`` operator call with constant arguments and per-sample argument
inputs, and what came out: each output's samples and layout, or the error, with the stage
that raised it ("call": the ``fn`` call; "build"; "run") and its builtin type. The recorder
(tests/data/record/op_outcomes.py, run with DALI) and the replay tests (run with stoker) both
run a case here, from the library they are handed, so a case means the same call on both.
Cases are defined in the recorder; ``match`` is a phrase of DALI's message that stoker's
message must contain too (code written for DALI may look for it).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
from dali_cases import Lib, arg_value, check_error, check_samples, error_outcome, operator

DATA = pathlib.Path(__file__).parent / "data" / "dali_op_cases.json"


def encode_array(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": a.ravel().tolist()}


def decode_array(d: dict) -> np.ndarray:
    return np.array(d["data"], dtype=d["dtype"]).reshape(d["shape"])


def _source(samples: list) -> Any:
    return lambda: samples


def run_case(case: dict, lib: Lib) -> dict:
    """Runs one case; returns {"outputs": [{"layout", "samples"}]} or {"error": ...}."""
    inputs = [[decode_array(s) for s in samples] for samples in case["inputs"]]
    arg_inputs = {k: [decode_array(s) for s in v] for k, v in case.get("arg_inputs", {}).items()}
    layouts = case.get("layouts") or [None] * len(inputs)
    batch = len(inputs[0]) if inputs else len(next(iter(arg_inputs.values())))
    pipe = lib.Pipeline(batch_size=batch, num_threads=1, device_id=None, seed=case.get("seed", 1))
    stage = "call"
    try:
        with pipe:
            nodes = [lib.fn.external_source(source=_source(s), layout=lay)
                     for s, lay in zip(inputs, layouts, strict=True)]
            kwargs = {k: arg_value(v, lib.types) for k, v in case.get("args", {}).items()}
            kwargs.update({k: lib.fn.external_source(source=_source(v))
                           for k, v in arg_inputs.items()})
            out = operator(lib, case["op"])(*nodes, **kwargs)
            pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
        stage = "build"
        pipe.build()
        stage = "run"
        got = pipe.run()
    except Exception as e:  # noqa: BLE001 - the outcome is what is recorded
        return error_outcome(stage, e)
    outputs = []
    for tl in got:
        samples = [np.asarray(tl[j]) for j in range(len(tl))]
        outputs.append({"layout": str(tl.layout()), "samples": [encode_array(s) for s in samples]})
    return {"outputs": outputs}


def load() -> list[dict]:
    return json.loads(DATA.read_text())["cases"]


def cases(prefix: str) -> list[dict]:
    """The recorded cases whose name starts with ``prefix`` ("cast", "pad", ...)."""
    return [c for c in load() if c["name"].split(":")[0] == prefix]


def check_case(case: dict, got: dict) -> None:
    """stoker's outcome ``got`` against DALI's recorded one."""
    if check_error(case, got):
        return
    want, name = case["result"], case["name"]
    assert len(got["outputs"]) == len(want["outputs"])
    for k, (g, w) in enumerate(zip(got["outputs"], want["outputs"], strict=True)):
        assert g["layout"] == w["layout"], f"{name}: output {k} layout {g['layout']!r}, " \
            f"DALI {w['layout']!r}"
        assert len(g["samples"]) == len(w["samples"])
        for j, (gs, ws) in enumerate(zip(g["samples"], w["samples"], strict=True)):
            check_samples(f"{name}: output {k} sample {j}", decode_array(gs), decode_array(ws),
                          atol=case.get("atol", 0))
