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

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

import webdataset_cases  # noqa: E402
from dali_cases import record_reader_cases  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_webdataset.json"

if __name__ == "__main__":
    record_reader_cases(webdataset_cases, OUT)
