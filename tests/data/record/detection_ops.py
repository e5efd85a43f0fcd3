"""Records DALI 2.4's detection operators: tests/data/dali_detection.json.

Two parts. ``cases``: the deterministic operators (bb_flip, bbox_paste, box_encoder,
bbox_rotate, select_masks, multi_paste, and random_object_bbox / random_mask_pixel /
roi_random_crop on inputs with a single possible outcome) on the inputs of
tests/detection/detection_cases.py, with DALI's outputs or error. ``crops``: for each
random_bbox_crop configuration of detection_cases.CROP_CONFIGS, 4 runs of a 24-sample
batch of DALI's outputs, whose properties and statistics the replay compares with
stoker's.

Re-run (from the repository root, DALI installed in /work/dali-venv):
    PYTHONPATH=.:tests/detection /work/dali-venv/bin/python tests/data/record/detection_ops.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "detection")]

from detection_cases import (  # noqa: E402
    CROP_CONFIGS,
    crop_inputs,
    decode,
    deterministic_cases,
    encode,
)
from nvidia.dali import fn, pipeline_def, types  # noqa: E402

RUNS = 4


def _op(path: str):
    op = fn
    for part in path.split("."):
        op = getattr(op, part)
    return op


def _feed(samples: list):
    return lambda: samples


def run_case(case: dict, runs: int = 1, seed: int = 1234) -> dict:
    inputs = [[decode(s) for s in x] for x in case["inputs"]]
    args = dict(case["args"])
    if "dtype_name" in args:
        args["dtype"] = getattr(types, args.pop("dtype_name"))
    for key in ("in_anchors", "in_anchors_rel", "shapes", "shapes_rel", "out_anchors",
                "out_anchors_rel"):
        if key in args:  # (K, 2) per-sample tensors, the same for every sample
            arr = np.asarray(args[key], np.float32 if key.endswith("rel") else np.int32)
            args[key] = arr.reshape(-1, 2)
    batch = len(inputs[0]) if inputs else 3

    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=seed)
    def pipe():
        nodes = [fn.external_source(source=_feed(x)) for x in inputs]
        for key in ("in_anchors", "in_anchors_rel", "shapes", "shapes_rel", "out_anchors",
                    "out_anchors_rel"):
            if key in args:
                args[key] = types.Constant(args[key])
        out = _op(case["op"])(*nodes, **args)
        return tuple(out) if isinstance(out, list | tuple) else out

    try:
        p = pipe()
        p.build()
        results = []
        for _ in range(runs):
            outs = p.run()
            outs = outs if isinstance(outs, tuple) else (outs,)
            results.append([[encode(np.array(t)) for t in tl] for tl in outs])
        return {"outputs": results if runs > 1 else results[0]}
    except Exception as e:  # noqa: BLE001 - the recorded outcome is the error
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        return {"error": type(e).__name__, "message": "\n".join(lines[-3:])}


def main() -> None:
    record: dict = {"dali": "2.4", "cases": [], "crops": {}}
    for case in deterministic_cases():
        record["cases"].append({**case, **run_case(case)})
    for name, config in CROP_CONFIGS.items():
        boxes, labels = crop_inputs(config.get("bbox_layout", "xyXY"))
        case = {"op": "random_bbox_crop", "args": config,
                "inputs": [[encode(b) for b in boxes], [encode(v) for v in labels]]}
        record["crops"][name] = {**case, **run_case(case, runs=RUNS)}
    out = ROOT / "tests" / "data" / "dali_detection.json"
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
