"""Records DALI 2.4's outcomes of tests/python_function_cases.py into
tests/data/python_function.json.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/python_function.py

Per case: the outputs (per output, per sample: dtype, shape, values) and layouts of the
first batch, or the error DALI raised (type and message). Also records DALI's Python
signatures of the three operators. torch_python_function cannot run under DALI 2.4 on a
CPU-only torch (it makes a torch.cuda.Stream on every call): its recorded error says so.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

import nvidia.dali as dali  # noqa: E402
import nvidia.dali.fn as fn  # noqa: E402
import nvidia.dali.plugin.pytorch as dali_torch  # noqa: E402
from nvidia.dali import pipeline_def  # noqa: E402
from python_function_cases import BATCH, CASES, build  # noqa: E402

OUT = TESTS / "data" / "python_function.json"


def encode(samples) -> list:
    return [{"dtype": str(np.asarray(s).dtype), "shape": list(np.shape(s)),
             "values": np.asarray(s).ravel().tolist()} for s in samples]


def outcome(make) -> dict:
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return make()

    try:
        p = pipe()
        p.build()
        outs = p.run()
    except Exception as e:
        return {"error": {"type": type(e).__name__, "message": str(e)}}
    return {"outputs": [encode([np.asarray(t) for t in o]) for o in outs],
            "layouts": [o.layout() for o in outs]}


def main() -> None:
    record = {"dali_version": dali.__version__, "signatures": {
        "python_function": str(inspect.signature(fn.python_function)),
        "dl_tensor_python_function": str(inspect.signature(fn.dl_tensor_python_function)),
        "torch_python_function": str(inspect.signature(dali_torch.fn.torch_python_function)),
    }, "cases": {}}
    for name in CASES:
        record["cases"][name] = outcome(lambda name=name: build(fn, fn.external_source, name))
    record["torch_python_function_cpu"] = outcome(lambda: dali_torch.fn.torch_python_function(
        fn.external_source(source=lambda info: np.zeros(2, np.float32), batch=False),
        function=lambda t: t * 2))
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
