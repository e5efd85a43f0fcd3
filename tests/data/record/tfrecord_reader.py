"""Records DALI 2.4's fn.readers.tfrecord outcomes on the cases of tests/tfrecord_cases.py
into tests/data/dali_tfrecord.json.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/tfrecord_reader.py

The datasets are written by tests/container_writers.py into a temporary folder (the same
bytes each time); each case's outcome is its outputs (dtype, shape, values and
source_info of every sample, per iteration) or its error (stage, type, message). Also
stored: the backend schema's arguments and defaults (DALI's tfrecord is a Python wrapper,
so tests/data/dali_schema.json has no entry for it). The replay:
tests/readers/test_tfrecord_vs_dali.py.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

import nvidia.dali.tfrecord as tfrec  # noqa: E402
from dali_cases import Lib  # noqa: E402
from nvidia.dali import fn, pipeline_def, types  # noqa: E402, F401
from nvidia.dali.pipeline import Pipeline  # noqa: E402
from tfrecord_cases import CASES, run_case, write_datasets  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_tfrecord.json"


def schema_args() -> dict:
    """The backend schema's arguments (the Python wrapper builds features/feature_names):
    name -> default string (None: required or no default)."""
    from nvidia.dali import backend

    schema = backend.GetSchema("readers___TFRecord")
    return {a: (schema.GetArgumentDefaultValueString(a) if schema.HasArgumentDefaultValue(a)
                else None) for a in schema.GetArgumentNames()}


def main() -> None:
    lib = Lib(fn, types, Pipeline)
    with tempfile.TemporaryDirectory() as folder:
        sets = write_datasets(folder)
        cases = [{"name": c[0], "result": run_case(lib, tfrec, sets, c, folder)}
                 for c in CASES]
    OUT.write_text(json.dumps({"dali": "2.4.0", "schema_args": schema_args(), "cases": cases},
                              indent=None) + "\n")
    for c in cases:
        print(c["name"], "error" if "error" in c["result"] else "ok")


if __name__ == "__main__":
    main()
