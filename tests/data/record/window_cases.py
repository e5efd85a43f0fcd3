"""Records DALI 2.4's outcome of the crop / slice / normalize cases defined here.

Run with DALI installed (CPU is enough), from the repository root:
    /work/dali-venv/bin/python tests/data/record/window_cases.py

Writes tests/data/dali_window_cases.json (crop, crop_mirror_normalize, slice, and the
chains stoker fuses: crop -> crop_mirror_normalize, decoders.image -> crop / slice /
crop_mirror_normalize) and tests/data/dali_normalize_cases.json (fn.normalize). Each case
(tests/window_cases.py says the format) is run by DALI and its output or error stored with
it; ``match`` is a phrase of DALI's message that stoker's must contain (checked here on
DALI's). The replay tests: tests/image/test_crop_dali_cases.py and
tests/tensor/test_normalize_dali_cases.py.
"""

from __future__ import annotations

import io
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
from window_cases import (  # noqa: E402
    NORMALIZE_CASES,
    WINDOW_CASES,
    Lib,
    encode_array,
    pool_arrays,
    run_case,
)

OOB = "Slice can't be placed out of bounds with current policy"
RNG = np.random.default_rng(20)


def dt(name: str) -> dict:
    return {"dali_type": name}


def image(shape, dtype=np.uint8, noise=True) -> np.ndarray:
    """A sample whose values tell where they came from (a gradient, plus noise)."""
    grid = np.indices(shape).astype(np.float64)
    v = sum((3 + 2 * k) * g for k, g in enumerate(grid))
    if noise:
        v = v + RNG.integers(0, 7, shape)
    if np.dtype(dtype).kind == "f":
        return (v % 251 + RNG.random(shape)).astype(dtype)
    return (v % 251).astype(dtype)


def step(op, args=None, arg_inputs=None, more_inputs=None) -> dict:
    s = {"op": op, "args": args or {}}
    if arg_inputs:
        s["arg_inputs"] = {k: [encode_array(np.asarray(x)) for x in v]
                           for k, v in arg_inputs.items()}
    if more_inputs:
        s["more_inputs"] = more_inputs
    return s


def case(name, inputs, chain, layouts=None, match=None, earlier_ok=False, atol=0) -> dict:
    c = {"name": name, "inputs": [[encode_array(x) for x in samples] for samples in inputs],
         "chain": chain if isinstance(chain, list) else [chain]}
    return with_options(c, layouts=layouts, match=match, earlier_ok=earlier_ok, atol=atol)


# -- crop ----------------------------------------------------------------------------------------

def crop_cases() -> list:
    out = []
    img = [image((7, 9, 3)), image((7, 9, 3))]
    # issue 20, item 3: larger than the image in H, smaller in W; fill per channel
    issue = [image((97, 131, 3), noise=False)]
    out.append(case("crop:issue20_item3_pad_140x120_of_97x131", [issue],
                    step("crop", {"crop": [140, 120], "out_of_bounds_policy": "pad",
                                  "fill_values": [10, 20, 30]}), ["HWC"]))
    windows = {"inside": [4, 5], "one_side_h": [9, 5], "one_side_w": [4, 12],
               "both_sides": [11, 14], "odd_overhang": [10, 12]}
    for wname, crop in windows.items():
        for policy in ("pad", "trim_to_shape", "error"):
            for rounding in ("round", "truncate"):
                for px, py in ((0.5, 0.5), (0.0, 1.0), (0.7, 0.3)):
                    args = {"crop": crop, "out_of_bounds_policy": policy, "rounding": rounding,
                            "crop_pos_x": px, "crop_pos_y": py, "fill_values": [7, 8, 9]}
                    leaves = crop[0] > 7 or crop[1] > 9
                    out.append(case(f"crop:{wname}_{policy}_{rounding}_{px}_{py}", [img],
                                    step("crop", args), ["HWC"],
                                    match=OOB if policy == "error" and leaves else None))
    # the anchor arithmetic: float32 positions, exact products, ties (0.7 of 5 is 3)
    pos = np.array([0.7, 0.9, 0.1, 0.3, 0.5, 0.25, 0.75, 0.35, 0.45, 0.55, 0.65, 0.85, 0.95,
                    0.15, 1.0, 0.0], np.float32)
    row = [np.tile(np.arange(20, dtype=np.int16)[None, :, None], (2, 1, 1))] * len(pos)
    for rounding in ("round", "truncate"):
        for cw in (15, 17, 23, 26):
            out.append(case(f"crop:anchor_ties_{rounding}_w{cw}", [row],
                            step("crop", {"crop_h": 2, "crop_w": cw, "rounding": rounding,
                                          "out_of_bounds_policy": "pad", "fill_values": -1},
                                 {"crop_pos_x": list(pos)}), ["HWC"]))
    # fill values: one for all channels; a wrong count is fine while nothing is padded
    out.append(case("crop:fill_scalar", [img], step("crop", {
        "crop": [9, 9], "out_of_bounds_policy": "pad", "fill_values": 42}), ["HWC"]))
    out.append(case("crop:fill_count_unused", [img], step("crop", {
        "crop": [3, 3], "out_of_bounds_policy": "pad", "fill_values": [1, 2]}), ["HWC"]))
    out.append(case("crop:fill_count_wrong", [img], step("crop", {
        "crop": [9, 9], "out_of_bounds_policy": "pad", "fill_values": [1, 2]}), ["HWC"]))
    # other types and layouts; the output type (DALI: FLOAT, FLOAT16 or UINT8)
    floats = [np.array([[[3.7, 2.5, -3.6], [300.5, 254.6, 0.5]]], np.float32)] * 2
    for dtype in ("UINT8", "FLOAT16", "INT8"):
        out.append(case(f"crop:dtype_{dtype}", [floats], step("crop", {
            "crop": [2, 3], "out_of_bounds_policy": "pad", "fill_values": [300.7, -1.5, 2.5],
            "dtype": dt(dtype)}), ["HWC"], earlier_ok=dtype == "INT8"))
    out.append(case("crop:dtype_FLOAT", [img], step("crop", {
        "crop": [9, 3], "out_of_bounds_policy": "pad", "fill_values": [300.7, -1.5, 2.5],
        "dtype": dt("FLOAT")}), ["HWC"]))
    for dtype in (np.float32, np.int16):
        out.append(case(f"crop:pad_{np.dtype(dtype).name}", [[image((6, 5, 2), dtype)] * 2],
                        step("crop", {"crop": [8, 4], "out_of_bounds_policy": "pad",
                                      "fill_values": [-3.5, 300]}), ["HWC"]))
    shapes = {"CHW": (3, 7, 9), "FHWC": (4, 7, 9, 2), "FCHW": (4, 2, 7, 9),
              "CFHW": (2, 4, 7, 9), "DHWC": (5, 7, 9, 2), "CDHW": (2, 5, 7, 9)}
    for layout, shape in shapes.items():
        data = [image(shape), image(shape)]
        out.append(case(f"crop:{layout}_2d", [data], step("crop", {
            "crop": [4, 11], "crop_pos_x": 0.2, "crop_pos_z": 0.9,
            "out_of_bounds_policy": "pad", "fill_values": 5}), [layout]))
        out.append(case(f"crop:{layout}_3value", [data], step("crop", {
            "crop": [3, 4, 5], "crop_pos_z": 0.25, "crop_pos_y": 0.0}), [layout]))
        out.append(case(f"crop:{layout}_crop_d", [data], step("crop", {
            "crop_d": 2, "crop_h": 5, "crop_w": 4, "crop_pos_z": 1.0}), [layout]))
        out.append(case(f"crop:{layout}_depth_pad", [data], step("crop", {
            "crop": [7, 4, 12], "crop_pos_z": 0.3, "out_of_bounds_policy": "pad",
            "fill_values": 9}), [layout]))
        out.append(case(f"crop:{layout}_depth_trim", [data], step("crop", {
            "crop": [7, 9, 4], "crop_pos_z": 0.3, "out_of_bounds_policy": "trim_to_shape"}),
            [layout]))
        out.append(case(f"crop:{layout}_depth_error", [data], step("crop", {
            "crop": [7, 4, 4]}), [layout], match=OOB if layout != "CHW" else None))
    out.append(case("crop:no_layout_3d", [img], step("crop", {"crop": [3, 4]})))
    out.append(case("crop:no_layout_4d", [[image((5, 7, 9, 2))] * 2],
                    step("crop", {"crop": [3, 3, 4]})))
    # per-sample sizes and positions: windows of different sizes in one batch
    ragged = [image((7, 9, 3)), image((12, 5, 3)), image((4, 4, 3))]
    out.append(case("crop:per_sample_sizes", [ragged], step("crop", {
        "out_of_bounds_policy": "pad"}, {"crop": [np.array([3, 4], np.float32),
                                                  np.array([6, 6], np.float32),
                                                  np.array([5.7, 2.2], np.float32)],
                                         "crop_pos_x": [np.float32(0.1), np.float32(0.6),
                                                        np.float32(1.0)]}), ["HWC"]))
    out.append(case("crop:per_sample_3d", [[image((5, 7, 9, 1)), image((6, 4, 4, 1))]],
                    step("crop", {"crop_h": 3, "crop_w": 3},
                         {"crop_d": [np.float32(2), np.float32(4)],
                          "crop_pos_z": [np.float32(0.0), np.float32(0.6)]}), ["DHWC"]))
    # layouts crop cannot cut
    out.append(case("crop:layout_ABC", [img], step("crop", {"crop_h": 3, "crop_w": 3}),
                    ["ABC"], match="does not match any of the allowed layouts",
                    earlier_ok=True))
    out.append(case("crop:layout_WHC", [img], step("crop", {"crop": [3, 3]}), ["WHC"],
                    match="does not match any of the allowed layouts", earlier_ok=True))
    return out


# -- crop_mirror_normalize -------------------------------------------------------------------

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def cmn_cases() -> list:
    out = []
    img = [image((7, 9, 3)), image((7, 9, 3)), image((7, 9, 3))]
    mirror = [np.int32(0), np.int32(1), np.int32(1)]
    for wname, crop in {"inside": [4, 5], "both_sides": [11, 14], "odd": [10, 12]}.items():
        for policy in ("pad", "trim_to_shape", "error"):
            for layout_out in ("CHW", "HWC"):
                args = {"crop": crop, "out_of_bounds_policy": policy, "mean": MEAN,
                        "std": STD, "fill_values": [118, 176, 0], "output_layout": layout_out}
                leaves = crop[0] > 7 or crop[1] > 9
                out.append(case(f"cmn:{wname}_{policy}_{layout_out}", [img],
                                step("crop_mirror_normalize", args, {"mirror": mirror}),
                                ["HWC"], match=OOB if policy == "error" and leaves else None))
    for dtype, scale, shift in (("FLOAT16", 1.0, 0.0), ("UINT8", 64.0, 128.0),
                                ("INT8", 50.0, 5.0), ("INT16", 1000.0, 0.0)):
        out.append(case(f"cmn:dtype_{dtype}", [img], step("crop_mirror_normalize", {
            "crop": [9, 6], "out_of_bounds_policy": "pad", "fill_values": 3, "mean": MEAN,
            "std": STD, "dtype": dt(dtype), "scale": scale, "shift": shift},
            {"mirror": mirror}), ["HWC"], earlier_ok=dtype == "INT16"))
    for c in (1, 2, 3, 5):
        out.append(case(f"cmn:pad_output_{c}ch", [[image((6, 8, c))] * 2],
                        step("crop_mirror_normalize", {"crop": [3, 5], "pad_output": True,
                                                       "output_layout": "HWC"}), ["HWC"]))
    out.append(case("cmn:pad_output_chw", [img], step("crop_mirror_normalize", {
        "crop": [8, 5], "pad_output": True, "out_of_bounds_policy": "pad",
        "fill_values": [1, 2, 3]}), ["HWC"]))
    for policy in ("pad", "trim_to_shape"):
        out.append(case(f"cmn:pad_output_fill4_{policy}", [img], step("crop_mirror_normalize", {
            "crop": [8, 5], "pad_output": True, "out_of_bounds_policy": policy,
            "fill_values": [1, 2, 3, 4], "mean": [1, 2, 3, 4], "output_layout": "HWC"}),
            ["HWC"]))
    # which fill values pad_output's added channel takes (with policy "pad")
    for mean, fill in (([1.0], [5]), ([1.0, 2.0, 3.0], [1, 2, 3]), ([1.0], [1, 2, 3]),
                       ([1.0, 2.0, 3.0], [1, 2, 3, 4])):
        for crop in ([5, 5], [8, 12]):
            out.append(case(f"cmn:pad_output_mean{len(mean)}_fill{len(fill)}_{crop[0]}",
                            [img], step("crop_mirror_normalize", {
                                "crop": crop, "pad_output": True, "mean": mean,
                                "out_of_bounds_policy": "pad", "fill_values": fill,
                                "output_layout": "HWC"}), ["HWC"]))
    for layout_out in ("WHC", "CWH", "HCW"):
        out.append(case(f"cmn:output_{layout_out}", [img], step("crop_mirror_normalize", {
            "crop": [3, 5], "output_layout": layout_out}, {"mirror": mirror}), ["HWC"]))
    f32 = [image((7, 9, 3), np.float32) for _ in range(3)]
    out.append(case("cmn:float_per_sample_mean_std", [f32], step("crop_mirror_normalize", {
        "crop": [5, 5], "crop_pos_x": 0.0}, {
        "mean": [np.array(m, np.float32) for m in ([1, 2, 3], [100, 110, 120], [5, 5, 5])],
        "std": [np.array(s, np.float32) for s in ([50, 60, 70], [1, 2, 3], [0.5, 4, 9])]}),
        ["HWC"]))
    vols = {"DHWC": ((5, 7, 9, 3), ("DHWC", "CDHW")), "FHWC": ((4, 7, 9, 3), ("FHWC", "FCHW")),
            "FDHWC": ((2, 5, 7, 9, 3), ("FDHWC", "FCDHW", "CFDHW")),
            "CFHW": ((3, 4, 7, 9), ("FHWC", "FCHW")), "CDHW": ((3, 5, 7, 9), ("DHWC",))}
    for layout, (shape, outs) in vols.items():
        data = [image(shape), image(shape)]
        for layout_out in outs:
            out.append(case(f"cmn:{layout}_to_{layout_out}", [data], step(
                "crop_mirror_normalize", {"crop_d": 3, "crop_h": 4, "crop_w": 5,
                                          "crop_pos_z": 0.1, "crop_pos_y": 0.2,
                                          "crop_pos_x": 0.3, "mean": [128.0], "std": [64.0],
                                          "output_layout": layout_out},
                {"mirror": [np.int32(1), np.int32(0)]}), [layout]))
        out.append(case(f"cmn:{layout}_depth_pad", [data], step("crop_mirror_normalize", {
            "crop": [7, 9, 11], "out_of_bounds_policy": "pad", "fill_values": 77,
            "mean": [100.0], "std": [2.0], "output_layout": outs[-1],
            "pad_output": True}), [layout]))
    out.append(case("cmn:FHWC_2d_pos_z", [[image((4, 7, 9, 3))] * 2], step(
        "crop_mirror_normalize", {"crop": [3, 5], "crop_pos_z": 0.8,
                                  "output_layout": "FCHW"}), ["FHWC"]))
    out.append(case("cmn:no_layout", [img], step("crop_mirror_normalize", {
        "crop_h": 3, "crop_w": 4})))
    out.append(case("cmn:layout_ABC", [img], step("crop_mirror_normalize", {
        "crop_h": 3, "crop_w": 3}), ["ABC"], match="does not match any of the allowed layouts",
        earlier_ok=True))
    out.append(case("cmn:output_not_a_permutation", [[image((5, 7, 9, 3))] * 2], step(
        "crop_mirror_normalize", {"crop": [3, 3]}), ["DHWC"], match="permutation",
        earlier_ok=True))
    return out


# -- slice -----------------------------------------------------------------------------------------

def slice_cases() -> list:
    out = []
    img = [image((7, 9, 3)), image((7, 9, 3))]
    windows = {"inside": ([1, 2], [4, 5]), "one_side": ([-3, 2], [6, 5]),
               "both_sides": ([-2, -3], [12, 14]), "past_end": ([5, 7], [4, 4])}
    for wname, (start, shape) in windows.items():
        for policy in ("pad", "trim_to_shape", "error"):
            leaves = wname != "inside"
            out.append(case(f"slice:{wname}_{policy}", [img], step("slice", {
                "start": start, "shape": shape, "axes": [0, 1], "out_of_bounds_policy": policy,
                "fill_values": [5, 6, 7]}), ["HWC"],
                match=OOB if policy == "error" and leaves else None))
            anchor = [(np.array(start) / [7, 9]).astype(np.float32)] * 2
            size = [(np.array(shape) / [7, 9]).astype(np.float32)] * 2
            out.append(case(f"slice:rel_inputs_{wname}_{policy}", [img, anchor, size], step(
                "slice", {"axis_names": "HW", "out_of_bounds_policy": policy,
                          "fill_values": 3}, more_inputs=[1, 2]), ["HWC", None, None],
                match=OOB if policy == "error" and leaves else None))
    return out


# -- chains that stoker fuses ------------------------------------------------------------------

def _jpeg(h: int, w: int, seed: int) -> np.ndarray:
    from PIL import Image

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([(xx * 3 + yy) % 256, (yy * 2) % 256, (xx + yy * 5) % 256], -1)
    rgb = np.clip(rgb + rng.integers(-15, 15, rgb.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "JPEG", quality=92)
    return np.frombuffer(buf.getvalue(), np.uint8)


def chain_cases() -> list:
    out = []
    img = [image((7, 9, 3)), image((8, 6, 3))]
    for policy in ("pad", "error"):
        out.append(case(f"chain:crop_{policy}_then_cmn", [img], [
            step("crop", {"crop": [10, 12] if policy == "pad" else [5, 5],
                          "out_of_bounds_policy": policy, "fill_values": [9, 8, 7],
                          "crop_pos_x": 0.2}),
            step("crop_mirror_normalize", {"crop": [6, 7], "crop_pos_y": 0.9, "mean": MEAN,
                                           "std": STD, "mirror": 1}
                 if policy == "pad" else {"crop": [3, 4], "mean": MEAN, "std": STD})],
            ["HWC"]))
    out.append(case("chain:crop_error_leaves_then_cmn", [img], [
        step("crop", {"crop": [10, 12]}), step("crop_mirror_normalize", {"crop": [3, 4]})],
        ["HWC"], match=OOB))
    jpegs = [_jpeg(37, 53, 1), _jpeg(40, 31, 2)]
    dec = step("decoders.image", {"device": "cpu"})
    out.append(case("chain:decode_crop", [jpegs], [dec, step("crop", {
        "crop": [21, 17], "crop_pos_x": 0.7, "crop_pos_y": 0.15})]))
    out.append(case("chain:decode_crop_error_leaves", [jpegs], [dec, step("crop", {
        "crop": [39, 17]})], match=OOB))
    out.append(case("chain:decode_crop_pad", [jpegs], [dec, step("crop", {
        "crop": [45, 40], "out_of_bounds_policy": "pad", "fill_values": [1, 2, 3]})]))
    out.append(case("chain:decode_slice", [jpegs], [dec, step("slice", {
        "rel_start": [0.1, 0.3], "rel_shape": [0.5, 0.4]})]))
    out.append(case("chain:decode_slice_error_leaves", [jpegs], [dec, step("slice", {
        "rel_start": [0.8, 0.3], "rel_shape": [0.5, 0.4]})], match=OOB))
    out.append(case("chain:decode_cmn", [jpegs], [dec, step("crop_mirror_normalize", {
        "crop": [20, 22], "crop_pos_x": 0.35, "mean": MEAN, "std": STD, "mirror": 1})]))
    out.append(case("chain:decode_cmn_error_leaves", [jpegs], [dec, step(
        "crop_mirror_normalize", {"crop": [20, 42]})], match=OOB))
    return out


# -- normalize -------------------------------------------------------------------------------------

def normalize_cases() -> list:
    out = []
    ragged = [image((3, 5), np.float32), image((4, 3), np.float32), image((2, 2), np.float32)]
    out.append(case("normalize:per_sample_mean_ragged", [ragged], step(
        "normalize", {"axes": [0]}, {"mean": [x.mean(0, keepdims=True) for x in ragged]})))
    out.append(case("normalize:per_sample_mean_stddev_ragged", [ragged], step(
        "normalize", {"axes": [1]}, {
            "mean": [x.mean(1, keepdims=True) + 0.3 for x in ragged],
            "stddev": [x.std(1, keepdims=True) * 1.3 for x in ragged]})))
    out.append(case("normalize:per_sample_stddev_ragged", [ragged], step(
        "normalize", {"axes": [0], "ddof": 1}, {
            "stddev": [x.std(0, keepdims=True) + 1 for x in ragged]})))
    vol = [image((2, 3, 4, 2), np.float32), image((3, 1, 4, 2), np.float32)]
    out.append(case("normalize:per_sample_mean_4d", [vol], step(
        "normalize", {"axes": [0, 1]}, {"mean": [x.mean((0, 1), keepdims=True) for x in vol]})))
    one = [np.array([5.0], np.float32), np.array([1.0, 3.0], np.float32)]
    for ddof, eps in ((2, 0.25), (1, 0.25), (2, 0.0), (3, 1.0)):
        out.append(case(f"normalize:ddof{ddof}_eps{eps}_given_mean", [one], step(
            "normalize", {"mean": 1.0, "ddof": ddof, "epsilon": eps})))
        out.append(case(f"normalize:ddof{ddof}_eps{eps}", [one], step(
            "normalize", {"ddof": ddof, "epsilon": eps})))
    out.append(case("normalize:ddof_batch", [one], step(
        "normalize", {"batch": True, "ddof": 3, "epsilon": 0.5})))
    imgs = [image((4, 5, 3)), image((6, 5, 3))]
    for dtype, scale, shift in (("FLOAT", 1.0, 0.0), ("UINT8", 64.0, 128.0),
                                ("INT16", 1000.0, 0.0), ("INT8", 30.0, -2.0),
                                ("UINT16", 5000.0, 30000.0), ("INT32", 1e6, 0.0),
                                ("UINT32", 1e6, 3e6)):
        out.append(case(f"normalize:dtype_{dtype}", [imgs], step("normalize", {
            "axes": [0, 1], "dtype": dt(dtype), "scale": scale, "shift": shift}), ["HWC"],
            atol=0 if dtype == "FLOAT" else 1))
    out.append(case("normalize:axis_names", [imgs], step("normalize", {
        "axis_names": "HW", "epsilon": 2.0}), ["HWC"]))
    out.append(case("normalize:batch_axes", [imgs], step("normalize", {
        "batch": True, "axes": [0, 1], "ddof": 1}), ["HWC"]))
    out.append(case("normalize:batch_given_mean", [imgs], step("normalize", {
        "batch": True, "axes": [0, 1], "mean": 100.0}), ["HWC"]))
    out.append(case("normalize:batch_given_stddev", [imgs], step("normalize", {
        "batch": True, "axes": [0, 1], "stddev": 30.0, "epsilon": 4.0}), ["HWC"]))
    out.append(case("normalize:batch_all", [ragged], step("normalize", {"batch": True})))
    ints = [image((5, 4), np.int16), image((3, 4), np.int16)]
    out.append(case("normalize:int16_in", [ints], step("normalize", {"axes": [0]})))
    out.append(case("normalize:uint8_constant", [[np.full((3, 3), 7, np.uint8)] * 2],
                    step("normalize", {"shift": 5.0})))
    out.append(case("normalize:given_stddev_zero", [[image((3, 3), np.float32)] * 2],
                    step("normalize", {"mean": 1.0, "stddev": 0.0})))
    out.append(case("normalize:batch_per_sample_mean", [imgs], step(
        "normalize", {"batch": True, "axes": [0, 1]},
        {"mean": [x.mean((0, 1), keepdims=True).astype(np.float32) for x in imgs]}), ["HWC"]))
    out.append(case("normalize:batch_kept_extents_differ", [imgs], step(
        "normalize", {"batch": True, "axes": [1]}), ["HWC"]))
    out.append(case("normalize:mean_wrong_shape", [ragged], step(
        "normalize", {"axes": [0]}, {"mean": [np.zeros((1, 2), np.float32)] * 3})))
    out.append(case("normalize:axes_out_of_range", [ragged], step("normalize", {"axes": [2]})))
    out.append(case("normalize:axis_names_missing", [imgs], step("normalize", {
        "axis_names": "D"}), ["HWC"]))
    return out


def _record(cases: list, path: pathlib.Path) -> None:
    lib = Lib(fn, types, Pipeline)
    for c in cases:
        c["result"] = run_case(c, lib)
        err = c["result"].get("error")
        if err:  # DALI's own words: after "encountered:", before the C++ context
            err["message"] = err["message"].split("encountered:")[-1].split(
                "C++ context")[0].strip()
        if c.get("match"):
            assert err and c["match"] in err["message"], (c["name"], err)
        if err:
            print(c["name"], "->", err["stage"], err["type"], err["message"][:300].replace(
                "\n", " "))
        else:
            print(c["name"], "->", c["result"]["layout"])
    pool: dict = {}
    cases = pool_arrays(cases, pool)
    meta = {"dali_version": dali.__version__, "arrays": pool, "cases": cases}
    path.write_text(json.dumps(meta, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases -> {path} ({path.stat().st_size // 1024} KiB)")


def main() -> None:
    _record(crop_cases() + cmn_cases() + slice_cases() + chain_cases(), WINDOW_CASES)
    _record(normalize_cases(), NORMALIZE_CASES)


if __name__ == "__main__":
    main()
