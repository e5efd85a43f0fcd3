"""Records DALI 2.4's fn.readers.webdataset outcomes on the cases of
tests/webdataset_cases.py into tests/data/dali_webdataset.json.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/webdataset_reader.py

The shards are written by tests/container_writers.py (GNU, PAX and ustar tars) into a
temporary folder; each case's outcome is its reader_meta and outputs (dtype, shape,
values and source_info of every sample) or its error. The replay:
tests/readers/test_webdataset_vs_dali.py.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

from dali_cases import Lib  # noqa: E402
from nvidia.dali import fn, types  # noqa: E402
from nvidia.dali.pipeline import Pipeline  # noqa: E402
from webdataset_cases import CASES, run_case, write_datasets  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_webdataset.json"


def main() -> None:
    lib = Lib(fn, types, Pipeline)
    with tempfile.TemporaryDirectory() as folder:
        sets = write_datasets(folder)
        cases = [{"name": c[0], "result": run_case(lib, sets, c, folder)} for c in CASES]
    OUT.write_text(json.dumps({"dali": "2.4.0", "cases": cases}) + "\n")
    for c in cases:
        r = c["result"]
        print(c["name"], r["error"]["message"][:120] if "error" in r else r.get("meta"))


if __name__ == "__main__":
    main()
