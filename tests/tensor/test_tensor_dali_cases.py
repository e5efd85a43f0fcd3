"""cast, cast_like, pad, slice's axes and argument checks, one_hot's axis_name: stoker
against the outcomes recorded from DALI 2.4 (tests/op_cases.py says how a case runs;
tests/data/record/op_outcomes.py recorded them)."""

from __future__ import annotations

import pytest
from op_cases import Lib, cases, check_case, run_case

from stoker import Pipeline, fn, types

STOKER = Lib(fn, types, Pipeline)
CASES = [c for prefix in ("cast", "cast_like", "pad", "slice", "one_hot")
         for c in cases(prefix)]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_dali(case):
    check_case(case, run_case(case, STOKER))
