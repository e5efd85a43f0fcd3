"""Records every ``fn`` operator name DALI 2.4 has, with the backends it runs on.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/fn_names.py
(writes tests/data/dali_fn_names.json)

``tests/data/dali_schema.json`` holds the operators whose ``fn`` function carries a backend
schema; a few of DALI's ``fn`` functions are written in Python around a hidden schema
(``python_function``, ``readers.tfrecord``) and the plugins add some of their own
(``nvidia.dali.plugin.pytorch.fn.torch_python_function``, the numba plugin's
``experimental.numba_function``). This file lists them all, by ``fn`` path, with the
backends of the schema each runs ("cpu", "gpu", "mixed") and, for a deprecated name, the
path it stands for. tests/test_completeness.py compares it with stoker's registry.
"""

from __future__ import annotations

import importlib
import json
import pathlib

import nvidia.dali as dali
import nvidia.dali.backend as backend
import nvidia.dali.fn as fn
from dali_walk import walk

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_fn_names.json"

# Python-level fn functions -> the backend schema each one builds (read from DALI's
# nvidia/dali/ops sources: their _schema_name, if any, names a Python-side schema that no
# backend registers).
PYTHON_LEVEL = {
    "python_function": "DLTensorPythonFunctionImpl",
    "dl_tensor_python_function": "DLTensorPythonFunctionImpl",
    "torch_python_function": "DLTensorPythonFunctionImpl",
    "readers.tfrecord": "readers___TFRecord",
    "tfrecord_reader": "_TFRecordReader",
    "experimental.numba_function": "NumbaFuncImpl",
}
PLUGINS = {  # module -> prefix of its fn paths
    "nvidia.dali.plugin.pytorch.fn": "",
    "nvidia.dali.plugin.numba.fn.experimental": "experimental.",
}


def _backends(schema_name: str) -> list[str]:
    got = []
    for device, getter in (("cpu", backend.RegisteredCPUOps), ("gpu", backend.RegisteredGPUOps),
                           ("mixed", backend.RegisteredMixedOps)):
        if schema_name in set(getter(True)):
            got.append(device)
    return got


def _entry(path: str, schema_name: str) -> dict:
    schema = backend.GetSchema(schema_name)
    favor = schema.DeprecatedInFavorOf() if schema.IsDeprecated() else None
    return {"schema": schema_name, "backends": _backends(schema_name),
            "deprecated_for": favor or None, "plugin": False}


def main() -> None:
    names = {}
    for path, func in walk(fn, callable).items():
        schema_name = PYTHON_LEVEL.get(path) or func._schema_name
        names[path] = _entry(path, schema_name)
    for module, prefix in PLUGINS.items():
        try:
            mod = importlib.import_module(module)
        except ImportError:  # the plugin's framework is not installed
            continue
        for path, _func in walk(mod, callable).items():
            path = prefix + path
            names[path] = dict(_entry(path, PYTHON_LEVEL[path]), plugin=True)
    # Deprecated schemas name the schema they stand for; give its fn path instead.
    by_schema = {}
    for path, e in names.items():
        if not e["deprecated_for"]:
            by_schema.setdefault(e["schema"], []).append(path)
    for e in names.values():
        if e["deprecated_for"]:
            paths = sorted(by_schema.get(e["deprecated_for"], []), key=lambda p: (len(p), p))
            e["deprecated_for"] = paths[0] if paths else e["deprecated_for"]
    doc = {"dali_version": dali.__version__,
           "_about": "every fn path of nvidia-dali-cuda130 (and its pytorch/numba plugins) "
                     "with the backends its schema is registered for; recorded by "
                     "tests/data/record/fn_names.py",
           "names": dict(sorted(names.items()))}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    cpu = sum("cpu" in e["backends"] for e in names.values())
    print(f"wrote {OUT}: {len(names)} fn names, {cpu} with a CPU backend")


if __name__ == "__main__":
    main()
