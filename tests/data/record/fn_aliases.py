"""Records DALI 2.4's deprecated ``fn`` names: what each now runs and how DALI warns.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/fn_aliases.py
(writes tests/data/dali_fn_aliases.json).

Walks ``nvidia.dali.fn`` (sub-modules included) and keeps every function whose schema
``IsDeprecated()``: its schema name, the ``fn`` path of the operator named by
``DeprecatedInFavorOf()`` (null for operators deprecated without a replacement), and the
warning DALI gives when the function is called (category and text). The warning is
caught from a real call where one can be made without data (operators without inputs);
for the others the text is DALI's template, checked against the calls that were made.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import nvidia.dali as dali
import nvidia.dali.backend as backend
import nvidia.dali.fn as fn
from dali_walk import fn_functions
from nvidia.dali import Pipeline

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_fn_aliases.json"

# Calls that need no input data: their warnings are recorded as DALI gives them.
CALLS = {
    "coin_flip": {},
    "uniform": {"range": [0.0, 1.0]},
    "normal_distribution": {},
    "transform_translation": {"offset": [1.0, 2.0]},
    "file_reader": {"files": [__file__]},
}


def template(old, new, note):
    text = f"WARNING: `nvidia.dali.fn.{old}` is now deprecated."
    if new:
        text += f" Use `nvidia.dali.fn.{new}` instead."
    return text + ("\n" + note if note else "")


def caught(path, kwargs):
    func = fn
    for part in path.split("."):
        func = getattr(func, part)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with warnings.catch_warnings(record=True) as got, pipe:
        warnings.simplefilter("always")
        func(**kwargs)
    return [(w.category.__name__, str(w.message)) for w in got]


def main() -> None:
    funcs = fn_functions(fn)
    by_schema: dict = {}
    for path, func in funcs.items():
        by_schema.setdefault(func._schema_name, []).append(path)
    table = {}
    for path, func in funcs.items():
        schema = backend.GetSchema(func._schema_name)
        if not schema.IsDeprecated():
            continue
        target = schema.DeprecatedInFavorOf() or None
        new = None
        if target:
            # The target's own fn path; readers.sequence is deprecated itself.
            paths = by_schema.get(target, [])
            assert paths, (path, target)
            new = sorted(paths, key=lambda p: (len(p), p))[0]
        note = schema.DeprecationMessage() or ""
        table[path] = {"schema": func._schema_name, "in_favor_of": new,
                       "warning": {"category": "DeprecationWarning",
                                   "message": template(path, new, note)}}
    for path, kwargs in CALLS.items():
        got = caught(path, kwargs)
        want = table[path]["warning"]
        assert got == [(want["category"], want["message"])], (path, got, want)
    OUT.write_text(json.dumps({"dali_version": dali.__version__, "aliases": table},
                              indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} deprecated fn names)")


if __name__ == "__main__":
    main()
