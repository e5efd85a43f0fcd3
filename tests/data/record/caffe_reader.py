"""Records DALI 2.4's fn.readers.caffe and caffe2 outcomes on the cases of
tests/caffe_cases.py into tests/data/dali_caffe.json.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/caffe_reader.py

The LMDB databases are written by tests/container_writers.py (with lmdb) into a temporary
folder; each case runs in a process of its own (DALI 2.4 crashes on some), and its
outcome is its reader_meta and outputs (dtype, shape, values and source_info of every
sample), its error, or {"crash": signal}. The replay: tests/readers/test_caffe_vs_dali.py.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

from caffe_cases import CASES, run_case, write_datasets  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_caffe.json"


def one(folder: str, name: str) -> None:
    """Runs case ``name`` and prints its outcome as JSON (in a child process)."""
    from dali_cases import Lib
    from nvidia.dali import fn, types
    from nvidia.dali.pipeline import Pipeline

    case = next(c for c in CASES if c[0] == name)
    print(json.dumps(run_case(Lib(fn, types, Pipeline), folder, case)))


def main() -> None:
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        write_datasets(folder)
        for c in CASES:
            done = subprocess.run([sys.executable, __file__, folder, c[0]], capture_output=True,
                                  text=True)
            if done.returncode < 0:
                result = {"crash": -done.returncode}
            else:
                result = json.loads(done.stdout.strip().splitlines()[-1])
            cases.append({"name": c[0], "result": result})
            print(c[0], result.get("crash") or (result["error"]["message"][-120:]
                  .replace("\n", " ") if "error" in result else result.get("meta")))
    OUT.write_text(json.dumps({"dali": "2.4.0", "cases": cases}) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        one(sys.argv[1], sys.argv[2])
    else:
        main()
