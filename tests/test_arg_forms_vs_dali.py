"""Argument value forms against DALI 2.4's recorded acceptance table.

tests/data/dali_arg_forms.json holds, for every operator both libraries have and every
argument of DALI's schema, DALI's outcome for the argument given in each value form
(recorded by tests/data/record/arg_forms.py; the cases are built by arg_forms_cases.py).
Here each case runs on stoker: what DALI accepts stoker must accept; what DALI refuses
stoker must refuse, at the same stage or earlier, with an error that ``except <DALI's
exception type>`` catches. Where stoker differs on purpose, DIFFERENCES says why (and
README's "Differences from DALI, on purpose" has a bullet); KNOWN_GAPS lists the
differences that are not on purpose, each in one operator's own rules, still to fix.
"""

from __future__ import annotations

import builtins
import json
import pathlib

import pytest
from arg_forms_cases import ENUMS, FORMS, KINDS, STAGES, Lib, input_arrays, make_files, run_case

import stoker

# The table calls deprecated operators (fn.shapes) as DALI's users still do.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "dali_arg_forms.json").read_text())
OPS = DATA["ops"]
LIB = Lib(stoker.fn, stoker.types, stoker.Pipeline)
_TEXT = ("str", "strs")
_VECTORS = ("ints", "floats")


def _text_from_non_text(kind: str, form: str, tensor: bool) -> str | None:
    if kind in _TEXT and form in ("bool", "int", "float", "np_int", "np_float", "list",
                                  "tuple"):
        return ("DALI turns any value given for a string argument into text with str() "
                "(True -> 'True', [1] -> '[1]') and mostly fails later on the text; stoker "
                "refuses a value that is not text when the operator is called (TypeError)")
    return None


def _bool_from_list(kind: str, form: str, tensor: bool) -> str | None:
    if kind == "bool" and form in ("list", "tuple"):
        return ("DALI reads any non-empty list given for a boolean argument as True (even "
                "[False]); stoker refuses a list there")
    return None


def _array_for_constant_vector(kind: str, form: str, tensor: bool) -> str | None:
    if kind in (*_VECTORS, "strs") and form == "np_1d" and not tensor:
        return ("DALI routes a numpy array of several values to the per-sample path, which "
                "an argument without per-sample input refuses (TypeError); stoker reads the "
                "array as the list it holds")
    return None


def _enum_from_bool(kind: str, form: str, tensor: bool) -> str | None:
    if kind in ENUMS and form == "bool":
        return ("DALI takes True for an enum argument as the member numbered 1 (dtype=True is "
                "UINT16, interp_type=True is INTERP_LINEAR); stoker refuses a bool there")
    return None


def _per_sample_data_of_another_type(kind: str, form: str, tensor: bool) -> str | None:
    if form == "node_other" or (form == "node" and kind == "DALIInterpType"):
        return ("DALI wants per-sample argument data of exactly the argument's type (float32 "
                "for a float, int32 for an integer, DALI's own INTERP_TYPE for interpolation "
                "types) and stops at run otherwise; stoker converts any numeric data")
    return None


# Deliberate differences: each rule gets (kind, form, per-sample?) and returns the reason
# when the case is one where stoker differs from DALI on purpose.
DIFFERENCES = (_text_from_non_text, _bool_from_list, _array_for_constant_vector,
               _enum_from_bool, _per_sample_data_of_another_type)


# Differences not on purpose, for the operator's owner to fix: (op, args, forms, why).
# A one-value form of a vector argument ("crop=2") comes as [2] to the operator, in DALI
# and in stoker alike; what the operator then does with one value is its own rule.
ONE_VALUE = ("bool", "int", "float", "np_int", "np_float", "np_0d", "const", "const_0d")
FLAT = ("np_1d", "node")
_EVERY_AXIS = "DALI uses one value for every axis; stoker fails at run"
KNOWN_GAPS = [
    *(("multi_paste", args, forms, "DALI takes these (K, 2) windows only as per-sample "
                                    "tensors; stoker also takes a flat list of K * 2 values")
      for args, forms in ((("in_anchors", "shapes"), ("natural", "list", "tuple", "np_1d")),
                          (("out_anchors",), ("natural", "list", "tuple")),
                          (("in_anchors_rel", "out_anchors_rel", "shapes_rel"),
                           ("list", "tuple")))),
    *(("readers.coco", args, forms, "DALI switches to (or from) preprocessed annotations "
                                    "when such an argument is passed at all, so an explicit "
                                    "'' or False fails its build; stoker reads them by value")
      for args, forms in ((("preprocessed_annotations", "save_preprocessed_annotations_dir"),
                           ("natural", "np_0d", "np_1d")),
                          (("save_preprocessed_annotations",),
                           ("natural", *ONE_VALUE, "np_1d")))),
    ("bbox_rotate", ("remove_threshold",), ("bool", "int", "np_int"),
     "DALI 2.4 refuses an integer remove_threshold at build (its other float arguments take "
     "integers); stoker takes integers for float arguments everywhere"),
    *((op, ("crop",), ONE_VALUE, "DALI refuses a one-value crop window at build (2 or 3 "
                                 "values); stoker takes it")
      for op in ("crop", "crop_mirror_normalize", "decoders.image_crop", "resize_crop_mirror")),
    ("resize_crop_mirror", ("crop_h", "crop_w"), ("none",),
     "crop_h without crop_w (or the reverse): DALI refuses it at build, stoker ignores the "
     "lone one"),
    ("decoders.image_crop", ("crop_h", "crop_w"), ("node",),
     "the crop_h/crop_w check asks a per-sample DataNode for its truth value (TypeError)"),
    ("resize", ("roi_start", "roi_end"), ONE_VALUE, _EVERY_AXIS),
    ("resize_crop_mirror", ("roi_start", "roi_end"), ONE_VALUE, _EVERY_AXIS),
    ("transforms.rotation", ("center", "axis"), ONE_VALUE, _EVERY_AXIS),
    ("transforms.scale", ("center",), ONE_VALUE, _EVERY_AXIS),
    ("transforms.shear", ("center",), ONE_VALUE, _EVERY_AXIS),
    ("transforms.scale", ("ndim",), ("bool",),
     "ndim=1 with a 2-value scale: DALI goes by the scale, stoker refuses at run"),
    ("rotate", ("axis",), tuple(f for f in FORMS if f not in ("none", "node_other")),
     "DALI ignores 'axis' for 2-D input; stoker refuses it at run (no volumetric rotation)"),
    *((op, ("resize_z",), ("node",), "stoker refuses a per-sample resize_z (no volumetric "
                                     "resize yet); DALI ignores it for 2-D input")
      for op in ("resize", "resize_crop_mirror")),
    ("reinterpret", ("src_dims",), FLAT,
     "DALI refuses a per-sample src_dims at build; stoker takes it"),
    ("squeeze", ("axes",), FLAT, "DALI refuses per-sample axes at build; stoker takes an "
                                 "array and asks a DataNode for its truth value (TypeError)"),
    ("coord_transform", ("M", "MT"), FLAT, "DALI wants a per-sample matrix shaped (rows, "
                                           "cols) and refuses a flat one at run; stoker "
                                           "reads it row by row"),
    ("warp_affine", ("matrix",), FLAT, "as for coord_transform's M"),
    ("experimental.warp_perspective", ("matrix",),
     ("bool", "int", "float", "np_int", "np_float", "np_0d", "np_1d", "const", "const_0d",
      "node"),
     "DALI takes one value for the matrix and wants a per-sample one shaped 3x3; stoker "
     "wants 9 values and reads a per-sample one flat"),
    ("tensor_resize", ("alignment",), ("bool", "int", "np_int", "node"),
     "stoker resamples with centers aligned (alignment 0.5) only; DALI takes any alignment"),
    ("clahe", ("bins",), ("bool",), "stoker's CLAHE is OpenCV's, 256 bins only; DALI takes "
                                    "other bin counts"),
    ("permute_batch", ("indices",), ("np_1d",),
     "DALI reads a numpy array as a per-sample tensor (one index each) and refuses it at "
     "run; stoker takes it as the list of indices"),
    ("normalize", ("mean", "stddev"), ("node",),
     "a per-sample scalar: DALI wants the parameter shaped like the reduced input and "
     "refuses () at run; stoker broadcasts it"),
    ("random.uniform", ("values",), ("node",),
     "per-sample 'values' fail in stoker's kernel at run (cannot reshape)"),
    ("decoders.video", ("pad_mode",), ("node",),
     "an int32 DataNode for the string pad_mode: DALI refuses it at build (a type "
     "mismatch), stoker at run (pad_mode per sample is the string's uint8 bytes)"),
    ("element_extract", ("element_map",), ("none",),
     "the required element_map given as None: DALI raises ValueError, stoker TypeError "
     "(missing required argument), both at the call"),
    ("readers.webdataset", ("ext",), ("none",),
     "the required ext given as None: DALI's wrapper raises NotImplementedError, stoker "
     "TypeError (missing required argument), both at the call"),
    ("experimental.readers.video", ("enable_frame_num",), ("np_1d",),
     "DALI takes a one-element array of strings for enable_frame_num; stoker refuses it"),
    ("experimental.readers.video", ("file_list", "file_root"), ("natural", "np_0d", "np_1d"),
     "an empty file_list/file_root beside filenames: DALI refuses it at build, stoker "
     "reads the filenames"),
    ("readers.caffe2", ("additional_inputs",),
     tuple(f for f in FORMS if f not in ("none", "list", "tuple", "node", "node_other")),
     "a scalar additional_inputs on the example's records (which hold the additional "
     "proto): DALI 2.4 fails at run, stoker reads the proto"),
    ("readers.mxnet", ("index_path",), ("none",),
     "no index: DALI refuses it at build, stoker builds the index (README: container "
     "indexes are optional)"),
]


def _verdict(dali: str, ours: str, exc: BaseException | None) -> str | None:
    """None when stoker's outcome agrees with DALI's, else what differs."""
    if dali == "ok":
        return None if ours == "ok" else f"DALI accepts it, stoker: {ours}: {exc}"
    if ours == "ok":
        return f"DALI refuses it ({dali}), stoker accepts it"
    d_stage, d_type = dali.split(":")
    o_stage = ours.split(":")[0]
    if STAGES.index(o_stage) > STAGES.index(d_stage):
        return f"DALI refuses it at {d_stage}, stoker later: {ours}: {exc}"
    if not isinstance(exc, getattr(builtins, d_type, Exception)):
        return f"DALI raises {d_type}, stoker {type(exc).__name__} ({ours}): {exc}"
    return None


@pytest.fixture(scope="module")
def files_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("arg_forms_files")
    jpeg = input_arrays(OPS["decoders.image"]["inputs"][0])[0].tobytes()
    make_files(root, jpeg)
    return str(root)


def test_the_table_covers_every_shared_operator_and_form():
    from stoker.operators.machinery.registry import REGISTRY

    public = {n for n in REGISTRY if not n.startswith("_")}
    assert set(OPS) == public - set(DATA["skipped"]), "re-run tests/data/record/arg_forms.py"
    assert tuple(DATA["forms"]) == FORMS
    assert sum(len(op["args"]) for op in OPS.values()) > 400


@pytest.mark.parametrize("name", sorted(OPS))
def test_argument_forms_match_dali(name, files_root):
    op = OPS[name]
    base, exc = run_case(LIB, name, op, root=files_root)
    assert base == op["base_outcome"] == "ok", f"the base call fails: {exc}"
    problems = []
    gaps = {(arg, form) for op_name, args, forms, _ in KNOWN_GAPS if op_name == name
            for arg in args for form in forms}
    for arg, entry in op["args"].items():
        kind = KINDS[entry["type"]]
        for form, dali in zip(FORMS, entry["dali"], strict=True):
            ours, exc = run_case(LIB, name, op, arg, form, root=files_root)
            why = _verdict(dali, ours, exc)
            if why is None:
                continue
            if any(rule(kind, form, bool(entry.get("tensor"))) for rule in DIFFERENCES):
                continue
            if (arg, form) in gaps:
                gaps.discard((arg, form))
                continue
            problems.append(f"{arg}={form}: {why}")
    problems += [f"{arg}={form}: agrees with DALI now; remove it from KNOWN_GAPS"
                 for arg, form in sorted(gaps)]
    assert not problems, f"fn.{name}, {len(problems)} differences:\n" + "\n".join(problems)
