"""Records DALI 2.4's outcome of the operator cases defined here into tests/data/dali_op_cases.json.

Run with DALI installed (CPU is enough):
    /work/dali-venv/bin/python tests/data/record/op_outcomes.py

Each case (tests/op_cases.py says the format) is run by DALI; its outputs (samples and
layouts) or its error (stage, type, message) are stored with it. ``match`` is a phrase of
DALI's error message that stoker's must contain; the recorder checks DALI's does.
``earlier_ok`` marks errors stoker raises at an earlier stage on purpose (at the call,
where the layout it needs is known then; DALI checks it at run).
The replay tests: tests/tensor/test_tensor_dali_cases.py, tests/image/test_color.py.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

TESTS = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

import nvidia.dali as dali  # noqa: E402
import nvidia.dali.fn as fn  # noqa: E402
import nvidia.dali.types as types  # noqa: E402
from dali_cases import with_options  # noqa: E402
from nvidia.dali import Pipeline  # noqa: E402
from op_cases import DATA, Lib, encode_array, run_case  # noqa: E402

T = {"dali_type": None}
F32 = np.float32


def dt(name: str) -> dict:
    return {"dali_type": name}


def arrays(*samples) -> list:
    return [encode_array(np.asarray(s)) for s in samples]


def case(name, op, inputs=(), args=None, layouts=None, arg_inputs=None, match=None,
         earlier_ok=False, atol=0):
    c = {"name": name, "op": op, "inputs": [arrays(*s) for s in inputs],
         "args": args or {}}
    if arg_inputs:
        c["arg_inputs"] = {k: arrays(*v) for k, v in arg_inputs.items()}
    return with_options(c, layouts=layouts, match=match, earlier_ok=earlier_ok, atol=atol)


def cast_cases() -> list:
    scalars = [np.array(v, F32) for v in (2.5, -300.5, 0.5, -0.5, 1e10, 254.6)]
    out = [case(f"cast:scalar_float_to_{t}", "cast", [scalars], {"dtype": dt(t)})
           for t in ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64",
                     "BOOL", "FLOAT16", "FLOAT64")]
    out.append(case("cast:scalar_int_to_float", "cast",
                    [[np.array(v, np.int32) for v in (7, -3, 70000)]], {"dtype": dt("FLOAT")}))
    out.append(case("cast:scalar_uint8_to_int8", "cast",
                    [[np.array(v, np.uint8) for v in (7, 200)]], {"dtype": dt("INT8")}))
    empty = [np.zeros((0, 3), F32), np.zeros((2, 0), F32), np.zeros((0, 0), F32)]
    out += [case(f"cast:empty_to_{t}", "cast", [empty], {"dtype": dt(t)})
            for t in ("UINT8", "INT32", "FLOAT16", "BOOL")]
    data = [np.array([1.5, -2.5, 300.7, -0.4], F32), np.array([0.5, 70000.2, np.nan], F32)]
    out.append(case("cast_like:float_like_uint8", "cast_like",
                    [data, [np.zeros(3, np.uint8), np.zeros(1, np.uint8)]],
                    layouts=["X", "A"]))
    out.append(case("cast_like:float_like_int16", "cast_like",
                    [data, [np.zeros(1, np.int16)] * 2]))
    out.append(case("cast_like:uint8_like_float", "cast_like",
                    [[np.arange(6, dtype=np.uint8).reshape(2, 3)] * 2,
                     [np.zeros((), F32)] * 2]))
    out.append(case("cast_like:scalar_like_bool", "cast_like",
                    [[np.array(v, F32) for v in (0.3, 0.6)],
                     [np.zeros(2, np.bool_)] * 2]))
    out.append(case("cast_like:empty_like_int32", "cast_like",
                    [empty, [np.zeros(2, np.int32)] * 3]))
    return out


_PAD_DATA = [np.full((2, 3), 1, np.int32), np.full((4, 1), 2, np.int32),
             np.full((1, 5), 3, np.int32)]


def _ints(*rows) -> list:
    return [np.array(r, np.int32) for r in rows]


def pad_cases() -> list:
    d = [_PAD_DATA]
    return [
        case("pad:per_sample_axes", "pad", d, {"fill_value": 7},
             arg_inputs={"axes": _ints([0], [1], [0, 1])}),
        case("pad:per_sample_axes_some_empty", "pad", d,
             arg_inputs={"axes": _ints([], [1], [0])}),
        case("pad:per_sample_axes_negative", "pad", d,
             arg_inputs={"axes": _ints([-2], [-1], [1, 0])}),
        case("pad:per_sample_axes_with_align", "pad", d, {"align": 3},
             arg_inputs={"axes": _ints([0], [1], [0, 1])}),
        case("pad:per_sample_axes_with_shape", "pad", d, {"shape": [6]},
             arg_inputs={"axes": _ints([0], [1], [1])}),
        case("pad:per_sample_align_scalars", "pad", d,
             arg_inputs={"align": [np.array(v, np.int32) for v in (2, 3, 4)]}),
        case("pad:per_sample_align_per_axis", "pad", d,
             arg_inputs={"align": _ints([2, 1], [3, 2], [4, 4])}),
        case("pad:per_sample_shape", "pad", d,
             arg_inputs={"shape": _ints([5, 5], [-1, -1], [2, 7])}),
        case("pad:per_sample_shape_one_axis", "pad", d, {"axes": [0]},
             arg_inputs={"shape": _ints([5], [2], [7])}),
        case("pad:axis_names_empty_is_all_axes", "pad", d, {"axis_names": ""},
             layouts=["HW"]),
        case("pad:axis_names_empty_without_layout", "pad", d, {"axis_names": ""}),
        case("pad:axis_names_empty_with_align", "pad", d, {"axis_names": "", "align": [3, 4]},
             layouts=["HW"]),
        case("pad:axes_empty_is_all_axes", "pad", d, {"axes": []}),
        case("pad:axes_negative", "pad", d, {"axes": [-1]}),
        case("pad:shape_zero_and_minus_one", "pad", d, {"shape": [0, 6]}),
        case("pad:align_zero", "pad", d, {"align": 0},
             match="Values of `align` argument must be positive."),
        case("pad:align_negative", "pad", d, {"align": -1},
             match="Values of `align` argument must be positive."),
        case("pad:align_one_zero", "pad", d, {"align": [2, 0]},
             match="Values of `align` argument must be positive."),
        case("pad:align_too_long", "pad", d, {"align": [2, 3, 4]}),
        case("pad:axes_too_high", "pad", d, {"axes": [2]},
             match="Axis 2 out of range. Expected range is [-2, 1] for a 2D input"),
        case("pad:axes_too_low", "pad", d, {"axes": [-3]},
             match="Axis -3 out of range. Expected range is [-2, 1] for a 2D input"),
        case("pad:per_sample_axes_too_high", "pad", d,
             arg_inputs={"axes": _ints([0], [2], [1])},
             match="Axis 2 out of range. Expected range is [-2, 1] for a 2D input"),
        case("pad:axes_repeated", "pad", d, {"axes": [0, -2]},
             match="Axis index 0 occurs more than once"),
        case("pad:axis_name_not_in_layout", "pad", d, {"axis_names": "C"}, layouts=["HW"],
             earlier_ok=True),
        case("pad:axis_names_without_layout", "pad", d, {"axis_names": "W"},
             match="Axis 'W' is not present in the input layout"),
        case("pad:axes_and_axis_names", "pad", d, {"axes": [0], "axis_names": "H"},
             layouts=["HW"], match='"axes" and "axis_names" are mutually exclusive'),
    ]


_IMG = [np.arange(60, dtype=np.uint8).reshape(5, 4, 3),
        np.arange(60, dtype=np.uint8).reshape(4, 5, 3) + 100]


def slice_cases() -> list:
    d = [_IMG]
    ends = '"end", "rel_end", "shape", and "rel_shape" arguments are mutually exclusive'
    anchor, shape = _ints([1, 2], [1, 2]), _ints([3, 1], [3, 1])
    return [
        case("slice:axes_empty_is_all_axes", "slice", d,
             {"start": [1, 1, 1], "shape": [2, 2, 2], "axes": []}),
        case("slice:axes_empty_with_inputs", "slice",
             [_IMG, _ints([1, 1, 0], [0, 2, 1]), _ints([2, 2, 2], [3, 1, 1])], {"axes": []}),
        case("slice:per_sample_axes_empty", "slice", d,
             {"rel_start": [0.25, 0.25, 0.0], "rel_shape": [0.5, 0.5, 1.0]},
             arg_inputs={"axes": _ints([], [])}),
        case("slice:per_sample_axes", "slice", d,
             {"start": [1, 0], "shape": [2, 2]},
             arg_inputs={"axes": _ints([0, 1], [1, 0])}),
        case("slice:axis_names_empty_is_all_axes", "slice", d,
             {"start": [1, 1, 1], "shape": [2, 2, 2], "axis_names": ""}, layouts=["HWC"]),
        case("slice:axes_negative", "slice", d, {"start": [1, 2], "shape": [3, 1],
                                                 "axes": [-3, -2]}),
        case("slice:end_and_shape", "slice", d,
             {"start": [1, 2], "end": [4, 3], "shape": [3, 1], "axes": [0, 1]}, match=ends),
        case("slice:inputs_and_named_arguments", "slice", [_IMG, anchor, shape],
             {"start": [1, 2], "end": [4, 3], "shape": [3, 1], "axes": [0, 1]}, match=ends),
        case("slice:start_and_rel_start", "slice", d,
             {"start": [1, 2], "rel_start": [0.1, 0.1], "shape": [3, 1], "axes": [0, 1]},
             match='"start" and "rel_start" arguments are mutually exclusive'),
        case("slice:axes_and_axis_names", "slice", d,
             {"start": [1, 2], "shape": [3, 1], "axes": [0, 1], "axis_names": "HW"},
             layouts=["HWC"], match='"axes" and "axis_names" are mutually exclusive'),
        case("slice:inputs_and_start", "slice", [_IMG, anchor, shape],
             {"start": [1, 2], "axes": [0, 1]}, earlier_ok=True,
             match="not compatible with positional anchor and shape inputs"),
        case("slice:nothing_to_slice", "slice", d, earlier_ok=True,
             match="Expected named slice arguments"),
        case("slice:axes_too_high", "slice", d, {"start": [1, 2], "shape": [3, 1],
                                                 "axes": [0, 3]},
             match="Axis 3 out of range. Expected range is [-3, 2] for a 3D input"),
        case("slice:axes_too_low_with_inputs", "slice", [_IMG, anchor, shape],
             {"axes": [-4, 0]},
             match="Axis -4 out of range. Expected range is [-3, 2] for a 3D input"),
        case("slice:per_sample_axes_too_high", "slice", d,
             {"rel_start": [0.1, 0.1], "rel_shape": [0.5, 0.5]},
             arg_inputs={"axes": _ints([0, 1], [5, 6])},
             match="Axis 5 out of range. Expected range is [-3, 2] for a 3D input"),
        case("slice:axes_repeated", "slice", d, {"start": [1, 2], "shape": [3, 1],
                                                 "axes": [0, 0]},
             match="Axis index 0 occurs more than once"),
        case("slice:axis_name_not_in_layout", "slice", d,
             {"start": [1, 2], "shape": [3, 1], "axis_names": "ZH"}, layouts=["HWC"],
             earlier_ok=True),
        # Without a layout DALI names the axes by rank: HW, HWC, DHWC.
        case("slice:axis_names_without_layout", "slice", d,
             {"start": [1, 2], "shape": [3, 1], "axis_names": "HW"}),
        case("slice:axis_names_without_layout_channels", "slice", d,
             {"start": [1, 1], "shape": [2, 1], "axis_names": "WC"}),
        case("slice:axis_names_without_layout_2d", "slice",
             [[np.arange(20, dtype=np.uint8).reshape(5, 4)]],
             {"start": [1, 2], "shape": [3, 1], "axis_names": "HW"}),
        case("slice:default_axes_without_layout_4d", "slice",
             [[np.arange(120, dtype=np.uint8).reshape(2, 3, 4, 5)]],
             {"start": [1, 1], "shape": [1, 2]}),
        case("slice:axis_name_missing_without_layout", "slice", d,
             {"start": [1], "shape": [1], "axis_names": "D"},
             match="Axis 'D' is not present in the input layout"),
    ]


def one_hot_cases() -> list:
    d3 = [[np.zeros((2, 3, 4), np.int32)] * 2]
    return [
        case("one_hot:axis_name_too_long", "one_hot", d3,
             {"num_classes": 5, "axis_name": "CD"}, layouts=["ABC"],
             match="Unsupported axis_name value"),
        case("one_hot:axis_name_empty", "one_hot", d3, {"num_classes": 5, "axis_name": ""},
             layouts=["ABC"], match="Unsupported axis_name value"),
        case("one_hot:axis_name_without_layout", "one_hot", d3,
             {"num_classes": 5, "axis_name": "O"}, match="Input layout mismatch"),
        case("one_hot:axis_name_without_layout_1d", "one_hot",
             [[np.array([0, 1, 2], np.int32)] * 2], {"num_classes": 5, "axis_name": "O"},
             match="Input layout mismatch"),
        case("one_hot:axis_name_single_elements", "one_hot",
             [[np.array([1], np.int32), np.array([3], np.int32)]],
             {"num_classes": 5, "axis_name": "O"}),
        case("one_hot:axis_name_repeats_a_layout_letter", "one_hot", d3,
             {"num_classes": 2, "axis_name": "A"}, layouts=["ABC"]),
        case("one_hot:axis_out_of_range", "one_hot", d3, {"num_classes": 2, "axis": 5},
             layouts=["ABC"], earlier_ok=True),
    ]


_COLOR_OPS = {
    "brightness": {"brightness": 1.5},
    "contrast": {"contrast": 1.5},
    "brightness_contrast": {"brightness": 1.2, "contrast": 0.8},
    "hue": {"hue": 30.0},
    "saturation": {"saturation": 0.5},
    "hsv": {"hue": 30.0, "saturation": 0.5, "value": 0.9},
    "color_twist": {"hue": 30.0, "saturation": 0.5, "brightness": 1.1, "contrast": 0.9},
    "color_space_conversion": {"image_type": {"image_type": "RGB"},
                               "output_type": {"image_type": "YCbCr"}},
}


def color_cases() -> list:
    rng = np.random.default_rng(3)
    hwc = [rng.integers(0, 256, (3, 4, 3), dtype=np.uint8) for _ in range(2)]
    fhwc = [rng.integers(0, 256, (2, 3, 4, 3), dtype=np.uint8)]
    out = []
    for op, args in _COLOR_OPS.items():
        # uint8 outputs: DALI's float arithmetic and stoker's may round a half apart.
        out.append(case(f"color:{op}_hwc_without_layout", op, [hwc], args, atol=1))
        out.append(case(f"color:{op}_fhwc_without_layout", op, [fhwc], args, atol=1))
        out.append(case(f"color:{op}_keeps_dhwc", op, [fhwc], args, layouts=["DHWC"],
                        atol=1))
    out.append(case("color:color_space_conversion_fdhwc_without_layout",
                    "color_space_conversion", [[np.zeros((2, 2, 3, 4, 3), np.uint8)]],
                    _COLOR_OPS["color_space_conversion"]))
    for name, dtype in (("float", F32), ("int16", np.int16), ("int32", np.int32),
                        ("uint8", np.uint8)):
        img = [np.full((2, 2, 3), 255 if dtype != F32 else 1.0, dtype)]
        for op in ("hue", "saturation", "color_twist", "hsv", "brightness_contrast"):
            if op == "hsv" and name == "int32":
                continue  # DALI's hsv has no int32 input
            out.append(case(f"color:{op}_default_dtype_{name}", op, [img], atol=1))
    return out


def main() -> None:
    lib = Lib(fn, types, Pipeline)
    cases = cast_cases() + pad_cases() + slice_cases() + one_hot_cases() + color_cases()
    for c in cases:
        c["result"] = run_case(c, lib)
        err = c["result"].get("error")
        if c.get("match"):
            assert err and c["match"] in err["message"], (c["name"], c["result"])
        if c.get("earlier_ok"):
            assert err, c["name"]
        if err:  # DALI's messages carry its C++ stack trace: keep the lines that explain
            lines = [ln for ln in err["message"].splitlines() if ln.strip() and
                     not ln.startswith(("  ", "[", "C++ context", "Current pipeline",
                                        "Stacktrace"))]
            err["message"] = "\n".join(lines)
        print(c["name"], "->", err["stage"] + ":" + err["type"] if err else "ok")
    # One case a line: small, and a re-recording diffs case by case.
    lines = ",\n".join(json.dumps(c, sort_keys=True) for c in cases)
    DATA.write_text(f'{{"dali_version": "{dali.__version__}", "cases": [\n{lines}\n]}}\n')
    print(f"wrote {DATA} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
