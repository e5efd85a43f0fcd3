"""Records DALI 2.4's fn.filter, fn.laplacian, fn.water, fn.sphere,
fn.experimental.warp_perspective, fn.debayer, fn.clahe, fn.tensor_resize (small images)
and fn.power_spectrum (signals).

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/image_effects.py
(writes tests/data/dali_image_effects.npz)

Every case is one call on one batch: the npz keeps "<case>/in<k>" (the inputs),
"<case>/out<j>" (DALI's output samples) and "<case>/layout"; CASES (in
tests/effects_cases.py, shared with tests/image/test_effects_vs_dali.py, which replays
them on stoker) says which operator and arguments. The images are random with a fixed seed.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_image_effects.npz"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from effects_cases import CASES, inputs_of  # noqa: E402


def _returning(batch):
    # No parameter: DALI passes the iteration to a source that takes one.
    return lambda: batch


def main() -> None:
    from nvidia.dali import fn, pipeline_def, types

    arrays = {}
    for name, case in CASES.items():
        ins, layout = inputs_of(case)

        @pipeline_def(batch_size=len(ins[0]), num_threads=1, device_id=None)
        def pipe(ins=ins, case=case, layout=layout):
            nodes = [fn.external_source(_returning(s), layout=layout if k == 0 else "")
                     for k, s in enumerate(ins)]
            return case["call"](fn, types, *nodes)

        p = pipe()
        p.build()
        out = p.run()[0]
        for k, samples in enumerate(ins):
            for j, s in enumerate(samples):
                arrays[f"{name}/in{k}_{j}"] = s
        for j, t in enumerate(out):
            arrays[f"{name}/out{j}"] = np.array(t)
        arrays[f"{name}/layout"] = np.array(out.layout())
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT}: {len(CASES)} cases")


if __name__ == "__main__":
    main()
