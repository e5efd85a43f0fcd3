"""Running a reader case the same way on DALI (in a recorder) and on stoker (in a replay),
and comparing the outcomes: every sample's dtype, shape, values and source_info, batch by
batch, or the error (dali_cases.error_outcome / check_error).

Paths in source_info are stored by base name, as the recorder's and the test's temporary
folders differ.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np


def sample_record(a: np.ndarray, info: str, folder: str) -> list:
    """A sample as stored: dtype, shape, flat values, source_info without ``folder``."""
    values = a.ravel().tolist()
    if a.dtype.kind == "f":
        values = [v if np.isfinite(v) else repr(v) for v in values]
    return [str(a.dtype), list(a.shape), values,
            re.sub(re.escape(folder.rstrip("/") + "/"), "", info)]


def run_reader(lib: Any, folder: str, define: Callable[[], list], batch_size: int,
               iterations: int, **pipe_kw: Any) -> dict:
    """{"outputs": [iteration][output][sample]} or {"error": ...} of a pipeline whose
    outputs ``define()`` makes (called inside the pipeline's scope)."""
    from dali_cases import error_outcome

    stage = "call"
    try:
        pipe = lib.Pipeline(batch_size=batch_size, num_threads=1, device_id=None, seed=11,
                            **pipe_kw)
        with pipe:
            pipe.set_outputs(*define())
        stage = "build"
        pipe.build()
        meta = {k: int(v) for k, v in pipe.reader_meta("R").items()} \
            if "R" in _names(pipe) else None
        stage = "run"
        result = []
        for _ in range(iterations):
            tls = pipe.run()
            result.append([[sample_record(np.array(tl[i]), tl[i].source_info(), folder)
                            for i in range(len(tl))] for tl in tls])
        out: dict = {"outputs": result}
        if meta is not None:
            out["meta"] = meta
        return out
    except Exception as e:  # noqa: BLE001  (the outcome is the error)
        return error_outcome(stage, e)


def _names(pipe: Any) -> set:
    try:
        return set(pipe.reader_meta())
    except Exception:  # noqa: BLE001
        return set()


def check_outputs(name: str, got: dict, want: dict, info_outputs: tuple | None = None
                  ) -> None:
    """stoker's outputs equal DALI's recorded ones, sample for sample; source_info of the
    outputs ``info_outputs`` (default: all), where DALI gave one."""
    if "meta" in want:
        assert got.get("meta") == want["meta"], f"{name}: reader_meta {got.get('meta')} " \
                                                f"vs DALI {want['meta']}"
    assert len(got["outputs"]) == len(want["outputs"])
    for it, (g_it, w_it) in enumerate(zip(got["outputs"], want["outputs"], strict=True)):
        assert len(g_it) == len(w_it)
        for k, (g_out, w_out) in enumerate(zip(g_it, w_it, strict=True)):
            assert len(g_out) == len(w_out), f"{name}: iteration {it}, output {k}: batch size"
            for j, (g, w) in enumerate(zip(g_out, w_out, strict=True)):
                where = f"{name}: iteration {it}, output {k}, sample {j}"
                assert g[0] == w[0] and g[1] == w[1], f"{where}: {g[:2]} vs DALI {w[:2]}"
                assert g[2] == w[2], f"{where}: values {g[2][:10]} vs DALI {w[2][:10]}"
                if (info_outputs is None or k in info_outputs) and w[3]:
                    assert g[3] == w[3], f"{where}: source_info {g[3]!r} vs DALI {w[3]!r}"


def base(path: str) -> str:
    return os.path.basename(path)
