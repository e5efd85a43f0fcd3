"""Records DALI 2.4's JAX iterator (nvidia.dali.plugin.jax) on the cases of
tests/jax_cases.py into tests/data/dali_jax_iterator.json.

Needs DALI and JAX (CPU builds are enough: DALI's JAX plugin takes CPU pipelines). Run
from the repository root:
    /work/dali-venv/bin/pip install jax jaxlib
    /work/dali-venv/bin/python tests/data/record/jax_iterator.py

The four JAX devices are CPU devices made by XLA_FLAGS (set here before jax loads).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import types as pytypes

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/

from jax_cases import CASES, ERROR_CASES, XLA_FLAGS, case_id, run_case, run_error  # noqa: E402

os.environ["XLA_FLAGS"] = XLA_FLAGS
import jax  # noqa: E402
from nvidia.dali import fn, pipeline_def, types  # noqa: E402
from nvidia.dali.plugin.base_iterator import LastBatchPolicy  # noqa: E402
from nvidia.dali.plugin.jax import DALIGenericIterator, data_iterator  # noqa: E402

LIB = pytypes.SimpleNamespace(jax=jax, fn=fn, types=types, pipeline_def=pipeline_def,
                              LastBatchPolicy=LastBatchPolicy,
                              DALIGenericIterator=DALIGenericIterator,
                              data_iterator=data_iterator)


def main() -> None:
    out = {"cases": {}, "errors": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for c in CASES:
            try:
                out["cases"][case_id(c)] = run_case(LIB, root, c)
            except Exception as e:  # recorded: stoker must fail there too
                out["cases"][case_id(c)] = {"error": f"{type(e).__name__}: {e}"[:300]}
        for name in ERROR_CASES:
            out["errors"][name] = run_error(LIB, root, name)
    path = pathlib.Path(__file__).parents[1] / "dali_jax_iterator.json"
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{len(out['cases'])} cases, errors {out['errors']} -> {path}")


if __name__ == "__main__":
    main()
