"""Records DALI 2.4's fn.batch_permutation statistics and fn.permute_batch outputs.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/batch_order.py
(writes tests/data/dali_batch_order.json)

batch_permutation is random, so the file keeps statistics over ITER batches of BATCH
samples for each flag combination: how often a sample gets its own index, how often a
batch repeats an index, and the mean index per position. permute_batch is recorded on
a few index lists (or DALI's error). tests/tensor/test_batch_order.py compares stoker.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
from nvidia.dali import fn, pipeline_def

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_batch_order.json"
BATCH, ITER = 5, 400
FLAGS = ({}, {"no_fixed_points": True}, {"allow_repetitions": True},
         {"allow_repetitions": True, "no_fixed_points": True})
INDICES = ([4, 4, 0, 1, 2], [0, 1, 2, 3, 4], [1, 0], [5, 0, 1, 2, 3], [-1, 0, 1, 2, 3])


def stats(draws: np.ndarray) -> dict:
    n = draws.shape[1]
    return {"fixed_point_rate": float((draws == np.arange(n)).mean()),
            "repeat_rate": float(np.mean([len(set(r)) < n for r in draws])),
            "mean_per_position": draws.mean(0).tolist(),
            "always_in_range": bool(((draws >= 0) & (draws < n)).all())}


def permutations(flags: dict) -> np.ndarray:
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=11)
    def pipe():
        return fn.batch_permutation(**flags)

    p = pipe()
    p.build()
    return np.array([[int(np.array(t)) for t in p.run()[0]] for _ in range(ITER)])


def permute(indices: list) -> dict:
    samples = [np.full((2, 1 + k), k, np.int16) for k in range(BATCH)]

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def pipe():
        return fn.permute_batch(fn.external_source(lambda: samples, layout="HW"),
                                indices=indices)

    try:
        p = pipe()
        p.build()
        out = p.run()[0]
    except Exception:
        return {"error": True}
    return {"layout": out.layout(), "samples": [np.array(t).tolist() for t in out]}


def main() -> None:
    doc = {"batch": BATCH, "iterations": ITER,
           "batch_permutation": [{"args": f, "stats": stats(permutations(f))} for f in FLAGS],
           "permute_batch": [{"indices": i, "out": permute(i)} for i in INDICES]}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
