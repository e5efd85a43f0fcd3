"""What the replays of recorded DALI outcomes share (op_cases.py, window_cases.py).

A recorded case runs the same pipeline with DALI (in its recorder) and with stoker (in
its test), through ``Lib``; its outcome is the outputs or the error, with the stage that
raised it ("call": the ``fn`` call; "build"; "run") and every builtin type the error is.
``check_error`` and ``check_samples`` compare stoker's outcome with DALI's;
``record_reader_cases`` is the container readers' recorders (mxnet, webdataset).
"""

from __future__ import annotations

import json
import pathlib
import tempfile
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

STAGES = ("call", "build", "run")


@dataclass
class Lib:
    """The library a case runs on: DALI's or stoker's modules."""

    fn: Any
    types: Any
    Pipeline: Any


def arg_value(v: Any, types: Any) -> Any:
    """An argument as stored: plain JSON, or {"dali_type": name} / {"image_type": name}."""
    if isinstance(v, dict) and "dali_type" in v:
        return getattr(types, v["dali_type"])
    if isinstance(v, dict) and "image_type" in v:
        return getattr(types.DALIImageType, v["image_type"])
    return v


def operator(lib: Lib, path: str) -> Any:
    op: Any = lib.fn
    for part in path.split("."):
        op = getattr(op, part)
    return op


def error_outcome(stage: str, e: BaseException) -> dict:
    # Every builtin the error is (stoker's classes subclass several), most derived first.
    bases = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
    return {"error": {"stage": stage, "type": bases[0], "bases": bases, "message": str(e)}}


def with_options(case: dict, **options: Any) -> dict:
    """``case`` with the options that are set (layouts, match, earlier_ok, atol, ...)."""
    case.update((k, v) for k, v in options.items() if v is not None and v is not False)
    return case


def check_error(case: dict, got: dict) -> bool:
    """Where DALI raised: stoker raised too, at the same stage (or earlier where the case
    allows), with an error ``except <DALI's type>`` catches and, where the case says,
    DALI's words. Returns whether DALI raised (nothing more to compare then)."""
    want, name = case["result"], case["name"]
    if "error" not in want:
        assert "error" not in got, f"{name}: stoker raised {got['error']}"
        return False
    assert "error" in got, (f"{name}: DALI raised {want['error']['type']} at "
                            f"{want['error']['stage']}, stoker gave outputs")
    err, ref = got["error"], want["error"]
    assert ref["type"] in err["bases"], f"{name}: {err} vs DALI's {ref['type']}"
    same = err["stage"] == ref["stage"] or (
        case.get("earlier_ok") and STAGES.index(err["stage"]) < STAGES.index(ref["stage"]))
    assert same, f"{name}: raised at {err['stage']}, DALI at {ref['stage']}: {err['message']}"
    if case.get("match"):
        assert case["match"].lower() in err["message"].lower(), \
            f"{name}: {err['message']!r} lacks {case['match']!r}"
    return True


def check_samples(where: str, a: np.ndarray, b: np.ndarray, atol: float = 0,
                  rtol: float = 0) -> None:
    """stoker's sample ``a`` equals DALI's ``b``: type, shape, values within
    ``atol + rtol * |b|`` (NaN equals NaN, an infinity itself)."""
    assert a.dtype == b.dtype and a.shape == b.shape, \
        f"{where}: {a.dtype}{a.shape} vs DALI {b.dtype}{b.shape}"
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    tol = atol + rtol * np.abs(b64) if rtol else atol
    with np.errstate(invalid="ignore"):
        diff = np.abs(a64 - b64)
    same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
    bad = ~(same | (diff <= tol))
    assert not bad.any(), f"{where}: {int(bad.sum())} of {a.size} values differ from " \
        f"DALI's by more than atol={atol}, rtol={rtol} (max {np.nanmax(diff):g})"


def record_reader_cases(cases: ModuleType, out: pathlib.Path) -> None:
    """Runs the CASES of a reader's cases module with DALI on the datasets its
    ``write_datasets`` writes into a temporary folder, and writes their outcomes (from its
    ``run_case``) to ``out`` as JSON."""
    from nvidia.dali import fn, types
    from nvidia.dali.pipeline import Pipeline

    lib = Lib(fn, types, Pipeline)
    with tempfile.TemporaryDirectory() as folder:
        sets = cases.write_datasets(folder)
        done = [{"name": c[0], "result": cases.run_case(lib, sets, c, folder)}
                for c in cases.CASES]
    out.write_text(json.dumps({"dali": "2.4.0", "cases": done}) + "\n")
    for c in done:
        r = c["result"]
        print(c["name"], r["error"]["message"][:120] if "error" in r else r.get("meta"))
