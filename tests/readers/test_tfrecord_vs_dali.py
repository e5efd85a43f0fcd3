"""fn.readers.tfrecord against DALI 2.4's recorded outcomes (tests/data/dali_tfrecord.json,
recorder: tests/data/record/tfrecord_reader.py): the same samples (dtype, shape, values,
source_info) in the same order, batch by batch, sharded, padded and sticky; errors at the
same stage or earlier (a string feature of several values: at the call, DALI at run)."""

from __future__ import annotations

import json
import pathlib

import pytest
from dali_cases import Lib, check_error
from reader_cases import check_outputs
from tfrecord_cases import CASES, run_case, write_datasets

import stoker.tfrecord as tfrec
from stoker import Pipeline, fn, types

RECORDED = {c["name"]: c for c in json.loads(
    (pathlib.Path(__file__).parents[1] / "data" / "dali_tfrecord.json").read_text())["cases"]}
EARLIER = {"string_varlen", "string_two_values"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("tfrecord_cases"))
    return path, write_datasets(path)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tfrecord_reader_matches_dali(case, folder):
    recorded = dict(RECORDED[case[0]])
    if case[0] in EARLIER:
        recorded["earlier_ok"] = True
    got = run_case(Lib(fn, types, Pipeline), tfrec, folder[1], case, folder[0])
    if not check_error(recorded, got):
        check_outputs(case[0], got, recorded["result"])


def test_every_dali_argument_exists_with_dalis_default():
    from stoker.operators.machinery.registry import REGISTRY, all_args

    ours = all_args(REGISTRY["readers.tfrecord"])
    schema = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                         "dali_tfrecord.json").read_text())["schema_args"]
    for name, default in schema.items():
        if name in ("feature_names", "bytes_per_sample_hint"):  # made by DALI's wrapper / common
            continue
        assert name in ours, name
        if default is None:
            continue
        want = {"True": True, "False": False}.get(default, default)
        if isinstance(want, str) and want.lstrip("-").isdigit():
            want = int(want)
        assert ours[name].default == want, (name, ours[name].default, default)
