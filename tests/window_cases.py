"""Crop, slice and normalize pipelines whose outcome was recorded from DALI 2.4.

The data: tests/data/dali_window_cases.json (crop, crop_mirror_normalize, slice and chains
that stoker fuses) and tests/data/dali_normalize_cases.json (fn.normalize); the recorder:
tests/data/record/window_cases.py. Both the recorder (with DALI) and the replay tests (with
stoker) run a case with ``run_case`` here, so a case means the same pipeline on both.

A case is ``external_source`` inputs (lists of numpy samples, with layouts) and a chain of
operator calls, each applied to the previous one's output (the first to input 0), with
constant arguments and per-sample argument inputs; what came out is stored with it: the
last call's samples and layout, or the error with the stage that raised it ("call": the
``fn`` call; "build"; "run") and its builtin types. ``match`` is a phrase of DALI's error
message that stoker's must contain too (code written for DALI may look for it);
``earlier_ok`` marks errors stoker finds at an earlier stage on purpose.
"""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import zlib
from typing import Any

import numpy as np
from dali_cases import Lib, arg_value, check_error, check_samples, error_outcome, operator

DATA = pathlib.Path(__file__).parent / "data"
WINDOW_CASES = DATA / "dali_window_cases.json"
NORMALIZE_CASES = DATA / "dali_normalize_cases.json"


def encode_array(a: Any) -> dict:
    """A sample as JSON: its bytes compressed (images are larger than op_cases' lists)."""
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "z": base64.b64encode(zlib.compress(a.tobytes(), 9)).decode()}


def decode_array(d: dict) -> np.ndarray:
    raw = zlib.decompress(base64.b64decode(d["z"]))
    return np.frombuffer(raw, d["dtype"]).reshape(d["shape"]).copy()


def _source(samples: list) -> Any:
    return lambda: samples


def _call(lib: Lib, step: dict, nodes: list) -> Any:
    kwargs = {k: arg_value(v, lib.types) for k, v in step.get("args", {}).items()}
    kwargs.update({k: lib.fn.external_source(source=_source([decode_array(s) for s in v]))
                   for k, v in step.get("arg_inputs", {}).items()})
    return operator(lib, step["op"])(*nodes, **kwargs)


def run_case(case: dict, lib: Lib) -> dict:
    """Runs one case; returns {"layout", "samples"} or {"error": {...}}."""
    inputs = [[decode_array(s) for s in samples] for samples in case["inputs"]]
    layouts = case.get("layouts") or [None] * len(inputs)
    pipe = lib.Pipeline(batch_size=len(inputs[0]), num_threads=1, device_id=None, seed=1)
    stage = "call"
    try:
        with pipe:
            sources = [lib.fn.external_source(source=_source(s), layout=lay)
                       for s, lay in zip(inputs, layouts, strict=True)]
            out = sources[0]
            for step in case["chain"]:
                extra = [sources[i] for i in step.get("more_inputs", [])]
                out = _call(lib, step, [out, *extra])
            pipe.set_outputs(out)
        stage = "build"
        pipe.build()
        stage = "run"
        (got,) = pipe.run()
    except Exception as e:  # noqa: BLE001 - the outcome is what is recorded
        return error_outcome(stage, e)
    return {"layout": str(got.layout()),
            "samples": [encode_array(np.asarray(got[j])) for j in range(len(got))]}


def pool_arrays(node: Any, pool: dict) -> Any:
    """``node`` with each encoded array moved into ``pool`` (stored once, however many
    cases share it) and replaced by {"ref": key}."""
    if isinstance(node, dict) and "z" in node:
        key = hashlib.sha1(json.dumps(node, sort_keys=True).encode()).hexdigest()[:12]
        pool[key] = node
        return {"ref": key}
    if isinstance(node, dict):
        return {k: pool_arrays(v, pool) for k, v in node.items()}
    if isinstance(node, list):
        return [pool_arrays(v, pool) for v in node]
    return node


def _resolve(node: Any, pool: dict) -> Any:
    if isinstance(node, dict) and "ref" in node:
        return pool[node["ref"]]
    if isinstance(node, dict):
        return {k: _resolve(v, pool) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, pool) for v in node]
    return node


def load(path: pathlib.Path) -> list[dict]:
    data = json.loads(path.read_text())
    return _resolve(data["cases"], data["arrays"])


def check_case(case: dict, got: dict) -> None:
    """stoker's outcome ``got`` against DALI's recorded one."""
    if check_error(case, got):
        return
    want, name = case["result"], case["name"]
    assert got["layout"] == want["layout"], f"{name}: layout {got['layout']!r}, DALI " \
        f"{want['layout']!r}"
    assert len(got["samples"]) == len(want["samples"])
    for j, (gs, ws) in enumerate(zip(got["samples"], want["samples"], strict=True)):
        check_samples(f"{name}: sample {j}", decode_array(gs), decode_array(ws),
                      atol=case.get("atol", 0), rtol=case.get("rtol", 0))
