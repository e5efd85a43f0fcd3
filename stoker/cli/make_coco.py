"""A small COCO-style detection dataset, generated without a network.

Each image is a plain background with a few filled shapes (rectangles, triangles,
polygons) of distinct colours; each shape is one annotation with its box, polygon
outline and category. The annotation file exercises what a COCO reader must handle:
categories listed out of id order and with gaps (7, 1, 90, 3), images listed out of id
order, images without annotations, boxes under ``size_threshold``, objects made of two
polygons, and crowd annotations whose masks are RLE (compressed string and plain list).
Used by the detection examples, the tests and ``stoker make-dataset --coco``.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import numpy as np

# Listed out of id order, with gaps: readers remap them to 1..4 in this order.
CATEGORIES = ({"id": 7, "name": "kite"}, {"id": 1, "name": "person"},
              {"id": 90, "name": "toothbrush"}, {"id": 3, "name": "car"})


def _shape(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A polygon (k, 2) inside the image: rectangle, triangle or a star-ish polygon."""
    cx, cy = rng.uniform(0.15, 0.85) * w, rng.uniform(0.15, 0.85) * h
    rx, ry = rng.uniform(0.08, 0.35) * w, rng.uniform(0.08, 0.35) * h
    kind = rng.integers(3)
    if kind == 0:
        pts = [(-1, -1), (1, -1), (1, 1), (-1, 1)]
    elif kind == 1:
        pts = [(-1, 1), (0, -1), (1, 1)]
    else:
        k = int(rng.integers(5, 9))
        ang = np.sort(rng.uniform(0, 2 * np.pi, k))
        rad = rng.uniform(0.5, 1.0, k)
        pts = list(zip(rad * np.cos(ang), rad * np.sin(ang), strict=True))
    xy = np.array([(cx + px * rx, cy + py * ry) for px, py in pts])
    xy[:, 0] = np.clip(xy[:, 0], 0, w - 1)
    xy[:, 1] = np.clip(xy[:, 1], 0, h - 1)
    return np.round(xy, 2)


def _bbox(polys: list[np.ndarray]) -> list[float]:
    pts = np.concatenate(polys)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return [round(float(x0), 2), round(float(y0), 2), round(float(x1 - x0), 2),
            round(float(y1 - y0), 2)]


def _background(rng: np.random.Generator, h: int, w: int, photos: list | None) -> np.ndarray:
    if not photos:
        img = np.empty((h, w, 3), np.uint8)
        img[:] = rng.integers(0, 256, 3)
        return img
    import cv2

    src = photos[int(rng.integers(len(photos)))]
    sh, sw = src.shape[:2]
    ch, cw = min(sh, int(sh * rng.uniform(0.4, 1))), min(sw, int(sw * rng.uniform(0.4, 1)))
    y, x = int(rng.integers(0, sh - ch + 1)), int(rng.integers(0, sw - cw + 1))
    return cv2.resize(src[y:y + ch, x:x + cw], (w, h), interpolation=cv2.INTER_AREA)


def make_coco_dataset(root: str | os.PathLike, images: int = 16, seed: int = 0,
                      min_size: int = 48, max_size: int = 96, quality: int = 90,
                      crowd: bool = True, photos: bool = False) -> tuple[str, str]:
    """Writes ``root/images/*.jpg`` and ``root/annotations.json``; returns
    ``(file_root, annotations_file)`` as ``fn.readers.coco`` takes them. With ``photos``
    the backgrounds are crops of scikit-image's photographs (``stoker make-dataset``'s
    source; JPEGs then decode at a realistic cost), else plain colours."""
    import cv2

    from stoker.readers.coco_rle import encode_counts_string, mask_to_counts, polygon_mask

    backgrounds = None
    if photos:
        from stoker.cli.make_dataset import _load_photos

        backgrounds = _load_photos()
    rng = np.random.default_rng(seed)
    root = pathlib.Path(root)
    (root / "images").mkdir(parents=True, exist_ok=True)
    ids = [int(v) for v in rng.permutation(np.arange(1, images + 1) * 11 + 100)]
    image_entries: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for i, image_id in enumerate(ids):
        h, w = (int(v) for v in rng.integers(min_size, max_size + 1, 2))
        img = _background(rng, h, w, backgrounds)
        name = f"{image_id:012d}.jpg"
        image_entries.append({"id": image_id, "file_name": name, "height": h, "width": w})
        count = 0 if i % 5 == 4 else int(rng.integers(1, 5))  # every fifth image is empty
        for k in range(count):
            polys = [_shape(rng, h, w)]
            if k == 1 and i % 3 == 0:  # an object made of two parts
                polys.append(_shape(rng, h, w))
            color = tuple(int(c) for c in rng.integers(0, 256, 3))
            for p in polys:
                cv2.fillPoly(img, [np.round(p).astype(np.int32)], color)
            category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]["id"]
            is_crowd = crowd and k == 2 and i % 2 == 0
            ann: dict[str, Any] = {"id": len(annotations) + 1, "image_id": image_id,
                                   "category_id": category, "bbox": _bbox(polys),
                                   "iscrowd": int(is_crowd)}
            if is_crowd:
                mask = np.zeros((h, w), bool)
                for p in polys:
                    mask |= polygon_mask(p, h, w)
                counts = mask_to_counts(mask)
                # Both RLE forms COCO files use: the compressed string and the plain list.
                ann["segmentation"] = {"size": [h, w], "counts": (
                    encode_counts_string(counts) if i % 4 == 0 else counts.tolist())}
            else:
                ann["segmentation"] = [p.reshape(-1).tolist() for p in polys]
            ann["area"] = round(float(np.prod(ann["bbox"][2:])), 2)
            annotations.append(ann)
        if i % 7 == 3:  # a box under the default size_threshold (0.1 pixel)
            annotations.append({"id": len(annotations) + 1, "image_id": image_id,
                                "category_id": 3, "bbox": [5.0, 5.0, 0.05, 4.0],
                                "iscrowd": 0, "area": 0.2,
                                "segmentation": [[5.0, 5.0, 5.05, 5.0, 5.05, 9.0]]})
        ok, data = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise RuntimeError("OpenCV failed to encode a JPEG")
        (root / "images" / name).write_bytes(data.tobytes())
    doc = {"info": {"description": "stoker's generated COCO-style dataset"},
           "images": image_entries, "annotations": annotations,
           "categories": [dict(c) for c in CATEGORIES]}
    ann_path = root / "annotations.json"
    ann_path.write_text(json.dumps(doc))
    return str(root / "images"), str(ann_path)
