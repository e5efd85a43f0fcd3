"""``fn.random_bbox_crop``: a random crop window that keeps the bounding boxes meaningful.

Outputs, as DALI 2.4's: the window's ``anchor`` and ``shape`` (float32, ``[x, y(, z)]`` and
``[w, h(, d)]``: relative, or in pixels with ``crop_shape``; feed them to ``slice`` or
``decoders.image_slice``), the kept boxes re-expressed in the window (float32, the input's
``bbox_layout``), their labels when labels are given, and their indices with
``output_bbox_indices``. The search is ``kernels/cpu/detection/bbox_crop.py``.

Differences from DALI, on purpose: the random draws are stoker's per-sample streams (the
windows follow DALI's distributions, not its exact values); the search never runs forever
(``total_num_attempts=-1`` stops after ``DEFAULT_MAX_ATTEMPTS`` attempts and uses the best
window, with DALI's warning); labels whose count differs from the boxes' are an error
(DALI reads past them); when no attempt produced a window at all (every aspect ratio out of
range) the window is the whole input (DALI returns an empty window).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.detection.bbox_crop import (
    DEFAULT_MAX_ATTEMPTS,
    CropConfig,
    find_crop,
    read_boxes,
    write_boxes,
)
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_FN = "fn.random_bbox_crop"


def _layout(args: dict, ndim: int) -> str:
    layout = args.get("bbox_layout") or ""
    if not layout:
        ltrb = args.get("ltrb", True)
        layout = ("xyzXYZ" if ltrb else "xyzWHD") if ndim == 3 else ("xyXY" if ltrb else "xyWH")
    if len(layout) != 2 * ndim or not (
            sorted(layout) == sorted("xyzXYZ"[:ndim] + "xyzXYZ"[3:3 + ndim])
            or sorted(layout) == sorted("xyz"[:ndim] + "WHD"[:ndim])):
        raise ValueError(f"'bbox_layout' {layout!r} is not a permutation of "
                         f"{'xyzXYZ' if ndim == 3 else 'xyXY'} or "
                         f"{'xyzWHD' if ndim == 3 else 'xyWH'} for {ndim}-D boxes")
    return layout


def _shape_arg(value: Any, args: dict, ndim: int, name: str) -> np.ndarray | None:
    """crop_shape / input_shape in W, H(, D) order."""
    if value is None:
        return None
    arr = np.asarray(value, np.int64).reshape(-1)
    if arr.size != ndim:
        raise ValueError(f"'{name}' must have {ndim} values for {ndim}-D boxes, got "
                         f"{arr.tolist()}")
    if (arr <= 0).any():
        raise ValueError(f"'{name}' must be positive, got {arr.tolist()}")
    order = args.get("shape_layout") or "WHD"[:ndim]
    internal = "WHD"[:ndim]
    if sorted(order) != sorted(internal):
        raise ValueError(f"'shape_layout' {order!r} is not a permutation of {internal!r}")
    return np.array([arr[order.index(c)] for c in internal], np.int64)


def _config(args: dict, ndim: int) -> CropConfig:
    ratios = list(args["aspect_ratio"])
    crop_given = args.get("crop_shape") is not None
    allow = args["allow_no_crop"] and not (crop_given and "allow_no_crop" not in args["_given"])
    prune = args.get("bbox_prune_threshold")
    return CropConfig(
        ndim=ndim, thresholds=tuple(args["thresholds"]), allow_no_crop=bool(allow),
        num_attempts=args["num_attempts"], total_num_attempts=args["total_num_attempts"],
        scaling=(args["scaling"][0], args["scaling"][1]),
        aspect_ratios=tuple(zip(ratios[0::2], ratios[1::2], strict=True)),
        overlap=args["threshold_type"] == "overlap",
        all_boxes=args["all_boxes_above_threshold"],
        prune_threshold=None if prune is None else float(prune))


def random_bbox_crop_kernel(ins: list, args: dict, sctx: Any) -> tuple:
    boxes = np.asarray(ins[0])
    if boxes.dtype != np.float32:
        raise TypeError(f"boxes must be float32, got {boxes.dtype}")
    if boxes.ndim != 2 or boxes.shape[1] not in (4, 6):
        raise ValueError(f"boxes must be (N, 4) or (N, 6), got shape {boxes.shape}")
    ndim = boxes.shape[1] // 2
    layout = _layout(args, ndim)
    lo, hi = read_boxes(boxes, layout)
    outside = ~(np.all(lo >= 0, axis=1) & np.all(hi <= 1, axis=1))
    if outside.any():
        i = int(np.argmax(outside))
        raise ValueError(f"box {i} {boxes[i].tolist()} ({layout}) is out of bounds: relative "
                         "coordinates must lie in [0, 1]")
    labels = None
    if len(ins) > 1:
        labels = np.asarray(ins[1])
        if labels.dtype != np.int32:
            raise TypeError(f"labels must be int32, got {labels.dtype}")
        if labels.ndim == 0 or labels.shape[0] != len(boxes):
            raise ValueError(f"labels have shape {labels.shape} for {len(boxes)} boxes; give "
                             "one label (row) per box")
    crop_shape = _shape_arg(args.get("crop_shape"), args, ndim, "crop_shape")
    input_shape = _shape_arg(args.get("input_shape"), args, ndim, "input_shape")
    res = find_crop(_config(args, ndim), lo, hi, sctx.generator(), crop_shape, input_shape)
    if not res.found and not args["quiet"]:
        warnings.warn(f"{_FN}: could not find a valid cropping window to satisfy the "
                      f"specified requirements (attempted {res.attempts} times); using the "
                      f"best cropping window so far (best_metric={res.best_metric:g}) "
                      "(quiet=True silences this)", RuntimeWarning, stacklevel=2)
    outs = [res.lo, (res.hi - res.lo).astype(np.float32),
            write_boxes(res.boxes_lo, res.boxes_hi, layout)]
    if labels is not None:
        outs.append(labels[res.indices])
    if args["output_bbox_indices"]:
        outs.append(res.indices)
    return tuple(outs)


def _range_pairs(args: dict, name: str, counts: tuple[int, ...]) -> None:
    values = args[name]
    if len(values) not in counts:
        raise ArgumentError(f"{_FN}: argument '{name}' must have "
                            f"{' or '.join(map(str, counts))} values, got {values!r}")
    for lo, hi in zip(values[0::2], values[1::2], strict=True):
        if not 0 <= lo <= hi:
            raise ArgumentError(f"{_FN}: argument '{name}' must be ranges [min, max] with "
                                f"0 <= min <= max, got {values!r}")


def _check(args: dict) -> None:
    given = args["_given"]
    if not args["thresholds"]:
        raise ArgumentError(f"{_FN}: argument 'thresholds' needs at least one value")
    if any(not 0 <= t <= 1 for t in args["thresholds"]):
        raise ArgumentError(f"{_FN}: argument 'thresholds' must be in [0, 1], got "
                            f"{args['thresholds']!r}")
    _range_pairs(args, "scaling", (2,))
    _range_pairs(args, "aspect_ratio", (2, 6))
    if args["total_num_attempts"] != -1 and args["total_num_attempts"] < 1:
        raise ArgumentError(f"{_FN}: argument 'total_num_attempts' must be positive (or -1, "
                            f"at most {DEFAULT_MAX_ATTEMPTS} attempts), got "
                            f"{args['total_num_attempts']}")
    if "ltrb" in given and args.get("bbox_layout"):
        raise ArgumentError(f"{_FN}: 'ltrb' and 'bbox_layout' can't be given together "
                            "('ltrb' is deprecated in favour of 'bbox_layout')")
    if "ltrb" in given:
        warnings.warn(f"{_FN}: 'ltrb' is deprecated; use bbox_layout='xyXY' (ltrb=True) or "
                      "'xyWH' (ltrb=False)", DeprecationWarning, stacklevel=4)
    layout = args.get("bbox_layout")
    if layout:
        try:
            _layout(args, len(layout) // 2 if len(layout) in (4, 6) else 2)
        except ValueError as e:
            raise ArgumentError(f"{_FN}: argument {e}") from None
    has_crop = args.get("crop_shape") is not None
    if has_crop and args.get("input_shape") is None:
        raise ArgumentError(f"{_FN}: 'input_shape' must be given with 'crop_shape'")
    if has_crop:
        for name in ("aspect_ratio", "scaling"):
            if name in given:
                raise ArgumentError(f"{_FN}: '{name}' cannot be combined with 'crop_shape'")
        if "allow_no_crop" in given and args["allow_no_crop"]:
            raise ArgumentError(f"{_FN}: allow_no_crop=True cannot be combined with "
                                "'crop_shape'")


def _n_outputs(args: dict) -> int:
    return 3 + (args.get("_n_inputs", 1) > 1) + bool(args.get("output_bbox_indices"))


_B = [np.array([[0.1, 0.1, 0.5, 0.6], [0.3, 0.4, 0.9, 0.8], [0.6, 0.1, 0.7, 0.2]], np.float32),
      np.array([[0.2, 0.2, 0.4, 0.4]], np.float32), np.zeros((0, 4), np.float32)]
_L = [np.array([1, 2, 3], np.int32), np.array([4], np.int32), np.zeros(0, np.int32)]
_B3 = [np.array([[0.1, 0.2, 0.3, 0.5, 0.6, 0.7]], np.float32)] * 2

SCHEMA = register(OpSchema(
    name="random_bbox_crop",
    doc="Picks a random crop window whose overlap with the bounding boxes meets one of the "
        "thresholds (or no crop), and gives the window with the kept boxes mapped into it.",
    inputs=(Input("boxes", "Relative boxes (N, 4) or (N, 6), float32, in bbox_layout."),
            Input("labels", "Optional int32 labels, one (row) per box.", optional=True)),
    args=(
        Arg("thresholds", "floats", [0.0], "Minimum overlaps to choose from, one per sample."),
        Arg("threshold_type", "str", "iou", "'iou' or 'overlap' (fraction of each box "
            "inside the window).", choices=("iou", "overlap")),
        Arg("all_boxes_above_threshold", "bool", True, "Every box must meet the threshold "
            "(else at least one)."),
        Arg("allow_no_crop", "bool", True, "Not cropping is one more option."),
        Arg("num_attempts", "int", 1, "Windows tried per chosen threshold.", range=(1, None)),
        Arg("total_num_attempts", "int", -1, "Windows tried in all before the best one is "
            f"used; -1: until found (stoker stops at {DEFAULT_MAX_ATTEMPTS})."),
        Arg("aspect_ratio", "floats", [1.0, 1.0], "Range(s) of the window's side ratios "
            "(x/y; 3-D: x/y, x/z, y/z)."),
        Arg("scaling", "floats", [1.0, 1.0], "Range of each side relative to the input's."),
        Arg("crop_shape", "ints", None, "A fixed window size in pixels (with input_shape).",
            per_sample=True),
        Arg("input_shape", "ints", None, "The input's size in pixels.", per_sample=True),
        Arg("shape_layout", "layout", None, "Order of crop_shape/input_shape ('WH' by "
            "default)."),
        Arg("bbox_layout", "layout", None, "Box coordinates: a permutation of xyXY or xyWH "
            "(3-D: xyzXYZ, xyzWHD)."),
        Arg("ltrb", "bool", True, "Deprecated: True is bbox_layout='xyXY', False 'xyWH'."),
        Arg("bbox_prune_threshold", "float", None, "Keep boxes with at least this fraction "
            "inside the window (default: boxes whose centre is inside).", range=(0, 1)),
        Arg("output_bbox_indices", "bool", False, "Also output the kept boxes' indices."),
        Arg("quiet", "bool", False, "No warning when the best window is used."),
    ),
    num_outputs=_n_outputs,
    kernel=random_bbox_crop_kernel, random=True, check=_check,
    layout=lambda layouts, a: [""] * (3 + (len(layouts) > 1) + bool(a.get("output_bbox_indices"))),
    dtype=lambda d, a: [np.dtype(np.float32)] * 3 + [np.dtype(np.int32)] * (
        (len(d) > 1) + bool(a.get("output_bbox_indices"))),
    examples=(
        Example(inputs=(_B, _L), args={"aspect_ratio": [0.5, 2.0], "scaling": [0.3, 1.0],
                                       "thresholds": [0.0, 0.1, 0.3, 0.5, 0.7, 0.9],
                                       "num_attempts": 50, "bbox_layout": "xyXY"}),
        Example(inputs=(_B,), args={"crop_shape": [60, 40], "input_shape": [100, 80],
                                    "output_bbox_indices": True, "thresholds": [0.2],
                                    "total_num_attempts": 20, "quiet": True,
                                    "bbox_prune_threshold": 0.3}),
        Example(inputs=(_B3,), args={"scaling": [0.4, 0.9], "threshold_type": "overlap",
                                     "thresholds": [0.5], "all_boxes_above_threshold": False,
                                     "total_num_attempts": 50, "quiet": True}),
        Example(inputs=(_B,), args={"thresholds": [1.5]}, raises=ArgumentError,
                match="'thresholds' must be in [0, 1]"),
        Example(inputs=(_B,), args={"crop_shape": [10, 10]}, raises=ArgumentError,
                match="'input_shape' must be given with 'crop_shape'"),
    ),
))
