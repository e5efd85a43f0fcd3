"""Records DALI 2.4's fn.reductions.* outputs and the output types each accepts.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/reductions.py
(writes tests/data/dali_reductions.json)

Small inputs (kept in the file) go through each reduction with several axis choices;
the file keeps each output's values, dtype, shape and layout, or DALI's error. "types"
lists, per reduction and input type, the 'dtype' values DALI builds and runs with.
tests/tensor/test_reductions_vs_dali.py replays it on stoker.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
from nvidia.dali import fn, pipeline_def, types

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_reductions.json"
T = types.DALIDataType
SIMPLE = ("sum", "min", "max", "mean", "mean_square", "rms")
IN_TYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
            "float32", "float64", "float16")
OUT_TYPES = ("UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64",
             "FLOAT16", "FLOAT", "FLOAT64")
AXES = ({}, {"axes": [0]}, {"axes": [-1]}, {"axes": [0, 2], "keep_dims": True},
        {"axis_names": "HW"}, {"axis_names": "C", "keep_dims": True}, {"axes": []})


def _inputs() -> dict[str, list[np.ndarray]]:
    rng = np.random.default_rng(2028)
    u8 = [rng.integers(0, 256, (3, 4, 2), dtype=np.uint8),
          rng.integers(0, 256, (5, 2, 2), dtype=np.uint8)]
    return {"uint8": u8,
            "int16": [rng.integers(-3000, 3000, (2, 3, 3), dtype=np.int16),
                      rng.integers(-3000, 3000, (4, 1, 3), dtype=np.int16)],
            "float32": [rng.normal(0, 10, (3, 3, 2)).astype(np.float32),
                        rng.normal(5, 1, (2, 5, 2)).astype(np.float32)]}


def _run(graph, samples, layout="HWC"):
    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe():
        return graph(fn.external_source(lambda: samples, layout=layout))

    p = pipe()
    p.build()
    out = p.run()[0]
    return {"layout": out.layout(),
            "samples": [{"dtype": np.array(t).dtype.name, "shape": list(np.array(t).shape),
                         "values": np.array(t).astype(np.float64).ravel().tolist()}
                        for t in out]}


def _record(graph, samples):
    try:
        return _run(graph, samples)
    except Exception as e:  # DALI's error: only whether it fails matters
        return {"error": str(e).strip().splitlines()[0][:200]}


def _cases(inputs):
    cases = []
    for name, samples in inputs.items():
        for kind in SIMPLE:
            for args in AXES + (({"dtype": "FLOAT"}, {"dtype": name.upper()})
                                if kind not in ("min", "max") and name != "float32" else ()):
                call = {k: (getattr(T, v) if k == "dtype" else v) for k, v in args.items()}

                def graph(x, kind=kind, call=call):
                    return getattr(fn.reductions, kind)(x, **call)
                cases.append({"input": name, "op": kind, "args": args,
                              "out": _record(graph, samples)})
        for kind in ("std_dev", "variance"):
            for args in ({}, {"axis_names": "HW"}, {"axes": [0, 1], "keep_dims": True},
                         {"axes": [2], "ddof": 1}):
                mean_args = {k: v for k, v in args.items() if k != "ddof"}

                def graph(x, kind=kind, args=args, mean_args=mean_args):
                    return getattr(fn.reductions, kind)(x, fn.reductions.mean(x, **mean_args),
                                                        **args)
                cases.append({"input": name, "op": kind, "args": args,
                              "out": _record(graph, samples)})
    return cases


def _types():
    table = {}
    for kind in ("sum", "mean", "mean_square", "rms"):
        for name in IN_TYPES:
            ok = []
            for out in OUT_TYPES:
                def graph(x, kind=kind, out=out):
                    return getattr(fn.reductions, kind)(x, dtype=getattr(T, out))
                try:
                    _run(graph, [np.ones((2, 3), name)], layout="HW")
                    ok.append(out)
                except Exception:
                    pass
            table[f"{kind} {name}"] = ok
    return table


def main() -> None:
    inputs = _inputs()
    doc = {"inputs": {k: [{"dtype": x.dtype.name, "shape": list(x.shape),
                           "values": x.astype(np.float64).ravel().tolist()} for x in v]
                      for k, v in inputs.items()},
           "cases": _cases(inputs), "types": _types()}
    OUT.write_text(json.dumps(doc) + "\n")
    print(f"wrote {OUT}: {len(doc['cases'])} cases")


if __name__ == "__main__":
    main()
