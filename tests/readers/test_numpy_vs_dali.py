"""fn.readers.numpy against DALI 2.4's recorded outcomes (tests/data/dali_numpy.json,
recorder: tests/data/record/numpy_reader.py): DALI's file_root listing and order,
file_list and files, regions of interest in every form (absolute, relative, shapes, axes,
out-of-bounds policies, Fortran order), sharding with padding; errors at the same stage
(or earlier: argument combinations fail at the call)."""

from __future__ import annotations

import json
import pathlib

import pytest
from dali_cases import Lib, check_error
from numpy_cases import CASES, run_case, write_datasets
from reader_cases import check_outputs

from stoker import Pipeline, fn, types

RECORDED = {c["name"]: c for c in json.loads(
    (pathlib.Path(__file__).parents[1] / "data" / "dali_numpy.json").read_text())["cases"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("numpy_cases"))
    write_datasets(path)
    return path


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_numpy_reader_matches_dali(case, folder):
    recorded = dict(RECORDED[case[0]], earlier_ok=True)
    got = run_case(Lib(fn, types, Pipeline), folder, case)
    if not check_error(recorded, got):
        check_outputs(case[0], got, recorded["result"])
