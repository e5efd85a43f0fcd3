"""Records DALI 2.4's dynamic mode (nvidia.dali.experimental.dynamic) on the calls of
tests/dynamic_cases.py into tests/data/dali_dynamic.npz.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/dynamic_mode.py

For each case: every sample's array (``<case>/<i>``) and, in ``meta`` (JSON), the dtype,
layout and whether the result is a batch, or the error's type when DALI refuses the call.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

import nvidia.dali.experimental.dynamic as ndd  # noqa: E402
from dynamic_cases import CASES, outcome  # noqa: E402
from nvidia.dali import types  # noqa: E402


def main() -> None:
    arrays, meta = {}, {}
    for name, call in CASES.items():
        try:
            out = outcome(call(ndd, types))
        except Exception as e:  # recorded: the replay expects an error too
            meta[name] = {"error": type(e).__name__, "message": str(e)[:300]}
            continue
        for i, s in enumerate(out["samples"]):
            arrays[f"{name}/{i}"] = s
        meta[name] = {k: out[k] for k in ("dtype", "layout", "batch")} | {
            "n": len(out["samples"])}
    path = pathlib.Path(__file__).parents[1] / "dali_dynamic.npz"
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
