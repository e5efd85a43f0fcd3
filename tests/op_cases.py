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
from dataclasses import dataclass
from typing import Any

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "dali_op_cases.json"


@dataclass
class Lib:
    """The library a case runs on: DALI's or stoker's modules."""

    fn: Any
    types: Any
    Pipeline: Any


def encode_array(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": a.ravel().tolist()}


def decode_array(d: dict) -> np.ndarray:
    return np.array(d["data"], dtype=d["dtype"]).reshape(d["shape"])


def _value(v: Any, types: Any) -> Any:
    """An argument as stored: plain JSON, or {"dali_type": name} / {"image_type": name}."""
    if isinstance(v, dict) and "dali_type" in v:
        return getattr(types, v["dali_type"])
    if isinstance(v, dict) and "image_type" in v:
        return getattr(types.DALIImageType, v["image_type"])
    return v


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
            kwargs = {k: _value(v, lib.types) for k, v in case.get("args", {}).items()}
            kwargs.update({k: lib.fn.external_source(source=_source(v))
                           for k, v in arg_inputs.items()})
            op: Any = lib.fn
            for part in case["op"].split("."):
                op = getattr(op, part)
            out = op(*nodes, **kwargs)
            pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
        stage = "build"
        pipe.build()
        stage = "run"
        got = pipe.run()
    except Exception as e:  # noqa: BLE001 - the outcome is what is recorded
        # Every builtin the error is (stoker's classes subclass several), most derived first.
        bases = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
        return {"error": {"stage": stage, "type": bases[0], "bases": bases,
                          "message": str(e)}}
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
    want = case["result"]
    name = case["name"]
    if "error" in want:
        assert "error" in got, (f"{name}: DALI raised {want['error']['type']} at "
                                f"{want['error']['stage']}, stoker gave outputs")
        err, ref = got["error"], want["error"]
        # `except <DALI's type>` must catch stoker's error.
        assert ref["type"] in err["bases"], f"{name}: {err} vs DALI's {ref['type']}"
        order = ("call", "build", "run")
        same = err["stage"] == ref["stage"] or (
            case.get("earlier_ok") and order.index(err["stage"]) < order.index(ref["stage"]))
        assert same, f"{name}: raised at {err['stage']}, DALI at {ref['stage']}: " \
            f"{err['message']}"
        if case.get("match"):
            assert case["match"] in err["message"], f"{name}: {err['message']!r}"
        return
    assert "outputs" in got, f"{name}: stoker raised {got['error']}"
    assert len(got["outputs"]) == len(want["outputs"])
    for k, (g, w) in enumerate(zip(got["outputs"], want["outputs"], strict=True)):
        assert g["layout"] == w["layout"], f"{name}: output {k} layout {g['layout']!r}, " \
            f"DALI {w['layout']!r}"
        assert len(g["samples"]) == len(w["samples"])
        for j, (gs, ws) in enumerate(zip(g["samples"], w["samples"], strict=True)):
            a, b = decode_array(gs), decode_array(ws)
            where = f"{name}: output {k} sample {j}"
            assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} " \
                f"vs DALI {b.dtype}{b.shape}"
            tol = case.get("atol", 0)
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=tol,
                                       rtol=0, err_msg=where)
