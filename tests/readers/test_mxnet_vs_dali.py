"""fn.readers.mxnet against DALI 2.4's recorded outcomes (tests/data/dali_mxnet.json,
recorder: tests/data/record/mxnet_reader.py): images and labels (one or several, split
records joined), one index over several .rec files (unsorted, with repeats), sharding;
errors at the same stage. source_info: DALI gives the label output none; compared for the
images."""

from __future__ import annotations

import json
import pathlib

import pytest
from dali_cases import Lib, check_error
from mxnet_cases import CASES, run_case, write_datasets
from reader_cases import check_outputs

from stoker import Pipeline, fn, types

RECORDED = {c["name"]: c for c in json.loads(
    (pathlib.Path(__file__).parents[1] / "data" / "dali_mxnet.json").read_text())["cases"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("mxnet_cases"))
    return path, write_datasets(path)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mxnet_reader_matches_dali(case, folder):
    recorded = dict(RECORDED[case[0]], earlier_ok=True)
    got = run_case(Lib(fn, types, Pipeline), folder[1], case, folder[0])
    if not check_error(recorded, got):
        check_outputs(case[0], got, recorded["result"], info_outputs=(0,))
