"""Records DALI 2.4's schemas of its GPU-only video readers (readers.video, video_resize).

tests/data/dali_schema.json holds the operators DALI runs on the CPU; these two run only
on the GPU in DALI, but their schemas are registered all the same. Run with DALI
installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/video_schema.py
writes tests/data/dali_video_schema.json in schema.py's format.
"""

from __future__ import annotations

import json
import pathlib

import nvidia.dali as dali
import nvidia.dali.backend as backend
from schema import arg_entry, input_names, num_outputs

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_video_schema.json"
OPS = {"readers.video": "readers__Video", "readers.video_resize": "readers__VideoResize"}


def main() -> None:
    ops = {}
    for path, name in OPS.items():
        schema = backend.GetSchema(name)
        ops[path] = {
            "schema_name": name, "min_inputs": schema.MinNumInput(),
            "max_inputs": schema.MaxNumInput(), "num_outputs": num_outputs(name, schema),
            "input_names": input_names(schema),
            "args": {a: arg_entry(schema, a) for a in sorted(schema.GetArgumentNames())},
        }
    doc = {"dali_version": dali.__version__, "ops": ops}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
