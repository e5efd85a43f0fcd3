"""Records the layout DALI 2.4 gives image operators' outputs for samples without one.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/unnamed_layouts.py
(writes tests/data/dali_unnamed_layouts.json; the cases are tests/unnamed_layout_cases.py)
"""

from __future__ import annotations

import json
import pathlib
import sys

import nvidia.dali as dali

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from unnamed_layout_cases import CASES, SHAPES, outcome  # noqa: E402

OUT = ROOT / "tests" / "data" / "dali_unnamed_layouts.json"


def main() -> None:
    table = {f"{name}:{ndim}d": outcome(dali, name, ndim) for name in CASES for ndim in SHAPES}
    OUT.write_text(json.dumps({"dali_version": dali.__version__, "outcomes": table},
                              indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} cases)")


if __name__ == "__main__":
    main()
