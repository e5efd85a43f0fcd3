"""Records DALI 2.4's fn.readers.mxnet outcomes on the cases of
tests/mxnet_cases.py into tests/data/dali_mxnet.json.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/mxnet_reader.py

The .rec files are written by tests/container_writers.py (split records too) into a
temporary folder; each case's outcome is its reader_meta and outputs (dtype, shape,
values and source_info of every sample) or its error. The replay:
tests/readers/test_mxnet_vs_dali.py.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

import mxnet_cases  # noqa: E402
from dali_cases import record_reader_cases  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_mxnet.json"

if __name__ == "__main__":
    record_reader_cases(mxnet_cases, OUT)
