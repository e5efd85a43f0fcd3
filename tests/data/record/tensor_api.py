"""Records DALI 2.4's answers to tests/tensor_api_cases.py: tests/data/dali_tensor_api.json.

Two tables: ``probes`` (each expression of PROBES, asked of DALI's TensorCPU and
TensorListCPU: what ``at(i)``, ``[i]``, ``as_tensor()``, ``shape()``, ``squeeze()``... give,
or which builtin exceptions they raise) and ``outputs`` (each value of OUTPUT_FORMS
returned from a pipeline function: the constant output DALI makes of it, or the error).
tests/test_tensor_api_vs_dali.py replays both against stoker.

Re-run (from the repository root, DALI installed in /work/dali-venv):
    /work/dali-venv/bin/python tests/data/record/tensor_api.py
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from nvidia.dali import fn, pipeline_def, types  # noqa: E402
from nvidia.dali.tensors import TensorCPU, TensorListCPU  # noqa: E402
from tensor_api_cases import OUTPUT_FORMS, PROBES, ask, objects, output_outcome  # noqa: E402


def main() -> None:
    probes = {expr: ask(expr, objects(TensorCPU, TensorListCPU, types)) for expr in PROBES}
    outputs = {name: output_outcome(pipeline_def, fn, types, expr)
               for name, expr in OUTPUT_FORMS.items()}
    out = ROOT / "tests" / "data" / "dali_tensor_api.json"
    out.write_text(json.dumps({"dali": "2.4", "probes": probes, "outputs": outputs}, indent=1)
                   + "\n")
    print(f"wrote {out}: {len(probes)} probes, {len(outputs)} output forms")


if __name__ == "__main__":
    main()
