"""fn.readers.webdataset against DALI 2.4's recorded outcomes
(tests/data/dali_webdataset.json, recorder: tests/data/record/webdataset_reader.py): the
same samples, reader_meta and order for GNU, PAX and ustar shards, index files v1.1 and
v1.2, missing-member behaviours, ext sets, dtypes and sharding; errors at the same stage.

source_info: DALI gives each output its own member's (and "" for a missing one), stoker
one per sample (the first output's member): compared for output 0 where DALI has one."""

from __future__ import annotations

import json
import pathlib
import warnings

import pytest
from dali_cases import Lib, check_error
from reader_cases import check_outputs
from webdataset_cases import CASES, run_case, write_datasets

from stoker import Pipeline, fn, types

RECORDED = {c["name"]: c for c in json.loads(
    (pathlib.Path(__file__).parents[1] / "data" / "dali_webdataset.json").read_text())["cases"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("webdataset_cases"))
    return path, write_datasets(path)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_webdataset_reader_matches_dali(case, folder):
    recorded = RECORDED[case[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # several members for one output
        got = run_case(Lib(fn, types, Pipeline), folder[1], case, folder[0])
    if not check_error(recorded, got):
        check_outputs(case[0], got, recorded["result"], info_outputs=(0,))
