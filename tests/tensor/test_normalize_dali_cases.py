"""fn.normalize against outcomes recorded from DALI 2.4 (tests/data/record/window_cases.py).

Per-sample mean and stddev inputs on batches whose samples differ in shape (each shaped
like its own sample's reduced shape), ddof at or past the number of reduced values (DALI
takes the variance as 0, then adds epsilon), batch=True, every output type and the other
arguments, and the errors DALI raises (type and stage).
"""

from __future__ import annotations

import pytest
from window_cases import NORMALIZE_CASES, Lib, check_case, decode_array, load, run_case

import stoker

CASES = load(NORMALIZE_CASES)
LIB = Lib(stoker.fn, stoker.types, stoker.Pipeline)


# DALI 2.4 takes 1/sqrt with an approximate reciprocal square root refined once (SSE's
# rsqrtss: its bits depend on the processor), stoker with an exact one: float outputs
# agree to a few units in the last place (of the output, or of values near 0: of the terms).
FLOAT_TOL = {"rtol": 2e-6, "atol": 4e-6}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_normalize_matches_dali(case):
    floats = case["chain"][0]["args"].get("dtype", {"dali_type": "FLOAT"}) == {
        "dali_type": "FLOAT"}
    check_case({**case, **FLOAT_TOL} if floats else case, run_case(case, LIB))


def test_ddof_past_the_count_takes_the_variance_as_zero():
    """[5.0] with mean=1, ddof=2, epsilon=0.25: (5 - 1) / sqrt(0 + 0.25) = 8 (DALI 2.4)."""
    case = next(c for c in CASES if c["name"] == "normalize:ddof2_eps0.25_given_mean")
    got = run_case(case, LIB)
    assert decode_array(got["samples"][0]).tolist() == [8.0]  # DALI: 7.9999995 (rsqrtss)
    check_case({**case, **FLOAT_TOL}, got)
