"""Operator schemas against DALI 2.4's own (tests/data/dali_schema.json, read from DALI).

For every operator both libraries have, each DALI argument must exist in stoker with the
same default, and arguments DALI lets take per-sample DataNodes must accept them here too.
Gaps are listed in KNOWN_GAPS with the reason, so none is silent.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import types
from stoker.operators.machinery.registry import REGISTRY, all_args

DALI = json.loads((pathlib.Path(__file__).parent / "data" / "dali_schema.json").read_text())
# DALI's GPU-only video readers, recorded apart (tests/data/record/video_schema.py).
DALI["ops"].update(json.loads((pathlib.Path(__file__).parent / "data" /
                               "dali_video_schema.json").read_text())["ops"])
COMMON = set(DALI["common_args"]) | {"seed"}

# (operator, argument): why stoker does not have it (yet).
KNOWN_GAPS = {
}
# DALI defaults that are placeholders for "depends on the input": stoker documents its own.
NO_DEFAULT_IN_DALI = {None, ""}


def _parse_default(text: str, dali_type: str):
    if text in NO_DEFAULT_IN_DALI:
        return None
    if dali_type == "DATA_TYPE":
        return types.DALIDataType(int(text))
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1]
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("["):
        inner = [v.strip() for v in text.strip("[]").split(",") if v.strip()]
        if all(v[:1] == v[-1:] == "'" for v in inner):  # a list of strings (file_filters)
            return [v[1:-1] for v in inner]
        return [float(v) for v in inner]
    return float(text)


def _same(ours, theirs) -> bool:
    if isinstance(theirs, list):
        ours = ours if isinstance(ours, list) else [ours]
        return len(ours) == len(theirs) and all(
            a == b if isinstance(b, str) else abs(float(a) - b) < 1e-5
            for a, b in zip(ours, theirs, strict=True))
    if isinstance(theirs, float) and not isinstance(ours, bool | str):
        return ours is not None and abs(float(ours) - theirs) < 1e-5
    return ours == theirs


SHARED = sorted(name for name in REGISTRY if name in DALI["ops"] and name != "external_source")


def test_most_stoker_operators_are_checked_against_dali():
    public = [n for n in REGISTRY if not n.startswith("_")]
    assert len(SHARED) >= len(public) - 2, sorted(set(public) - set(SHARED))


@pytest.mark.parametrize("name", SHARED)
def test_arguments_and_defaults_match_dali(name):
    ours = all_args(REGISTRY[name])
    problems = []
    for arg, spec in DALI["ops"][name]["args"].items():
        if spec.get("deprecated") or arg in ("bytes_per_sample_hint",):
            continue
        if (name, arg) in KNOWN_GAPS:
            assert arg not in ours, f"{name}.{arg} exists now: remove it from KNOWN_GAPS"
            continue
        if arg not in ours:
            problems.append(f"missing argument {arg!r}")
            continue
        want = _parse_default(spec.get("default"), spec["type"])
        if want is not None and not _same(ours[arg].default, want):
            problems.append(f"{arg}: default {ours[arg].default!r}, DALI {want!r}")
        if spec.get("tensor_arg") and not ours[arg].per_sample and arg not in COMMON:
            problems.append(f"{arg}: DALI accepts a per-sample DataNode, stoker does not")
    assert not problems, f"fn.{name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", SHARED)
def test_input_counts_match_dali(name):
    spec, schema = DALI["ops"][name], REGISTRY[name]
    assert schema.min_inputs == spec["min_inputs"], "minimum number of inputs"
    if spec["max_inputs"] < 100:
        assert schema.max_inputs == spec["max_inputs"], "maximum number of inputs"
