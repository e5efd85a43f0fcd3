"""Records which argument value forms DALI 2.4 accepts: tests/data/dali_arg_forms.json.

For every public operator registered in stoker that DALI also has, and every argument of
DALI's schema for it, the argument is given a plausible value in each form of
``arg_forms_cases.FORMS`` (None, bool, int, float, numpy scalars, a 0-d array, list,
tuple, 1-d array, ``types.Constant`` of a scalar and of a 0-d array, a per-sample DataNode
of the argument's dtype and of another dtype), and DALI's outcome is stored: "ok" (the
call, ``build()`` and one ``run()`` succeed) or "<stage>:<exception type>".

Plausible values come from OVERRIDES below, else from stoker's schema examples, else from
DALI's default, else from the argument's type. Each operator's inputs and base arguments
come from its first valid stoker example unless BASES says otherwise; the data is stored
in the JSON, so the replay needs neither stoker's examples nor DALI.

The common arguments (bytes_per_sample_hint, preserve) are the same code on every
operator: they are tried on the operators of COMMON_ON only, to keep the table small.

Re-run (from the repository root, DALI installed in /work/dali-venv):
    PYTHONPATH=. /work/dali-venv/bin/python tests/data/record/arg_forms.py [OPERATOR ...]
(naming operators re-records only theirs and keeps the rest of the table).
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import nvidia.dali as dali  # noqa: E402
from arg_forms_cases import FORMS, KINDS, Lib, encode_inputs, input_arrays, make_files, run_case  # noqa: E402
from nvidia.dali import backend as dali_backend  # noqa: E402

import stoker.fn  # noqa: E402, F401  (registers every operator)
from stoker.operators.machinery.registry import REGISTRY  # noqa: E402

OUT = ROOT / "tests" / "data" / "dali_arg_forms.json"
DALI_SCHEMAS = json.loads((ROOT / "tests" / "data" / "dali_schema.json").read_text())["ops"]
COMMON = ("bytes_per_sample_hint", "preserve")
COMMON_ON = ("copy", "crop", "random.uniform", "decoders.image", "readers.file")
# Operators whose inputs cannot come from external_source data alone.
SKIP = {"external_source": "a source, not an operator with arguments to check here",
        "readers.tfrecord": "DALI's Python wrapper, not a schema: its arguments are "
                            "checked by tests/readers/test_tfrecord_vs_dali.py",
        "experimental.inputs.video": "an input fed by feed_input, like external_source",
        "readers.video": "GPU-only in DALI 2.4",
        "readers.video_resize": "GPU-only in DALI 2.4",
        "experimental.readers.fits": "DALI 2.4's CPU fits reader allocates with CUDA and "
                                     "fails without a GPU: nothing to record",
        **{name: "a Python callable runs it (DALI has no argument forms to record for "
           "'function'); tests/python replays DALI's outcomes" for name in (
            "python_function", "torch_python_function", "dl_tensor_python_function")}}

# op -> where the first valid example won't do: "example" (index of the valid example to
# take inputs and base arguments from), "layouts" (one per input), "base" (the arguments),
# "inputs" (a list of (samples, layout)).
BASES: dict[str, dict] = {
    "readers.file": {"inputs": [], "base": {"file_root": "{root}"}},
    # Paths given as data: files of the case's tree (the example reads stoker's own source
    # files, whose paths move with the code).
    "io.file.read": {"inputs": [([np.frombuffer(f"{{root}}/{f}".encode(), np.uint8)
                                  for f in ("a/0.jpg", "list.txt")], None)]},
    "readers.nemo_asr": {"inputs": [], "base": {"manifest_filepaths": ["{root}/manifest.json"]}},
    "cat": {"layouts": ["AB", "AB"]},
    "expand_dims": {"layouts": ["XYZ"]},
    "one_hot": {"layouts": ["A"]},
    "random.choice": {"example": 1},
    "squeeze": {"layouts": ["ABCD"]},
    "stack": {"layouts": ["AB", "AB"]},
}
_FILES = ["{root}/a/0.jpg", "{root}/b/1.jpg"]
_CROP_HW = {"crop_h": {"value": 2.0, "drop": ["crop"], "with": {"crop_w": 2.0}},
            "crop_w": {"value": 2.0, "drop": ["crop"], "with": {"crop_h": 2.0}},
            "crop_d": {"value": 2.0, "drop": ["crop"], "with": {"crop_h": 2.0, "crop_w": 2.0}}}
_SLICE = {"end": {"value": [3, 3], "drop": ["rel_start", "rel_shape"], "with": {"start": [1, 1]}},
          "rel_end": {"value": [0.75, 0.75], "drop": ["rel_shape"]},
          "shape": {"value": [2, 2], "drop": ["rel_start", "rel_shape"], "with": {"start": [1, 1]}},
          "start": {"value": [1, 1], "drop": ["rel_start", "rel_shape"], "with": {"shape": [2, 2]}},
          "axes": {"value": [0, 1]}}
_RESIZE = {"resize_longer": {"value": 6.0}, "resize_x": {"value": 9.0},
           "resize_y": {"value": 5.0}, "resize_z": {"value": 0.0, "with": {"resize_x": 9.0}},
           "size": {"value": [7.0, 3.0]},
           "mode": {"value": "stretch", "with": {"size": [7.0, 3.0]}},
           "roi_start": {"value": [1.0, 1.0], "with": {"size": [4.0, 4.0], "roi_end": [4.0, 3.0]}},
           "roi_end": {"value": [4.0, 3.0], "with": {"size": [4.0, 4.0], "roi_start": [1.0, 1.0]}}}
# (op, arg) -> {"value": plausible value, "drop": base args to leave out, "with": extra args}
OVERRIDES: dict[tuple[str, str], dict] = {
    ("cat", "axis"): {"value": 0},
    ("cat", "axis_name"): {"value": "A"},
    ("constant", "idata"): {"value": [7], "drop": ["fdata"]},
    ("constant", "shape"): {"value": [3]},
    ("coord_transform", "MT"): {"value": [1.0, 0.0, 5.0, 0.0, 2.0, 6.0], "drop": ["M", "T"]},
    **{(op, k): v for op in ("crop", "crop_mirror_normalize", "decoders.image_crop",
                             "resize_crop_mirror") for k, v in _CROP_HW.items()},
    **{(op, k): v for op in ("slice", "decoders.image_slice") for k, v in _SLICE.items()},
    **{(op, k): {**v, "drop": ["resize_shorter"]} for op in ("resize", "resize_crop_mirror")
       for k, v in _RESIZE.items()},
    ("expand_dims", "new_axis_names"): {"value": "AB"},
    ("one_hot", "axis_name"): {"value": "B"},
    ("random.coin_flip", "dtype"): {"value": {"enum": "DALIDataType", "v": 6}},
    ("readers.file", "dir_filters"): {"value": ["a"]},
    ("readers.nemo_asr", "manifest_filepaths"): {"value": ["{root}/manifest.json"]},
    ("readers.file", "file_list"): {"value": "{root}/list.txt", "drop": ["file_root"]},
    ("readers.file", "file_root"): {"value": "{root}"},
    ("readers.file", "files"): {"value": _FILES, "drop": ["file_root"]},
    ("readers.file", "labels"): {"value": [3, 4], "drop": ["file_root"], "with": {"files": _FILES}},
    ("reinterpret", "rel_shape"): {"value": [0.5, 2.0, 1.0], "drop": ["dtype"]},
    ("reinterpret", "src_dims"): {"value": [2, 1, 0], "drop": ["dtype"]},
    ("reshape", "rel_shape"): {"value": [0.5, 2.0, 1.0], "drop": ["shape"]},
    ("squeeze", "axis_names"): {"value": "AC", "drop": ["axes"]},
    ("stack", "axis_name"): {"value": "C"},
    ("transforms.rotation", "axis"): {"value": [0.0, 0.0, 1.0], "drop": ["center"]},
    ("transforms.shear", "angles"): {"value": [30.0, 10.0], "drop": ["shear"]},
    ("transpose", "output_layout"): {"value": "ABC"},
}

LIB = Lib(dali.fn, dali.types, dali.Pipeline)


def _plain(v):
    """A stoker example's value as JSON (enums tagged with their class)."""
    if hasattr(v, "name") and type(v).__name__ in ("DALIDataType", "DALIImageType",
                                                    "DALIInterpType"):
        return {"enum": type(v).__name__, "v": int(v)}
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    return v


def _parse_default(text: str | None, kind: str):
    if text is None or text == "":
        return None
    if kind in ("DALIDataType", "DALIImageType", "DALIInterpType"):
        return {"enum": kind, "v": int(text)}
    if kind == "str":
        return text.strip("'")
    if kind == "bool":
        return text == "True"
    if kind in ("ints", "floats", "strs"):
        inner = [x.strip() for x in text.strip("[]").split(",") if x.strip()]
        if kind == "strs":
            return [x.strip("'") for x in inner]
        return [int(float(x)) if kind == "ints" else float(x) for x in inner] or None
    if kind == "int":
        return int(text)
    return float(text)


_GUESS = {"int": 1, "float": 0.5, "bool": True, "str": "", "ints": [1, 1],
          "floats": [0.5, 0.5], "strs": ["x"], "DALIDataType": {"enum": "DALIDataType", "v": 9},
          "DALIImageType": {"enum": "DALIImageType", "v": 0},
          "DALIInterpType": {"enum": "DALIInterpType", "v": 1}}


def _layout(sample: np.ndarray) -> str | None:
    if sample.ndim == 3 and sample.shape[-1] in (1, 3):
        return "HWC"
    if sample.ndim == 4 and sample.shape[-1] in (1, 3):
        return "FHWC"
    return None


def op_spec(name: str) -> dict:
    schema = REGISTRY[name]
    valid = [e for e in schema.examples if e.raises is None]
    examples = {}
    for e in valid:
        for k, v in e.args.items():
            examples.setdefault(k, _plain(v))
    how = BASES.get(name, {})
    example = valid[how.get("example", 0)]
    inputs = how.get("inputs", [(list(samples), _layout(samples[0]))
                                for samples in example.inputs])
    if "layouts" in how:
        inputs = [(samples, lay) for (samples, _), lay in zip(inputs, how["layouts"], strict=True)]
    base = how.get("base", {k: _plain(v) for k, v in example.args.items()})
    batch = len(inputs[0][0]) if inputs else 2
    spec = {"batch": batch, "inputs": [encode_inputs(s, lay) for s, lay in inputs],
            "base": base, "args": {}}
    dschema = dali_backend.GetSchema(DALI_SCHEMAS[name]["schema_name"])
    ours = {a.name for a in schema.args}
    for arg in dschema.GetArgumentNames():
        if arg.startswith("_") or dschema.IsDeprecatedArg(arg):
            continue
        if arg in COMMON and name not in COMMON_ON:
            continue
        if arg not in ours and arg not in COMMON and arg != "seed":
            spec.setdefault("not_in_stoker", []).append(arg)
            continue
        dtype = str(dschema.GetArgumentType(arg)).rsplit(".", 1)[-1]
        if dtype not in KINDS:  # (a list of DALI types: no value forms of its own to try)
            spec.setdefault("unchecked", {})[arg] = dtype
            continue
        kind = KINDS[dtype]
        default = (dschema.GetArgumentDefaultValueString(arg)
                   if dschema.HasArgumentDefaultValue(arg) else None)
        over = OVERRIDES.get((name, arg), {})
        value = over.get("value", examples.get(arg, _parse_default(default, kind)))
        if value is None:
            value = _GUESS[kind]
        entry = {"type": dtype, "value": value}
        if dschema.IsTensorArgument(arg):
            entry["tensor"] = 1
        for key in ("drop", "with"):
            if key in over:
                entry[key] = over[key]
        spec["args"][arg] = entry
    return spec


def main(only: list[str]) -> None:
    """Records every shared operator, or only the operators named (the others' entries
    are kept from the current table)."""
    warnings.simplefilter("ignore")
    names = sorted(n for n in REGISTRY if not n.startswith("_") and n in DALI_SCHEMAS
                   and n not in SKIP)
    jpeg = input_arrays(op_spec("decoders.image")["inputs"][0])[0].tobytes()
    table = {}
    if only:
        table = {n: op for n, op in json.loads(OUT.read_text())["ops"].items() if n in names}
        names = [n for n in names if n in only]
    with tempfile.TemporaryDirectory() as tmp:
        make_files(pathlib.Path(tmp), jpeg)
        for name in names:
            op = op_spec(name)
            op["base_outcome"], _ = run_case(LIB, name, op, root=tmp)
            for arg, entry in op["args"].items():
                entry["dali"] = [run_case(LIB, name, op, arg, form, root=tmp)[0]
                                 for form in FORMS]
                if entry["dali"][0] != "ok":
                    print(f"{name}.{arg}: natural value {entry['value']!r} -> {entry['dali'][0]}")
            if op["base_outcome"] != "ok":
                print(f"{name}: base case -> {op['base_outcome']}")
            table[name] = op
    table = dict(sorted(table.items()))
    doc = {"_about": __doc__.split("\n\n")[0], "dali_version": dali.__version__,
           "forms": list(FORMS), "common_args_on": list(COMMON_ON), "skipped": SKIP,
           "ops": table}
    lines = json.dumps(doc, separators=(",", ":")).replace(str(ROOT) + "/", "{repo}/")
    OUT.write_text(lines + "\n")
    print(f"wrote {OUT} ({len(lines)} bytes)")


if __name__ == "__main__":
    main(sys.argv[1:])
