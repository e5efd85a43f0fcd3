"""The detection cases that DALI 2.4 ran (tests/data/record/detection_ops.py) and that the
replays run on stoker: inputs, arguments, and how outputs are stored.

A case is ``{"op", "args", "inputs"}``; inputs are lists of samples per input. Arrays are
stored as ``{"dtype", "shape", "data"}`` (float32 values as the doubles they are, so they
come back bit for bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def encode(a: Any) -> dict:
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.reshape(-1).tolist()}


def decode(d: dict) -> np.ndarray:
    return np.array(d["data"], dtype=d["dtype"]).reshape(d["shape"])


def _boxes(rng: np.random.Generator, n: int, ltrb: bool = True) -> np.ndarray:
    lo = rng.uniform(0, 0.8, (n, 2))
    wh = rng.uniform(0.01, 0.5, (n, 2))
    hi = np.minimum(lo + wh, 1.0)
    return np.concatenate([lo, hi if ltrb else hi - lo], 1).astype(np.float32)


def ssd_like_anchors(sizes: tuple[int, ...] = (4, 2)) -> list[float]:
    """A small anchor grid (square and 2:1 boxes per cell) as a flat ltrb list."""
    out = []
    for fs in sizes:
        for i in range(fs):
            for j in range(fs):
                cx, cy = (j + 0.5) / fs, (i + 0.5) / fs
                for w, h in ((1 / fs, 1 / fs), (1.4 / fs, 0.7 / fs), (0.7 / fs, 1.4 / fs)):
                    out += [max(cx - w / 2, 0), max(cy - h / 2, 0), min(cx + w / 2, 1),
                            min(cy + h / 2, 1)]
    return [float(np.float32(v)) for v in out]


def deterministic_cases() -> list[dict]:
    rng = np.random.default_rng(23)
    cases: list[dict] = []

    def add(op: str, inputs: list, **args: Any) -> None:
        cases.append({"op": op, "args": args, "inputs": [[encode(s) for s in x] for x in inputs]})

    boxes = [_boxes(rng, 20), _boxes(rng, 7), np.zeros((0, 4), np.float32)]
    xywh = [_boxes(rng, 20, ltrb=False), _boxes(rng, 3, ltrb=False)]
    for ltrb, data in ((True, boxes), (False, xywh)):
        add("bb_flip", [data], ltrb=ltrb)
        add("bb_flip", [data], ltrb=ltrb, horizontal=0, vertical=1)
        add("bb_flip", [data], ltrb=ltrb, horizontal=1, vertical=1)
        for ratio, px, py in ((1.0, 0.5, 0.5), (1.37, 0.77, 0.29), (2.0, 1.0, 0.0),
                              (3.7, 0.13, 0.91), (5.3, 1.0, 1.0)):
            add("bbox_paste", [data], ltrb=ltrb, ratio=ratio, paste_x=px, paste_y=py)
    add("bb_flip", [[np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], np.float32)]])

    anchors = ssd_like_anchors()
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) for b in boxes]
    add("box_encoder", [boxes, labels], anchors=anchors)
    add("box_encoder", [boxes, labels], anchors=anchors, criteria=0.3)
    add("box_encoder", [boxes, labels], anchors=anchors, offset=True, scale=300.0,
        means=[0.1, 0.2, 0.0, 0.3], stds=[0.1, 0.1, 0.2, 0.2])
    add("box_encoder", [boxes, [x.reshape(-1, 1) for x in labels]], anchors=anchors,
        offset=True)

    px_boxes = [b * np.float32(50) for b in boxes[:2]]
    for angle in (0.0, 30.0, 45.0, 90.0, 100.0, 200.0, -35.0):
        add("bbox_rotate", [boxes[:2], labels[:2]], angle=angle, input_shape=[48, 64])
    for mode in ("fixed", "halfway"):
        add("bbox_rotate", [boxes[:2]], angle=37.0, input_shape=[48, 64], mode=mode)
    add("bbox_rotate", [boxes[:2], labels[:2]], angle=25.0, input_shape=[48, 64, 3],
        keep_size=True, remove_threshold=0.5)
    add("bbox_rotate", [boxes[:2]], angle=60.0, input_shape=[48, 64], size=[70.0, 90.0])
    add("bbox_rotate", [xywh], angle=15.0, input_shape=[3, 48, 64], shape_layout="CHW",
        bbox_layout="xyWH")
    add("bbox_rotate", [px_boxes], angle=20.0, input_shape=[50, 50], bbox_normalized=False)

    # One polygon per mask: DALI keeps only the last polygon of a mask (stoker keeps all).
    polys = np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10], [3, 10, 13]], np.int32)
    verts = np.arange(26, dtype=np.float32).reshape(13, 2)
    for ids, re in (([1], False), ([2, 0], True), ([2, 1, 0], False), ([], False)):
        add("segmentation.select_masks", [[np.array(ids, np.int32)], [polys], [verts]],
            reindex_masks=re)

    imgs = [rng.integers(0, 255, (6, 7, 3), dtype=np.uint8) for _ in range(3)]
    add("multi_paste", [imgs], in_ids=[0, 2, 1], output_size=[9, 10])
    add("multi_paste", [imgs], in_ids=[1, 0], output_size=[11, 13],
        in_anchors_rel=[0.34, 0.29, 0.51, 0.13], shapes_rel=[0.5, 0.57, 0.49, 0.72],
        out_anchors_rel=[0.33, 0.25, 0.61, 0.47])
    add("multi_paste", [imgs], in_ids=[2, 1], output_size=[12, 9],
        in_anchors_rel=[0.1, 0.45, 0.26, 0.0], shapes_rel=[0.61, 0.33, 0.7, 0.88],
        out_anchors_rel=[0.55, 0.08, 0.19, 0.12])
    add("multi_paste", [imgs, imgs[::-1]], out_anchors=[0, 0, 1, 2], shapes=[3, 3, 4, 4],
        in_anchors=[1, 1, 2, 3], dtype_name="FLOAT")

    one = np.zeros((5, 7), np.uint8)
    one[1:3, 2:6] = 3
    add("segmentation.random_object_bbox", [[one, one.T.copy()]], output_class=True)
    add("segmentation.random_object_bbox", [[one]], format="start_end")
    add("segmentation.random_object_bbox", [[one]], format="box")
    vol = np.zeros((3, 4, 5), np.int32)
    vol[1:3, 0:2, 1:5] = 7
    add("segmentation.random_object_bbox", [[vol]], output_class=True)
    px = np.zeros((4, 5, 3), np.float32)
    px[2, 3, 1] = 9.0
    add("segmentation.random_mask_pixel", [[px]], foreground=1)
    add("segmentation.random_mask_pixel", [[px.astype(np.int32)]], foreground=1, value=9)
    add("roi_random_crop", [], crop_shape=[4, 6], roi_start=[2, 3], roi_shape=[4, 6])
    add("roi_random_crop", [], crop_shape=[4, 6], roi_start=[9, 1], roi_end=[12, 5],
        in_shape=[12, 6])
    return cases


# random_bbox_crop: configurations whose windows are compared by their properties and
# their statistics (DALI's random draws are not stoker's).
CROP_CONFIGS = {
    "ssd": {"aspect_ratio": [0.5, 2.0], "thresholds": [0.0, 0.1, 0.3, 0.5, 0.7, 0.9],
            "scaling": [0.3, 1.0], "bbox_layout": "xyXY", "allow_no_crop": True,
            "num_attempts": 50},
    "efficientdet": {"crop_shape": [64, 48], "input_shape": [96, 80], "bbox_layout": "xyXY",
                     "allow_no_crop": False, "total_num_attempts": 64},
    "overlap_any": {"threshold_type": "overlap", "thresholds": [0.5, 1.0],
                    "all_boxes_above_threshold": False, "scaling": [0.2, 0.8],
                    "aspect_ratio": [0.75, 1.33], "num_attempts": 20},
    "prune_xywh": {"bbox_layout": "xyWH", "bbox_prune_threshold": 0.4, "scaling": [0.3, 0.7],
                   "thresholds": [0.1], "allow_no_crop": False, "total_num_attempts": 200,
                   "output_bbox_indices": True},
    "square_pixels": {"input_shape": [120, 60], "aspect_ratio": [1.0, 1.0],
                      "scaling": [0.3, 0.6], "total_num_attempts": 30},
}


def crop_inputs(layout: str = "xyXY", batch: int = 24) -> tuple[list, list]:
    rng = np.random.default_rng(5)
    boxes = [_boxes(rng, int(rng.integers(0, 6)), ltrb=layout == "xyXY") for _ in range(batch)]
    labels = [np.arange(10, 10 + len(b), dtype=np.int32) for b in boxes]
    return boxes, labels
