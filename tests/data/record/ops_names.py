"""Records DALI 2.4's legacy ``ops.*`` class names and the ``fn`` operator each one is.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/ops_names.py
(writes tests/data/dali_ops_names.json)

For every class reachable from ``nvidia.dali.ops`` (sub-modules included, "hidden" ones
left out: DALI keeps them for its own machinery), the file keeps its dotted path, its
schema's name, and the ``fn`` path of the operator it runs: deprecated aliases
(``FileReader``) are followed to the operator that replaces them (``readers.file``).
``stoker.ops`` builds its classes from this table and stoker's registry.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import nvidia.dali as dali
import nvidia.dali.backend as backend
import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
from dali_walk import fn_functions, walk

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_ops_names.json"


def main() -> None:
    fn_paths = {}
    for path, func in fn_functions(fn).items():
        fn_paths.setdefault(func._schema_name, []).append(path)
    classes = walk(ops, lambda o: inspect.isclass(o) and (hasattr(o, "schema_name") or
                                                          o.__module__ == ops.__name__))
    table = {}
    for path, cls in classes.items():
        # ExternalSource has no schema of its own in DALI's backend: named by its fn.
        schema_name = getattr(cls, "schema_name", None) or "ExternalSource"
        target = schema_name
        try:
            schema = backend.GetSchema(schema_name)
            deprecated = bool(schema.IsDeprecated())
            while schema.IsDeprecated() and schema.DeprecatedInFavorOf():
                target = schema.DeprecatedInFavorOf()
                schema = backend.GetSchema(target)
        except Exception:
            deprecated = False
        # The fn path DALI gives the target schema: the shortest, non-deprecated one.
        paths = sorted(fn_paths.get(target, []), key=lambda p: (len(p), p))
        table[path] = {"schema": schema_name, "deprecated": deprecated,
                       "fn": paths[0] if paths else None}
    OUT.write_text(json.dumps({"dali_version": dali.__version__, "classes": table},
                              indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} classes)")


if __name__ == "__main__":
    main()
