"""fn.readers.caffe and caffe2 against DALI 2.4's recorded outcomes
(tests/data/dali_caffe.json, recorder: tests/data/record/caffe_reader.py): the same
samples in the same (key) order across databases, raw and encoded Datums, every label
type DALI handles, additional protos and boxes, sharding; errors at the same stage.

Where DALI 2.4 fails on valid input, stoker's outputs are checked against hand-computed
values instead (label_type 1 and 3, label_type 4 on values that have a label proto) and a
missing proto, on which DALI crashes, is an error naming the entry."""

from __future__ import annotations

import json
import pathlib

import pytest
from caffe_cases import CASES, run_case, write_datasets
from dali_cases import Lib, check_error
from reader_cases import check_outputs

from stoker import Pipeline, fn, types

RECORDED = {c["name"]: c for c in json.loads(
    (pathlib.Path(__file__).parents[1] / "data" / "dali_caffe.json").read_text())["cases"]}
# What stoker gives where DALI fails: per output, the samples' (dtype, values).
OURS = {
    "caffe2_sparse": [[("uint8", list(b"JPEG0")), ("uint8", list(b"JPEG1"))],
                      [("int32", [0, 1, 0, 1, 0]), ("int32", [0, 0, 0, 0, 0])]],
    "caffe2_weighted": [[("uint8", list(b"JPEG0"))], [("float32", [0, 0.5, 0, 0.75, 0])]],
    "caffe2_no_label": [[("uint8", list(b"JPEG0")), ("uint8", list(b"JPEG1"))]],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("caffe_cases"))
    write_datasets(path)
    return path


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_caffe_readers_match_dali(case, folder):
    name = case[0]
    recorded = RECORDED[name]
    got = run_case(Lib(fn, types, Pipeline), folder, case)
    if name in OURS:
        assert "error" in recorded["result"]  # still failing in DALI
        outputs = got["outputs"][0]
        assert [[(s[0], s[2]) for s in out] for out in outputs] == OURS[name]
        return
    if "crash" in recorded["result"]:
        assert got["error"]["stage"] == "run", got
        assert "TensorProtos; the reader's arguments need" in got["error"]["message"]
        return
    if not check_error(recorded, got):
        check_outputs(name, got, recorded["result"], info_outputs=(0,))
