"""Records DALI 2.4's fn.zeros / ones / full and their _like forms on a few calls.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/constructors.py
(writes tests/data/dali_constructors.json)

Each case names the operator, its inputs ("x": the batch below; otherwise a constant
given by value and, when not a Python number, numpy dtype) and its arguments; the file
keeps the outputs (dtype, shape, values, layout) or that DALI fails.
tests/tensor/test_constructors.py replays the cases on stoker.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
from nvidia.dali import fn, pipeline_def, types

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_constructors.json"
X = [[[[1], [2], [3]], [[4], [5], [6]]], [[[7], [8]]]]  # uint8 HWC samples (2,3,1), (1,2,1)


def F(value, dtype=None):
    return {"value": value, "dtype": dtype}


CASES = [
    ("zeros", [], {}), ("zeros", [], {"shape": [2, 3]}),
    ("ones", [], {"shape": [2, 3], "dtype": "UINT8", "layout": "HW"}),
    ("ones", [], {"shape": [4]}), ("zeros", [], {"shape": [2], "dtype": "BOOL"}),
    ("ones", [], {"shape": [2], "dtype": "FLOAT16"}),
    ("zeros", [], {"shape": [2, 3], "layout": "HWC"}), ("zeros", [], {"shape": [-1, 2]}),
    ("zeros_like", ["x"], {}), ("ones_like", ["x"], {"dtype": "INT32"}),
    ("ones_like", ["x"], {"dtype": "FLOAT64"}),
    ("full", [F(3.5, "float32")], {"shape": [2, 2]}), ("full", [F(5)], {"shape": [2]}),
    ("full", [F([1, 2, 3], "int32")], {"shape": [2, 3]}),
    ("full", [F([1, 2, 3], "int32")], {"shape": [2, 2]}),
    ("full", [F(True)], {"shape": [2]}), ("full", [F(-2, "int16")], {}),
    ("full_like", ["x", F(2.5, "float32")], {}), ("full_like", ["x", F(300.7, "float32")], {}),
    ("full_like", ["x", F(-1.5, "float32")], {}), ("full_like", ["x", F(300)], {}),
    ("full_like", ["x", F(True)], {}), ("full_like", ["x", F([1], "float32")], {}),
]


def batch() -> list[np.ndarray]:
    return [np.array(s, np.uint8) for s in X]


def constant(spec: dict):
    return spec["value"] if spec["dtype"] is None else np.array(spec["value"], spec["dtype"])


def build(fns, types_mod, op: str, inputs: list, args: dict, x):
    ins = [x if i == "x" else constant(i) for i in inputs]
    call = {k: (getattr(types_mod.DALIDataType, v) if k == "dtype" else v)
            for k, v in args.items()}
    return getattr(fns, op)(*ins, **call)


def record(op, inputs, args):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return build(fn, types, op, inputs, args, fn.external_source(batch, layout="HWC"))

    try:
        p = pipe()
        p.build()
        out = p.run()[0]
    except Exception:
        return {"error": True}
    return {"layout": out.layout(),
            "samples": [{"dtype": np.array(t).dtype.name, "shape": list(np.array(t).shape),
                         "values": np.array(t).astype(np.float64).ravel().tolist()}
                        for t in out]}


def main() -> None:
    cases = [{"op": op, "inputs": ins, "args": args, "out": record(op, ins, args)}
             for op, ins, args in CASES]
    OUT.write_text(json.dumps({"x": X, "cases": cases}, indent=0) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
