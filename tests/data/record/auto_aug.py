"""Records DALI 2.4's outputs of tests/auto_aug_cases.py into tests/data/auto_aug.npz.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/auto_aug.py

Per case, the batch's outputs stacked into one array named after the case ("aug/<name>/
<bin>/<sign>" or "op/<name>"; every case keeps one shape per batch), and its layout under
"layout/<case>": the auto_aug augmentations at fixed magnitude bins and signs, and the
reductions and filter operators under them. A case DALI refuses is stored under
"error/<case>" as its message.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

import nvidia.dali as dali  # noqa: E402
import nvidia.dali.fn as fn  # noqa: E402
import nvidia.dali.types as types  # noqa: E402
from auto_aug_cases import BATCH, OPS, augmentation_case, case_names, images  # noqa: E402
from nvidia.dali import pipeline_def  # noqa: E402
from nvidia.dali.auto_aug import augmentations as A  # noqa: E402
from nvidia.dali.auto_aug import core  # noqa: E402

OUT = TESTS / "data" / "auto_aug.npz"


def run(make) -> tuple:
    data = images()

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=lambda: data, layout="HWC")
        return make(x)

    try:
        p = pipe()
        p.build()
        (out,) = p.run()
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[-1]}"
    return out, None


def main() -> None:
    arrays = {"dali_version": np.array(dali.__version__)}
    cases = {f"aug/{name}/{b}/{s}": (lambda x, name=name, b=b, s=s: augmentation_case(
        A, core, fn, types, x, name, b, s)) for name, b, s in case_names()}
    cases.update({f"op/{name}": (lambda x, make=make: make(fn, types, x))
                  for name, make in OPS.items()})
    for key, make in cases.items():
        out, error = run(make)
        if error is not None:
            arrays[f"error/{key}"] = np.array(error)
            continue
        arrays[key] = np.stack([np.asarray(out.at(j)) for j in range(BATCH)])
        arrays[f"layout/{key}"] = np.array(out.layout())
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
