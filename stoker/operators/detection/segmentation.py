"""``fn.segmentation.random_object_bbox``, ``random_mask_pixel`` and ``select_masks``.

Random choices come from each sample's stream (same seed, same sample: same choice); the
rules and output types are DALI 2.4's (int32 boxes in the input's axis order, int64 pixel
coordinates, COCO-style polygons). ``cache_objects`` is accepted and has no effect:
finding the blobs is a compiled single pass here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.detection.objects import pick_object, random_pixel
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_LABEL_TYPES = (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)
_I32 = np.dtype(np.int32)


def _opt(value: Any) -> Any:
    if value is None:
        return None
    arr = np.asarray(value).reshape(-1)
    return arr.tolist()


def random_object_bbox_kernel(ins: list, args: dict, sctx: Any) -> Any:
    labels = np.asarray(ins[0])
    if labels.dtype.type not in _LABEL_TYPES:
        raise TypeError(f"unsupported input type {labels.dtype}; give bool, int8/16/32 or "
                        "uint8/16/32 labels")
    if not 1 <= labels.ndim <= 6:
        raise ValueError(f"the label map must have 1 to 6 dimensions, got {labels.ndim}")
    classes, weights = _opt(args.get("classes")), _opt(args.get("class_weights"))
    if weights is not None and classes is None:
        classes = list(range(1, len(weights) + 1))
    if weights is not None and len(weights) != len(classes):
        raise ValueError(f"'class_weights' has {len(weights)} values for {len(classes)} "
                         "classes")
    threshold = _opt(args.get("threshold"))
    if threshold is not None and len(threshold) == 1:
        threshold = threshold * labels.ndim
    if threshold is not None and len(threshold) != labels.ndim:
        raise ValueError(f"'threshold' has {len(threshold)} values for a {labels.ndim}-D input")
    background = int(np.asarray(args["background"]).reshape(-1)[0])
    if classes is not None and "background" not in args["_given"] and background in classes:
        background = min(classes) - 1  # the default background is itself a class
    choice = pick_object(labels.astype(np.int64) if labels.dtype == np.bool_ else labels,
                         sctx.generator(), background=background, classes=classes,
                         weights=weights, foreground_prob=float(args["foreground_prob"]),
                         ignore_class=args["ignore_class"], k_largest=args.get("k_largest"),
                         threshold=threshold)
    lo, hi = choice.lo.astype(np.int32), choice.hi.astype(np.int32)
    fmt = args["format"]
    outs = [np.concatenate([lo, hi])] if fmt == "box" else \
        [lo, hi - lo] if fmt == "anchor_shape" else [lo, hi]
    if args["output_class"]:
        outs.append(np.array(choice.label, np.int32))
    return tuple(outs) if len(outs) > 1 else outs[0]


def _object_check(args: dict) -> None:
    if args["ignore_class"] and any(args.get(k) is not None and (k in args["_given"]) and
                                    (k != "output_class" or args[k])
                                    for k in ("classes", "class_weights", "output_class")):
        raise ArgumentError("fn.segmentation.random_object_bbox: 'classes', 'class_weights' "
                            "and 'output_class' cannot be used with ignore_class=True")
    k = args.get("k_largest")
    if k is not None and k < 1:
        raise ArgumentError("fn.segmentation.random_object_bbox: argument 'k_largest' must be "
                            f"positive, got {k}")


def _object_outputs(args: dict) -> int:
    return (1 if args.get("format") == "box" else 2) + bool(args.get("output_class"))


_MASK = np.zeros((6, 8), np.int32)
_MASK[0, 0] = _MASK[1, 1] = _MASK[5, 7] = 1
_MASK[3:5, 3:7] = 2

register(OpSchema(
    name="segmentation.random_object_bbox",
    doc="Picks a random object (a connected blob of one class) in a label map and outputs "
        "its bounding box (or, with probability 1 - foreground_prob, the whole input).",
    inputs=(Input("input", "Label map: bool or 8/16/32-bit integers, 1 to 6 dimensions."),),
    args=(Arg("background", "int", 0, "Background label.", per_sample=True),
          Arg("classes", "ints", None, "Foreground labels (default: all but background).",
              per_sample=True),
          Arg("class_weights", "floats", None, "Relative probability of each class.",
              per_sample=True, range=(0, None)),
          Arg("foreground_prob", "float", 1.0, "Probability of picking an object.",
              per_sample=True, range=(0, 1)),
          Arg("format", "str", "anchor_shape", "'anchor_shape', 'start_end' or 'box'.",
              choices=("anchor_shape", "start_end", "box")),
          Arg("ignore_class", "bool", False, "Pick among all blobs regardless of class."),
          Arg("k_largest", "int", None, "Only the k largest blobs are candidates."),
          Arg("threshold", "ints", None, "Minimum extent of a blob per axis.", per_sample=True),
          Arg("output_class", "bool", False, "Also output the picked class."),
          Arg("cache_objects", "bool", False, "Accepted for portability.")),
    num_outputs=_object_outputs, kernel=random_object_bbox_kernel, random=True,
    check=_object_check, layout=lambda layouts, a: [""] * _object_outputs(a),
    dtype=lambda d, a: [_I32] * _object_outputs(a),
    examples=(Example(inputs=([_MASK, _MASK.T.copy(), np.zeros((3, 4), np.int32)],),
                      args={"output_class": True}),
              Example(inputs=([_MASK, _MASK[:, :5].copy()],),
                      args={"format": "box", "ignore_class": True, "k_largest": 2}),
              Example(inputs=([_MASK, _MASK],), args={"classes": [1, 2],
                                                      "class_weights": [0.2, 0.8],
                                                      "threshold": [2, 2],
                                                      "format": "start_end"}),
              Example(inputs=([_MASK],), args={"format": "xx"}, raises=ArgumentError,
                      match="'format' must be one of")),
))


def random_mask_pixel_kernel(ins: list, args: dict, sctx: Any) -> np.ndarray:
    data = np.asarray(ins[0])
    mask = None
    if int(np.asarray(args["foreground"]).reshape(-1)[0]):
        value = args.get("value")
        if value is not None:
            mask = data == np.asarray(value).reshape(-1)[0]
        else:
            mask = data > np.asarray(args["threshold"], np.float64).reshape(-1)[0]
    return random_pixel(mask, data.shape, sctx.generator())


def _pixel_check(args: dict) -> None:
    if "value" in args["_given"] and "threshold" in args["_given"]:
        raise ArgumentError("fn.segmentation.random_mask_pixel: arguments 'value' and "
                            "'threshold' can not be given together")


register(OpSchema(
    name="segmentation.random_mask_pixel",
    doc="Picks a random pixel of the input (int64 coordinates, one per axis): among the "
        "foreground pixels (value > threshold, or == value) when foreground is set, else "
        "among all.",
    inputs=(Input("input", "A mask or label map."),),
    args=(Arg("foreground", "int", 0, "Pick among foreground pixels (nonzero).",
              per_sample=True),
          Arg("threshold", "float", 0.0, "Foreground: pixels above this.", per_sample=True),
          Arg("value", "int", None, "Foreground: pixels equal to this.", per_sample=True)),
    kernel=random_mask_pixel_kernel, random=True, check=_pixel_check,
    layout=lambda layouts, a: "", dtype=lambda d, a: np.dtype(np.int64),
    examples=(Example(inputs=([_MASK, np.zeros((3, 3), np.int32)],), args={"foreground": 1}),
              Example(inputs=([_MASK.astype(np.float32)] * 2,),
                      args={"foreground": 1, "threshold": 1.5}),
              Example(inputs=([_MASK.astype(np.uint8)[..., None]] * 2,),
                      args={"foreground": 1, "value": 2}),
              Example(inputs=([_MASK],), args={"value": 1, "threshold": 0.5},
                      raises=ArgumentError, match="can not be given together")),
))


def select_masks_kernel(ins: list, args: dict, ctx: Any) -> tuple:
    ids, polygons, vertices = (np.asarray(x) for x in ins)
    if ids.dtype != np.int32 or polygons.dtype != np.int32:
        raise TypeError(f"mask_ids and polygons must be int32, got {ids.dtype} and "
                        f"{polygons.dtype}")
    ids = ids.reshape(-1)
    if polygons.ndim != 2 or polygons.shape[1] != 3:
        raise ValueError(f"polygons must be (P, 3), got shape {polygons.shape}")
    if vertices.ndim != 2:
        raise ValueError(f"vertices must be (V, D), got shape {vertices.shape}")
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"mask_ids should not have duplicated values; got "
                         f"{int(uniq[counts > 1][0])} repeated")
    missing = np.setdiff1d(ids, polygons[:, 0])
    if missing.size:
        raise ValueError(f"selected mask_id {int(missing[0])} is not present in the input")
    out_polys, parts, start = [], [], 0
    # In the order of mask_ids, as DALI orders them; every polygon of a mask, in input order
    # (DALI 2.4 keeps only a mask's last polygon).
    for position, mask_id in enumerate(ids.tolist()):
        for v0, v1 in polygons[polygons[:, 0] == mask_id, 1:].tolist():
            if not 0 <= v0 <= v1 <= len(vertices):
                raise ValueError(f"vertex range [{v0}, {v1}) of mask {mask_id} is outside "
                                 f"the {len(vertices)} vertices")
            new_id = position if args["reindex_masks"] else mask_id
            out_polys.append((new_id, start, start + v1 - v0))
            parts.append(vertices[v0:v1])
            start += v1 - v0
    out_v = np.concatenate(parts) if parts else np.zeros((0, vertices.shape[1]),
                                                         vertices.dtype)
    return np.asarray(out_polys, np.int32).reshape(-1, 3), out_v


_POLYS = np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10]], np.int32)
_VERTS = np.arange(20, dtype=np.float32).reshape(10, 2)

register(OpSchema(
    name="segmentation.select_masks",
    doc="Keeps the polygons (and their vertices, compacted) of the selected mask ids, in "
        "the order of mask_ids; with reindex_masks, a mask's id becomes its position in "
        "mask_ids.",
    inputs=(Input("mask_ids", "Selected mask ids (int32, no repeats)."),
            Input("polygons", "(P, 3) int32: mask id, first vertex, end vertex."),
            Input("vertices", "(V, D) vertices.")),
    args=(Arg("reindex_masks", "bool", False, "Renumber masks by their position in mask_ids."),),
    num_outputs=2, kernel=select_masks_kernel,
    layout=lambda layouts, a: ["", ""], dtype=lambda d, a: [_I32, d[2]],
    examples=(Example(inputs=([np.array([1], np.int32), np.array([2, 0], np.int32)],
                              [_POLYS, _POLYS], [_VERTS, _VERTS])),
              Example(inputs=([np.array([2, 0], np.int32)], [_POLYS],
                              [np.arange(30, dtype=np.int64).reshape(10, 3)]),
                      args={"reindex_masks": True}),
              Example(inputs=([np.array([1, 1], np.int32)], [_POLYS], [_VERTS]),
                      raises=RuntimeError, match="duplicated")),
))
