"""Detection operators against DALI 2.4's recorded outputs (tests/data/dali_detection.json).

Deterministic operators must give DALI's outputs: bit for bit, except where a sine,
cosine or logarithm is involved (bbox_rotate, box_encoder's offsets), where float32
results may differ in the last bits between math libraries. random_bbox_crop's windows
come from other random draws than DALI's: each DALI window and each stoker window must
pass the same checks (``crop_checks.check_crop``: window inside the rules, boxes kept and
mapped as the rules say, threshold met), and their statistics must agree.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from crop_checks import check_crop
from detection_cases import decode

from stoker import Pipeline, fn, types

RECORD = json.loads((pathlib.Path(__file__).parents[1] / "data" / "dali_detection.json")
                    .read_text())
_CLOSE = {"bbox_rotate": 5e-6, "box_encoder": 2e-6}


def _op(path: str):
    op = fn
    for part in path.split("."):
        op = getattr(op, part)
    return op


def run_case(case: dict, runs: int = 1, seed: int = 1234) -> list:
    inputs = [[decode(s) for s in x] for x in case["inputs"]]
    args = dict(case["args"])
    if "dtype_name" in args:
        args["dtype"] = getattr(types, args.pop("dtype_name"))
    batch = len(inputs[0]) if inputs else 3
    pipe = Pipeline(batch_size=batch, num_threads=1, device_id=None, seed=seed)
    with pipe:
        nodes = [fn.external_source(source=(lambda v: (lambda: v))(x)) for x in inputs]
        out = _op(case["op"])(*nodes, **args)
        pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
    pipe.build()
    got = [[[np.array(t) for t in tl] for tl in pipe.run()] for _ in range(runs)]
    pipe.close()
    return got if runs > 1 else got[0]


def _name(case: dict) -> str:
    return f"{case['op']}-{json.dumps(case['args'], sort_keys=True)[:90]}"


CASES = RECORD["cases"]


@pytest.mark.parametrize("case", CASES, ids=[_name(c) for c in CASES])
def test_outputs_equal_dalis(case):
    assert "error" not in case, case.get("message")
    got = run_case(case)
    want = [[decode(s) for s in tl] for tl in case["outputs"]]
    assert len(got) == len(want)
    tol = _CLOSE.get(case["op"])
    for k, (ours, theirs) in enumerate(zip(got, want, strict=True)):
        for j, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert a.dtype == b.dtype, f"output {k} sample {j}: {a.dtype} vs {b.dtype}"
            assert a.shape == b.shape, f"output {k} sample {j}: {a.shape} vs {b.shape}"
            if tol is not None and a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol,
                                           err_msg=f"output {k} sample {j}")
            else:
                np.testing.assert_array_equal(a, b, err_msg=f"output {k} sample {j}")


def test_bit_exact_where_no_transcendental_function_is_involved():
    exact = [c for c in CASES if c["op"] not in _CLOSE]
    assert len(exact) >= 30  # bb_flip, bbox_paste, select_masks, multi_paste, ...


def _crop_runs(name: str, ours: bool) -> tuple[list, list, list]:
    rec = RECORD["crops"][name]
    boxes = [decode(s) for s in rec["inputs"][0]]
    labels = [decode(s) for s in rec["inputs"][1]]
    if ours:
        runs = run_case(rec, runs=len(rec["outputs"]))
    else:
        runs = [[[decode(s) for s in tl] for tl in run] for run in rec["outputs"]]
    return boxes, labels, runs


@pytest.mark.parametrize("ours", [False, True], ids=["dali", "stoker"])
@pytest.mark.parametrize("name", sorted(RECORD["crops"]))
def test_every_window_follows_the_rules(name, ours):
    rec = RECORD["crops"][name]
    boxes, labels, runs = _crop_runs(name, ours)
    for run in runs:
        for j in range(len(boxes)):
            check_crop(rec["args"], boxes[j], labels[j], [out[j] for out in run])


def _stats(name: str, ours: bool) -> dict:
    boxes, _, runs = _crop_runs(name, ours)
    whole, areas, kept = [], [], []
    for run in runs:
        for j in range(len(boxes)):
            anchor, shape = run[0][j], run[1][j]
            rel = shape / np.asarray(RECORD["crops"][name]["args"].get("input_shape", 1),
                                     np.float32) if "crop_shape" in \
                RECORD["crops"][name]["args"] else shape
            whole.append(bool(np.all(anchor == 0) and np.allclose(rel, 1)))
            areas.append(float(np.prod(rel)))
            kept.append(len(run[2][j]) / max(len(boxes[j]), 1))
    return {"whole": np.array(whole), "area": np.array(areas), "kept": np.array(kept)}


@pytest.mark.parametrize("name", sorted(RECORD["crops"]))
def test_window_statistics_agree_with_dalis(name):
    dali, ours = _stats(name, False), _stats(name, True)
    n = len(dali["area"])
    for key in ("whole", "area", "kept"):
        a, b = dali[key].astype(float), ours[key].astype(float)
        spread = np.sqrt((a.var() + b.var()) / n) + 1e-9
        assert abs(a.mean() - b.mean()) < 4.5 * spread + 0.02, (
            f"{name} {key}: DALI mean {a.mean():.3f}, stoker {b.mean():.3f}")
