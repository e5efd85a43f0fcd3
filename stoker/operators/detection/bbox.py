"""Box operators: ``bb_flip``, ``bbox_paste``, ``bbox_rotate``, ``box_encoder``.

They pair with the image operators that move pixels (``flip``, ``paste``, ``rotate``) and
with SSD's anchor matching; the arithmetic is ``kernels/cpu/detection/boxes.py``.
Stricter than DALI 2.4 on purpose: boxes whose size is not a multiple of 4, labels of
another count than the boxes, and (for ``bbox_paste``) a ``ratio`` below 1 or paste
positions outside [0, 1] are errors (DALI reads past the data or returns boxes outside
the canvas).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.detection import boxes as K
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

_B = [np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 1.0, 1.0]], np.float32),
      np.array([[0.2, 0.2, 0.5, 0.6]], np.float32), np.zeros((0, 4), np.float32)]
_L = [np.array([3, 7], np.int32), np.array([1], np.int32), np.zeros(0, np.int32)]
_F32 = np.dtype(np.float32)


def bb_flip_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return K.flip_boxes(np.asarray(ins[0]), args["ltrb"], bool(int(args["horizontal"])),
                        bool(int(args["vertical"])))


register(OpSchema(
    name="bb_flip",
    doc="Mirrors relative bounding boxes (xywh, or ltrb with ltrb=True) horizontally "
        "and/or vertically: x -> 1 - x.",
    inputs=(Input("input", "Relative boxes, float32, 4 values per box."),),
    args=(Arg("ltrb", "bool", False, "Boxes are [l, t, r, b] instead of [x, y, w, h]."),
          Arg("horizontal", "int", 1, "Flip horizontally (nonzero).", per_sample=True),
          Arg("vertical", "int", 0, "Flip vertically (nonzero).", per_sample=True)),
    kernel=bb_flip_kernel, layout=lambda layouts, a: layouts[0],
    examples=(Example(inputs=(_B,)),
              Example(inputs=(_B,), args={"ltrb": True, "vertical": 1, "horizontal": 0}),
              Example(inputs=(_B,), args={"horizontal": "yes"}, raises=TypeError,
                      match="'horizontal'")),
))


def bbox_paste_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    ratio = float(args["ratio"])
    px, py = float(args["paste_x"]), float(args["paste_y"])
    if ratio < 1:
        raise ValueError(f"'ratio' must be >= 1, got {ratio}")
    if not (0 <= px <= 1 and 0 <= py <= 1):
        raise ValueError(f"'paste_x' and 'paste_y' must be in [0, 1], got {px}, {py}")
    return K.paste_boxes(np.asarray(ins[0]), args["ltrb"], ratio, px, py)


register(OpSchema(
    name="bbox_paste",
    doc="Moves relative boxes as paste moves their image onto a canvas 'ratio' times "
        "larger: x' = x / ratio + paste_x * (ratio - 1) / ratio (w' = w / ratio).",
    inputs=(Input("input", "Relative boxes, float32, 4 values per box."),),
    args=(Arg("ratio", "float", REQUIRED, "Canvas size / image size (>= 1).", per_sample=True,
              range=(1, None)),
          Arg("paste_x", "float", 0.5, "Horizontal position of the image on the canvas.",
              per_sample=True, range=(0, 1)),
          Arg("paste_y", "float", 0.5, "Vertical position.", per_sample=True, range=(0, 1)),
          Arg("ltrb", "bool", False, "Boxes are [l, t, r, b] instead of [x, y, w, h].")),
    kernel=bbox_paste_kernel, layout=lambda layouts, a: layouts[0],
    examples=(Example(inputs=(_B,), args={"ratio": 2.0}),
              Example(inputs=(_B,), args={"ratio": 3.7, "paste_x": 0.13, "paste_y": 1.0,
                                          "ltrb": True}),
              Example(inputs=(_B,), args={"ratio": 0.5}, raises=ArgumentError,
                      match="'ratio' must be in [1, inf]")),
))


def _shape_wh(value: Any, layout: str, name: str) -> tuple[float, float]:
    shape = np.asarray(value).reshape(-1)
    if shape.dtype.kind not in "iu":
        raise TypeError(f"'{name}' must hold integers, got {shape.dtype}")
    need = max(layout.index("H"), layout.index("W")) + 1
    if shape.size < need:
        raise ValueError(f"'{name}' has {shape.size} values; shape_layout={layout!r} needs "
                         f"at least {need}")
    return float(shape[layout.index("W")]), float(shape[layout.index("H")])


def bbox_rotate_kernel(ins: list, args: dict, ctx: Any) -> tuple | np.ndarray:
    rows = K.as_rows(np.asarray(ins[0]))
    layout = args["bbox_layout"]
    in_wh = _shape_wh(args["input_shape"], args["shape_layout"], "input_shape")
    angle = float(np.asarray(args["angle"]).reshape(-1)[0])
    size = args.get("size")
    if args["keep_size"]:
        out_wh = in_wh
    elif size is not None and np.asarray(size).size:
        hw = np.asarray(size, np.float64).reshape(-1)
        if hw.size != 2:
            raise ValueError(f"'size' must be [height, width], got {hw.tolist()}")
        out_wh = (float(np.floor(hw[1])), float(np.floor(hw[0])))
    else:
        out_wh = K.rotated_canvas(in_wh, angle)
    out, keep = K.rotate_boxes(rows, layout == "xyXY", angle, in_wh, out_wh,
                               args["bbox_normalized"], args["mode"], args["remove_threshold"])
    if len(ins) < 2:
        return out
    labels = np.asarray(ins[1])
    if labels.ndim == 0 or labels.shape[0] != len(rows):
        raise ValueError(f"labels have shape {labels.shape} for {len(rows)} boxes")
    return out, labels[keep]


def _rotate_check(args: dict) -> None:
    if args["bbox_layout"] not in ("xyXY", "xyWH"):
        raise ArgumentError(f"fn.bbox_rotate: argument 'bbox_layout' must be 'xyXY' or "
                            f"'xyWH', got {args['bbox_layout']!r}")
    layout = args["shape_layout"]
    if "H" not in layout or "W" not in layout:
        raise ArgumentError(f"fn.bbox_rotate: argument 'shape_layout' must name H and W, got "
                            f"{layout!r}")
    size = args.get("size")
    if args["keep_size"] and ("size" in args["_given"] and size is not None and (
            not isinstance(size, list) or size)):
        raise ArgumentError("fn.bbox_rotate: 'keep_size' is mutually exclusive with 'size'")


register(OpSchema(
    name="bbox_rotate",
    doc="Moves boxes as rotate moves their image (angle in degrees, counter-clockwise), "
        "expanding them to enclose the rotated box ('expand'), or not ('fixed', "
        "'halfway'); boxes left mostly outside the canvas are removed with their labels.",
    inputs=(Input("bboxes", "Boxes (N, 4), float32."),
            Input("labels", "Optional labels, one (row) per box.", optional=True)),
    args=(Arg("angle", "float", REQUIRED, "Rotation angle in degrees.", per_sample=True),
          Arg("input_shape", "ints", REQUIRED, "Shape of the image before rotation.",
              per_sample=True),
          Arg("shape_layout", "layout", "HW", "Which entries of input_shape are H and W."),
          Arg("bbox_layout", "layout", "xyXY", "'xyXY' or 'xyWH'."),
          Arg("bbox_normalized", "bool", True, "Boxes are relative (0..1)."),
          Arg("keep_size", "bool", False, "The canvas keeps the input's size."),
          Arg("size", "floats", [], "The canvas size (H, W) given to rotate.", per_sample=True),
          Arg("mode", "str", "expand", "'expand', 'fixed' or 'halfway'.",
              choices=("expand", "fixed", "halfway")),
          Arg("remove_threshold", "float", 0.1, "Drop boxes with less than this fraction "
              "left inside the canvas.", range=(0, 1))),
    num_outputs=lambda a: 1 + (a.get("_n_inputs", 1) > 1),
    kernel=bbox_rotate_kernel, check=_rotate_check,
    layout=lambda layouts, a: [""] * len(layouts) if len(layouts) > 1 else "",
    dtype=lambda d, a: [_F32, d[1]] if len(d) > 1 else _F32,
    examples=(Example(inputs=(_B, _L), args={"angle": 30.0, "input_shape": [480, 640]}),
              Example(inputs=(_B,), args={"angle": 100.0, "input_shape": [40, 60, 3],
                                          "mode": "halfway", "keep_size": True,
                                          "bbox_layout": "xyWH"}),
              Example(inputs=(_B,), args={"angle": 10.0, "input_shape": [10, 10],
                                          "mode": "spin"},
                      raises=ArgumentError, match="'mode' must be one of")),
))


def box_encoder_kernel(ins: list, args: dict, ctx: Any) -> tuple:
    boxes = K.as_rows(np.asarray(ins[0]))
    labels = np.asarray(ins[1])
    if labels.dtype != np.int32:
        raise TypeError(f"labels must be int32, got {labels.dtype}")
    labels = labels.reshape(-1) if labels.ndim < 2 or labels.shape[1:] == (1,) else labels
    if labels.ndim != 1 or len(labels) != len(boxes):
        raise ValueError(f"labels have shape {np.asarray(ins[1]).shape} for {len(boxes)} "
                         "boxes; give one label per box")
    anchors, means, stds = _parsed(args)
    return K.encode_boxes(boxes, labels, anchors, args["criteria"], args["offset"],
                          args["scale"], means, stds)


# The arguments as arrays, made once per operator (SSD has 8732 anchors), not per sample:
# ids of the argument lists -> (the lists, kept alive so the ids stay theirs, the arrays).
_PARSED: dict[tuple, tuple[tuple, tuple]] = {}


def _parsed(args: dict) -> tuple:
    lists = (args["anchors"], args["means"], args["stds"])
    key = tuple(id(v) for v in lists)
    hit = _PARSED.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], lists, strict=True)):
        if len(_PARSED) > 64:
            _PARSED.clear()
        hit = _PARSED[key] = (lists, (np.asarray(lists[0], np.float32).reshape(-1, 4),
                                      np.asarray(lists[1], np.float32),
                                      np.asarray(lists[2], np.float32)))
    return hit[1]


def _encoder_check(args: dict) -> None:
    anchors = args["anchors"]
    if len(anchors) % 4 or not anchors:
        raise ArgumentError(f"fn.box_encoder: argument 'anchors' must hold 4 values (l, t, r, "
                            f"b) per anchor, got {len(anchors)} values")
    for name in ("means", "stds"):
        if len(args[name]) != 4:
            raise ArgumentError(f"fn.box_encoder: argument '{name}' must have 4 values, got "
                                f"{args[name]!r}")
    if 0 in args["stds"]:
        raise ArgumentError("fn.box_encoder: argument 'stds' must not hold 0")


_ANCHORS = [0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 1.0, 0.5, 0.0, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 1.0,
            0.25, 0.25, 0.75, 0.75]
_LTRB = [np.array([[0.1, 0.1, 0.45, 0.4], [0.55, 0.6, 0.95, 0.9]], np.float32),
         np.zeros((0, 4), np.float32)]

register(OpSchema(
    name="box_encoder",
    doc="SSD box encoding: matches ltrb boxes to the anchors by IoU and outputs, per "
        "anchor, the matched box as (cx, cy, w, h) (or normalized offsets with offset=True) "
        "and its label (0 where unmatched).",
    inputs=(Input("bboxes", "Boxes (N, 4), ltrb, float32."),
            Input("labels", "Labels (N,), int32.")),
    args=(Arg("anchors", "floats", REQUIRED, "Anchors as ltrb, 4 values each."),
          Arg("criteria", "float", 0.5, "IoU above which an anchor matches a box.",
              range=(0, 1)),
          Arg("offset", "bool", False, "Output offsets from the anchors instead of boxes."),
          Arg("scale", "float", 1.0, "Scale of boxes and anchors before the offsets."),
          Arg("means", "floats", [0.0, 0.0, 0.0, 0.0], "Means subtracted from the offsets."),
          Arg("stds", "floats", [1.0, 1.0, 1.0, 1.0], "Deviations the offsets are divided by.")),
    num_outputs=2, kernel=box_encoder_kernel, check=_encoder_check,
    layout=lambda layouts, a: ["", ""], dtype=lambda d, a: [_F32, np.dtype(np.int32)],
    examples=(Example(inputs=(_LTRB, [np.array([3, 7], np.int32), np.zeros(0, np.int32)]),
                      args={"anchors": _ANCHORS}),
              Example(inputs=(_LTRB, [np.array([3, 7], np.int32), np.zeros(0, np.int32)]),
                      args={"anchors": _ANCHORS, "offset": True, "scale": 2.0,
                            "means": [0.1, 0.2, 0.3, 0.4], "stds": [0.5, 0.6, 0.7, 0.8]}),
              Example(inputs=(_LTRB, [np.array([3, 7], np.int32), np.zeros(0, np.int32)]),
                      args={"anchors": [0.0, 0.1, 0.2]}, raises=ArgumentError,
                      match="'anchors' must hold 4 values")),
))
