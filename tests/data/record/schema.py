"""Records DALI 2.4's operator schemas: every operator DALI runs on the CPU.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/schema.py   # writes tests/data/dali_schema.json

One entry per ``fn`` path (deprecated aliases included, marked): the schema's name,
inputs, outputs, backends, whether it is deprecated and for what, and each argument's
DALI type, default (DALI's own string), whether it is optional, takes a per-sample
DataNode or per-frame values, and is deprecated. ``Pipeline`` and ``pipeline_def`` keep
their Python signatures. tests/test_dali_schema.py compares stoker's registry with it.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import nvidia.dali as dali
import nvidia.dali.backend as backend
import nvidia.dali.fn as fn
from dali_walk import fn_functions
from nvidia.dali import Pipeline, pipeline_def

OUT = pathlib.Path(__file__).resolve().parents[1] / "dali_schema.json"
ABOUT = {
    "source": "nvidia.dali.backend.GetSchema(fn.<op>._schema_name) in nvidia-dali-cuda130 "
              f"{dali.__version__}, CPU-only machine",
    "type": "str(OpSchema.GetArgumentType(arg)) without the 'DALIDataType.' prefix "
            "(leading '_' + '_VEC' = list type)",
    "default": "OpSchema.GetArgumentDefaultValueString(arg) verbatim (C++ formatting, e.g. "
               "'[0, ]', '0.500000', \"'CHW'\"; DATA_TYPE defaults are the enum int, e.g. "
               "'9' = FLOAT); null = no default",
    "optional": "OpSchema.IsArgumentOptional",
    "tensor_arg": "OpSchema.IsTensorArgument (accepts a per-sample DataNode)",
    "num_outputs": "OpSchema.CalculateOutputs(OpSpec(schema_name)) when the schema has no "
                   "output function; null when dynamic",
}


def signature(obj) -> dict:
    sig = inspect.signature(obj)
    params = []
    for p in sig.parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = repr(p.default)
        params.append(entry)
    return {"str": str(sig), "params": params}


def arg_entry(schema, arg: str) -> dict:
    kind = str(schema.GetArgumentType(arg)).replace("DALIDataType.", "")
    default = (schema.GetArgumentDefaultValueString(arg)
               if schema.HasArgumentDefaultValue(arg) else None)
    return {"type": kind, "default": default,
            "optional": bool(schema.IsArgumentOptional(arg)),
            "tensor_arg": bool(schema.IsTensorArgument(arg)),
            "per_frame": bool(schema.ArgSupportsPerFrameInput(arg)),
            "deprecated": bool(schema.IsDeprecatedArg(arg)),
            "common": False}


def input_names(schema) -> list:
    try:
        return [schema.GetInputName(i) for i in range(min(schema.MaxNumInput(), 8))]
    except RuntimeError:  # "Input documentation was not specified"
        return []


def num_outputs(name: str, schema):
    if schema.HasOutputFn():
        return None
    try:
        return int(schema.CalculateOutputs(backend.OpSpec(name)))
    except Exception:
        return None


def main() -> None:
    ops = {}
    for path, func in fn_functions(fn).items():
        name = func._schema_name
        schema = backend.GetSchema(name)
        backends = [b for b in ("cpu", "gpu", "mixed") if name in _registered(b)]
        if "cpu" not in backends:
            continue
        ops[path] = {
            "schema_name": name, "min_inputs": schema.MinNumInput(),
            "max_inputs": schema.MaxNumInput(), "num_outputs": num_outputs(name, schema),
            "supported_backends": backends, "is_deprecated": bool(schema.IsDeprecated()),
            "deprecated_in_favor_of": schema.DeprecatedInFavorOf() or None,
            "is_stateful": bool(schema.IsStateful()),
            "allows_sequences": bool(schema.AllowsSequences()),
            "supports_volumetric": bool(schema.SupportsVolumetric()),
            "input_names": input_names(schema),
            "args": {a: arg_entry(schema, a) for a in sorted(schema.GetArgumentNames())},
        }
    common = set.intersection(*(set(o["args"]) for o in ops.values()))
    for entry in ops.values():
        for a in common:
            entry["args"][a]["common"] = True
    doc = {"dali_version": dali.__version__, "_about": ABOUT, "common_args": sorted(common),
           "common_args_note": "schema args present in every registered CPU operator schema; "
                               "in addition every fn.* wrapper accepts python-level 'device' "
                               "and 'name' keywords (not schema args)",
           "ops": ops, "missing": [], "Pipeline": signature(Pipeline.__init__),
           "pipeline_def": signature(pipeline_def)}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(ops)} operators with a CPU backend")


_REGISTERED: dict = {}


def _registered(device: str) -> set:
    if device not in _REGISTERED:
        getter = {"cpu": backend.RegisteredCPUOps, "gpu": backend.RegisteredGPUOps,
                  "mixed": backend.RegisteredMixedOps}[device]
        _REGISTERED[device] = set(getter(True))  # True: hidden operators too
    return _REGISTERED[device]


if __name__ == "__main__":
    main()
