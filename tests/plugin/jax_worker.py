"""Runs tests/jax_cases.py on stoker with four CPU JAX devices and prints the outcomes as
JSON (tests/plugin/test_jax_vs_dali.py starts it: XLA_FLAGS must be set before jax loads,
which a test process that already imported jax cannot do)."""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import types as pytypes

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[i]) for i in (1, 2)]  # tests/, repo

from jax_cases import CASES, ERROR_CASES, XLA_FLAGS, case_id, run_case, run_error  # noqa: E402

os.environ["XLA_FLAGS"] = XLA_FLAGS
import jax  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, LastBatchPolicy, data_iterator  # noqa: E402

LIB = pytypes.SimpleNamespace(jax=jax, fn=fn, types=types, pipeline_def=pipeline_def,
                              LastBatchPolicy=LastBatchPolicy,
                              DALIGenericIterator=DALIGenericIterator,
                              data_iterator=data_iterator)

if __name__ == "__main__":
    out = {"cases": {}, "errors": {}, "devices": len(jax.devices())}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for c in CASES:
            try:
                out["cases"][case_id(c)] = run_case(LIB, root, c)
            except Exception as e:
                out["cases"][case_id(c)] = {"error": f"{type(e).__name__}: {e}"[:300]}
        for name in ERROR_CASES:
            out["errors"][name] = run_error(LIB, root, name)
    print(json.dumps(out))
