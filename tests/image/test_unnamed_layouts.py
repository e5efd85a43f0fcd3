"""Image operators name an unnamed input's axes as DALI 2.4 does (recorded:
tests/data/dali_unnamed_layouts.json, by tests/data/record/unnamed_layouts.py)."""

from __future__ import annotations

import json
import pathlib

import pytest
from unnamed_layout_cases import outcome

import stoker

RECORDED = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                       "dali_unnamed_layouts.json").read_text())["outcomes"]


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_output_layout_of_unnamed_input_matches_dali(case):
    name, ndim = case.rsplit(":", 1)
    assert outcome(stoker, name, int(ndim[0])) == RECORDED[case]
