"""crop, crop_mirror_normalize and slice against outcomes recorded from DALI 2.4.

The cases (tests/data/record/window_cases.py) cover windows inside, overhanging one side
and both sides, with out_of_bounds_policy "pad", "trim_to_shape" and "error", rounding
"round" and "truncate", every layout DALI takes (images, sequences, volumes; depth windows
with crop_d or a 3-value crop, the frames of a sequence as its depth), per-sample windows,
and the chains stoker fuses (crop -> crop_mirror_normalize; decoders.image -> crop, slice,
crop_mirror_normalize). Each runs with the fusion rules on and off: fused or not, stoker
must give DALI's pixels, or DALI's error type at DALI's stage (or, where marked, earlier).
"""

from __future__ import annotations

import numpy as np
import pytest
from window_cases import WINDOW_CASES, Lib, check_case, load, run_case

import stoker
from stoker.graph import fuse

CASES = load(WINDOW_CASES)
LIB = Lib(stoker.fn, stoker.types, stoker.Pipeline)


def _case(name: str) -> dict:
    return next(c for c in CASES if c["name"] == name)


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fusion(request, monkeypatch):
    monkeypatch.setattr(fuse, "ENABLED", request.param)
    return request.param


# Output types DALI 2.4 refuses ("Not supported output type") that stoker gives on purpose
# (README, "Differences from DALI"): the values converted as for the supported types.
MORE_TYPES = ("crop:dtype_INT8", "cmn:dtype_INT16")


@pytest.mark.parametrize("case", [
    c for c in CASES if not c["name"].startswith("chain:") and c["name"] not in MORE_TYPES],
    ids=lambda c: c["name"])
def test_window_matches_dali(case):
    check_case(case, run_case(case, LIB))


@pytest.mark.parametrize("name", MORE_TYPES)
def test_output_types_dali_refuses_are_converted_like_the_others(name):
    case = _case(name)
    assert "Not supported output type" in case["result"]["error"]["message"]
    step = case["chain"][0]
    want_type = np.dtype(step["args"]["dtype"]["dali_type"].lower())
    wide = {**case, "chain": [{**step, "args": {**step["args"], "dtype": {"dali_type": "FLOAT"}}}]}
    got, ref = run_case(case, LIB), run_case(wide, LIB)
    from window_cases import decode_array

    for g, r in zip(got["samples"], ref["samples"], strict=True):
        g, r = decode_array(g), decode_array(r)
        assert g.dtype == want_type
        if name.startswith("cmn:"):  # data: rounded half away from zero, saturated
            info = np.iinfo(want_type)
            want = np.clip(np.copysign(np.floor(np.abs(r) + 0.5), r), info.min, info.max)
            np.testing.assert_array_equal(g, want)
        else:  # a crop whose window leaves the image: cast as C++ casts (DALI's padding copy)
            np.testing.assert_array_equal(g, np.trunc(r).astype(np.int64).astype(want_type))


@pytest.mark.parametrize("case", [c for c in CASES if c["name"].startswith("chain:")],
                         ids=lambda c: c["name"])
def test_fused_chain_matches_dali(case, fusion):
    check_case(case, run_case(case, LIB))


def test_issue20_item3_image_sits_where_dali_puts_it():
    """crop=(140, 120), pad, on a 97x131 image: the 43 extra rows split 22 above, 21
    below (-21.5 rounds away from zero), the 11 spare columns 6 left (5.5 -> 6)."""
    case = _case("crop:issue20_item3_pad_140x120_of_97x131")
    got = run_case(case, LIB)
    from window_cases import decode_array

    out = decode_array(got["samples"][0])
    img = decode_array(case["inputs"][0][0])
    np.testing.assert_array_equal(out[22:119], img[:, 6:126])
    assert (out[:22] == [10, 20, 30]).all() and (out[119:] == [10, 20, 30]).all()
    check_case(case, got)
