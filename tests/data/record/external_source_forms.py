"""Records what DALI 2.4 does with each form of data given to ``fn.external_source`` (as a
source's return value, batch and per-sample mode, ``num_outputs`` 1 to 3) and to
``feed_input``: tests/data/dali_external_source_forms.json, replayed against stoker by
tests/sources/test_external_source_vs_dali.py. The cases are tests/external_source_cases.py.

Re-run (from the repository root, DALI installed in /work/dali-venv; the torch cases need
torch there: /work/dali-venv/bin/pip install torch==2.13.0, the CPU build):
    /work/dali-venv/bin/python tests/data/record/external_source_forms.py
"""

from __future__ import annotations

import json
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "tests")]

import nvidia.dali as dali  # noqa: E402
from external_source_cases import CASES, Lib, outcome  # noqa: E402
from nvidia.dali import fn, pipeline_def, types  # noqa: E402
from nvidia.dali.tensors import TensorCPU, TensorListCPU  # noqa: E402

try:
    import torch
except ImportError:  # the torch cases are then recorded as missing
    torch = None

OUT = ROOT / "tests" / "data" / "dali_external_source_forms.json"


def main() -> None:
    warnings.simplefilter("ignore")
    lib = Lib(fn=fn, types=types, pipeline_def=pipeline_def, TensorListCPU=TensorListCPU,
              TensorCPU=TensorCPU, torch=torch)
    table = {}
    for name, make in CASES.items():
        case = make(lib)
        if case.torch and torch is None:
            print(f"{name}: skipped (no torch)")
            continue
        table[name] = outcome(lib, case)
        got = table[name]
        print(f"{name}: {got.get('stage', 'ok')} {got.get('error', '')}", flush=True)
    doc = {"dali_version": dali.__version__, "torch": getattr(torch, "__version__", None),
           "cases": table}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} cases)")


if __name__ == "__main__":
    main()
