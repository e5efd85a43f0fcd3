"""Records DALI 2.4's outcomes of tests/conditional_cases.py into tests/data/conditionals.json.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/conditionals.py

Per case: the first batch's outputs (per output, per sample: dtype, shape, values), or the
error DALI raised (its type, the stage: "trace" while the pipeline function runs, else
"run", and the message's last lines).
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

import nvidia.dali as dali  # noqa: E402
import nvidia.dali.fn as fn  # noqa: E402
import nvidia.dali.types as types  # noqa: E402
from conditional_cases import BATCH, CASES, source_r, source_x  # noqa: E402
from nvidia.dali import pipeline_def  # noqa: E402

OUT = TESTS / "data" / "conditionals.json"


def encode(samples) -> list:
    return [{"dtype": str(np.asarray(s).dtype), "shape": list(np.shape(s)),
             "values": np.asarray(s).ravel().tolist()} for s in samples]


def outcome(case) -> dict:
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=source_x, batch=False)
        r = fn.external_source(source=source_r, batch=False)
        return case(fn, types, x, r)

    stage = "trace"
    try:
        p = pipe()
        stage = "run"
        p.build()
        outs = p.run()
    except Exception as e:
        return {"error": {"type": type(e).__name__, "stage": stage,
                          "message": "\n".join(str(e).strip().splitlines()[-8:])}}
    return {"outputs": [encode([np.asarray(t) for t in o]) for o in outs]}


def main() -> None:
    record = {"dali_version": dali.__version__,
              "cases": {name: outcome(case) for name, case in CASES.items()}}
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
