"""COCO annotation files as a columnar index: what ``fn.readers.coco`` reads per image.

``parse_coco`` turns the JSON into flat arrays, as DALI 2.4's loader does (and in the
layout of its preprocessed-annotation files, ``coco_preprocessed.py``): per image its file
name, id, size, and offsets into one array of boxes (float32 ``(M, 4)``), one of labels
(int32), one of polygons (int32 ``(P, 3)``: object, first vertex, end vertex, counted
within the image) and one of vertices (float32 ``(V, 2)``), plus the RLE masks of crowd
annotations. DALI's rules, measured on 2.4 and read in its loader:

* images come sorted by ``id`` (or in the order of the ``images`` argument, repeats kept);
  annotations keep their order in the file;
* an annotation is dropped if it is a crowd (``iscrowd``) one and ``include_iscrowd`` is
  off, or if its box is narrower or lower than ``size_threshold`` pixels (compared on the
  raw ``w, h`` in float32);
* labels are the category's position in the ``categories`` list plus one (0 is
  background), or the raw ``category_id`` with ``avoid_class_remapping``;
* the arithmetic is float32, as DALI's: ``ltrb`` adds ``x + w``, ``ratio`` divides by the
  image's ``width``/``height`` from the JSON (boxes and polygon vertices alike).

Where DALI reads nonsense silently, this module stops with an error that names the file
and the entry: malformed JSON, a box without 4 numbers, a category missing from
``categories`` (DALI labels it 0), an ``images`` path the file does not list (DALI drops
it), a polygon with an odd number of coordinates, an RLE mask whose size is not the
image's. Boxes outside their image (by more than ``BOX_TOLERANCE`` pixels) are recorded
per image in ``problems``: the reader raises them at build, or skips those images under
``on_error="skip"``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stoker.readers.index import DatasetError, PathTable

# A box may pass its image's edge by this many pixels (COCO's float boxes round outwards).
BOX_TOLERANCE = 1.0


@dataclass
class CocoIndex:
    """Per-image annotations, columnar. Offsets have one entry per image plus one."""

    paths: PathTable
    image_ids: np.ndarray  # int32 (n,)
    heights: np.ndarray  # int32 (n,); 0 where unknown (preprocessed files without masks)
    widths: np.ndarray
    box_offsets: np.ndarray  # int64 (n + 1,)
    boxes: np.ndarray  # float32 (M, 4)
    labels: np.ndarray  # int32 (M,)
    poly_offsets: np.ndarray  # int64 (n + 1,)
    polygons: np.ndarray  # int32 (P, 3), object and vertex indices within the image
    vert_offsets: np.ndarray  # int64 (n + 1,)
    vertices: np.ndarray  # float32 (V, 2)
    rle_offsets: np.ndarray  # int64 (n + 1,)
    rle_objects: np.ndarray  # int32 (R,): the object (within its image) each RLE belongs to
    rle_counts: list[np.ndarray] = field(default_factory=list)  # run lengths, per RLE
    rle_sizes: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    problems: dict[int, str] = field(default_factory=dict)  # image -> why it is unusable
    # Vertices in pixels where ``vertices`` are relative (ratio=True), for pixelwise masks.
    pixel_vertices: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.image_ids)

    def sample(self, i: int) -> tuple[slice, slice, slice, slice]:
        """The slices of image ``i`` in boxes/labels, polygons, vertices and RLEs."""
        return (slice(int(self.box_offsets[i]), int(self.box_offsets[i + 1])),
                slice(int(self.poly_offsets[i]), int(self.poly_offsets[i + 1])),
                slice(int(self.vert_offsets[i]), int(self.vert_offsets[i + 1])),
                slice(int(self.rle_offsets[i]), int(self.rle_offsets[i + 1])))


@dataclass(frozen=True)
class CocoOptions:
    """The arguments of fn.readers.coco that shape the index."""

    ltrb: bool = False
    ratio: bool = False
    size_threshold: float = 0.1
    include_iscrowd: bool = True
    skip_empty: bool = False
    avoid_class_remapping: bool = False
    images: tuple[str, ...] | None = None
    polygons: bool = False  # polygon_masks (or pixelwise_masks, which rasterise them)
    rles: bool = False  # pixelwise_masks


class _Columns:
    """The growing arrays of one parse."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: list[int] = []
        self.heights: list[int] = []
        self.widths: list[int] = []
        self.box_offsets, self.poly_offsets, self.vert_offsets, self.rle_offsets = (
            [0], [0], [0], [0])
        self.boxes: list[np.ndarray] = []
        self.labels: list[int] = []
        self.polygons: list[tuple[int, int, int]] = []
        self.vertices: list[np.ndarray] = []
        self.pixel_vertices: list[np.ndarray] = []
        self.n_vertices = 0
        self.rle_objects: list[int] = []
        self.rle_counts: list[np.ndarray] = []
        self.rle_sizes: list[tuple[int, int]] = []
        self.problems: dict[int, str] = {}

    def index(self, root: str | None) -> CocoIndex:
        def i64(v: list) -> np.ndarray:
            return np.asarray(v, np.int64)

        return CocoIndex(
            paths=PathTable(root, self.names), image_ids=np.asarray(self.ids, np.int32),
            heights=np.asarray(self.heights, np.int32), widths=np.asarray(self.widths, np.int32),
            box_offsets=i64(self.box_offsets),
            boxes=(np.concatenate(self.boxes).reshape(-1, 4) if self.boxes
                   else np.zeros((0, 4), np.float32)),
            labels=np.asarray(self.labels, np.int32), poly_offsets=i64(self.poly_offsets),
            polygons=np.asarray(self.polygons, np.int32).reshape(-1, 3),
            vert_offsets=i64(self.vert_offsets),
            vertices=(np.concatenate(self.vertices).reshape(-1, 2) if self.vertices
                      else np.zeros((0, 2), np.float32)),
            rle_offsets=i64(self.rle_offsets),
            rle_objects=np.asarray(self.rle_objects, np.int32), rle_counts=self.rle_counts,
            rle_sizes=np.asarray(self.rle_sizes, np.int64).reshape(-1, 2),
            problems=self.problems,
            pixel_vertices=(np.concatenate(self.pixel_vertices).reshape(-1, 2)
                            if self.pixel_vertices else None))


def load_json(path: str, who: str) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DatasetError(f"{who}: annotations_file {path!r} does not exist") from None
    except IsADirectoryError:
        raise DatasetError(f"{who}: annotations_file {path!r} is a folder, not a file") from None
    except OSError as e:
        raise DatasetError(f"{who}: cannot read annotations_file {path!r}: {e.strerror}") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{who}: annotations_file {path!r} is not valid JSON: {e.msg} at "
                           f"line {e.lineno}, column {e.colno}") from None
    except UnicodeDecodeError as e:
        raise DatasetError(f"{who}: annotations_file {path!r} is not UTF-8 text: {e}") from None


class _Where:
    """Names the file and entry an error is about."""

    def __init__(self, who: str, path: str):
        self.who, self.path = who, path

    def error(self, what: str, message: str) -> DatasetError:
        return DatasetError(f"{self.who}: annotations_file {self.path!r}, {what}: {message}")


def _int(entry: dict, key: str, what: str, where: _Where, required: bool = True) -> int | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise where.error(what, f"has no '{key}'")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise where.error(what, f"'{key}' must be an integer, got {value!r}")
    value = int(value)
    if not -(1 << 31) <= value < 1 << 31:
        raise where.error(what, f"'{key}' does not fit in int32, got {value}")
    return value


def _images(doc: dict, where: _Where) -> list[dict]:
    images = doc.get("images")
    if not isinstance(images, list):
        raise where.error("the top level", "has no 'images' list")
    seen_ids: dict[int, int] = {}
    seen_names: dict[str, int] = {}
    out = []
    for k, entry in enumerate(images):
        what = f"images[{k}]"
        if not isinstance(entry, dict):
            raise where.error(what, f"must be an object, got {type(entry).__name__}")
        image_id = _int(entry, "id", what, where)
        name = entry.get("file_name")
        if not isinstance(name, str) or not name:
            raise where.error(f"{what} (id {image_id})", "has no 'file_name'")
        if image_id in seen_ids:
            raise where.error(what, f"repeats image id {image_id} of images[{seen_ids[image_id]}]")
        if name in seen_names:
            raise where.error(what, f"repeats file_name {name!r} of images[{seen_names[name]}]")
        seen_ids[image_id], seen_names[name] = k, k
        out.append({"id": image_id, "file_name": name,
                    "height": _int(entry, "height", what, where, required=False),
                    "width": _int(entry, "width", what, where, required=False)})
    return out


def _categories(doc: dict, where: _Where) -> dict[int, int]:
    """category id -> label 1..N in list order; a repeated id keeps its first label (the
    count still advances), as DALI does."""
    mapping: dict[int, int] = {}
    cats = doc.get("categories", [])
    if not isinstance(cats, list):
        raise where.error("'categories'", "must be a list")
    for k, entry in enumerate(cats):
        if not isinstance(entry, dict):
            raise where.error(f"categories[{k}]", "must be an object")
        mapping.setdefault(_int(entry, "id", f"categories[{k}]", where), k + 1)
    return mapping


def _bbox(ann: dict, what: str, where: _Where) -> np.ndarray:
    box = ann.get("bbox")
    if not isinstance(box, list):
        raise where.error(what, "has no 'bbox' list [x, y, width, height]")
    if len(box) != 4:
        raise where.error(what, f"'bbox' must contain exactly 4 values, got {len(box)}")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in box):
        raise where.error(what, f"'bbox' must hold numbers, got {box!r}")
    return np.asarray(box, np.float32)


def _polygons(seg: list, what: str, where: _Where) -> list[np.ndarray]:
    out = []
    for j, poly in enumerate(seg):
        if not isinstance(poly, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in poly):
            raise where.error(what, f"segmentation polygon {j} must be a list of numbers")
        if len(poly) % 2:
            raise where.error(what, f"segmentation polygon {j} has an odd number of "
                                    f"coordinates ({len(poly)}); give x, y pairs")
        out.append(np.asarray(poly, np.float32).reshape(-1, 2))
    return out


def _rle(seg: dict, what: str, where: _Where, image: dict) -> tuple[np.ndarray, tuple[int, int]]:
    from stoker.readers.coco_rle import decode_counts_string

    size = seg.get("size")
    if not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(v, int) and v > 0 for v in size)):
        raise where.error(what, f"RLE segmentation needs 'size': [height, width], got {size!r}")
    h, w = size
    if (image["height"], image["width"]) != (h, w):
        raise where.error(what, f"RLE mask size {h} x {w} differs from its image's "
                                f"{image['height']} x {image['width']}")
    counts = seg.get("counts")
    try:
        if isinstance(counts, str) and counts:
            runs = decode_counts_string(counts)
        elif isinstance(counts, list) and counts:
            runs = np.asarray(counts, np.int64)
        else:
            raise ValueError("missing or empty 'counts'")
        if runs.ndim != 1 or runs.min() < 0 or runs.sum() != h * w:
            raise ValueError(f"its runs cover {int(runs.sum())} pixels, the mask has {h * w}")
    except (ValueError, TypeError) as e:
        raise where.error(what, f"bad RLE segmentation: {e}") from None
    return runs, (h, w)


def _outside(box: np.ndarray, image: dict) -> str | None:
    x, y, w, h = (float(v) for v in box)
    width, height = image["width"], image["height"]
    if width is None or height is None:
        return None
    tol = BOX_TOLERANCE
    if w < 0 or h < 0 or x < -tol or y < -tol or x + w > width + tol or y + h > height + tol:
        return (f"box [x, y, w, h] = [{x:g}, {y:g}, {w:g}, {h:g}] lies outside its "
                f"{width} x {height} image")
    return None


def parse_coco(path: str, root: str | None, opts: CocoOptions, who: str) -> CocoIndex:
    """The index of the COCO annotation file ``path`` (images relative to ``root``)."""
    where = _Where(who, path)
    doc = load_json(path, who)
    if not isinstance(doc, dict):
        raise where.error("the top level", f"must be an object, got {type(doc).__name__}")
    images = _images(doc, where)
    categories = _categories(doc, where)
    if opts.images is not None:
        by_name = {im["file_name"]: im for im in images}
        missing = [p for p in opts.images if p not in by_name]
        if missing:
            raise DatasetError(f"{who}: argument 'images' names {len(missing)} file(s) that "
                               f"annotations_file {path!r} does not list, e.g. {missing[0]!r}")
        order = [by_name[p] for p in opts.images]
    else:
        order = sorted(images, key=lambda im: im["id"])
    need_size = opts.ratio or opts.rles
    for im in order if need_size else ():
        if im["width"] is None or im["height"] is None or im["width"] <= 0 or im["height"] <= 0:
            raise where.error(f"image {im['id']} ({im['file_name']!r})",
                              "needs a positive 'width' and 'height' for ratio=True and "
                              "pixelwise_masks")
    by_image = _annotations(doc, {im["id"]: im for im in images}, categories, opts, where)
    cols = _Columns()
    for im in order:
        anns = by_image.get(im["id"], [])
        if opts.skip_empty and not anns:
            continue
        _add_image(cols, im, anns, opts)
    if not cols.names:
        raise DatasetError(f"{who}: annotations_file {path!r} gives no images to read"
                           + (" (skip_empty=True left none)" if order else ""))
    return cols.index(root)


def _annotations(doc: dict, images: dict[int, dict], categories: dict[int, int],
                 opts: CocoOptions, where: _Where) -> dict[int, list]:
    """The kept annotations of each image id, in file order, checked and converted."""
    anns = doc.get("annotations", [])
    if not isinstance(anns, list):
        raise where.error("'annotations'", "must be a list")
    threshold = np.float32(opts.size_threshold)
    by_image: dict[int, list] = {}
    for k, ann in enumerate(anns):
        if not isinstance(ann, dict):
            raise where.error(f"annotations[{k}]", "must be an object")
        what = f"annotation {ann.get('id', f'[{k}]')}"
        image_id = _int(ann, "image_id", what, where)
        image = images.get(image_id)
        if image is None:
            continue  # of an image not in this file (a subset's list): DALI ignores it too
        what += f" (image {image['file_name']!r})"
        if _int(ann, "iscrowd", what, where, required=False) and not opts.include_iscrowd:
            continue
        box = _bbox(ann, what, where)
        if not (box[2] >= threshold and box[3] >= threshold):
            continue
        category = _int(ann, "category_id", what, where)
        if opts.avoid_class_remapping:
            label = category
        elif category in categories:
            label = categories[category]
        else:
            raise where.error(what, f"category_id {category} is not in 'categories' (DALI "
                                    "would label it 0, the background)")
        polys, rle = None, None
        seg = ann.get("segmentation")
        if opts.polygons and isinstance(seg, list):
            polys = _polygons(seg, what, where)
        elif opts.rles and isinstance(seg, dict):
            rle = _rle(seg, what, where, image)
        by_image.setdefault(image_id, []).append(
            (box, label, polys, rle, _outside(box, image), what))
    return by_image


def _add_image(cols: _Columns, image: dict, anns: list, opts: CocoOptions) -> None:
    n = len(cols.names)
    cols.names.append(image["file_name"])
    cols.ids.append(image["id"])
    cols.heights.append(image["height"] or 0)
    cols.widths.append(image["width"] or 0)
    width = np.float32(image["width"] or 1)
    height = np.float32(image["height"] or 1)
    first_vertex = cols.n_vertices
    for obj, (box, label, polys, rle, outside, what) in enumerate(anns):
        if outside is not None and n not in cols.problems:
            cols.problems[n] = f"{what}: {outside}"
        box = box.copy()
        if opts.ltrb:
            box[2:] += box[:2]
        if opts.ratio:
            box[0::2] /= width
            box[1::2] /= height
        cols.boxes.append(box)
        cols.labels.append(label)
        for poly in polys or ():
            start = cols.n_vertices - first_vertex
            cols.polygons.append((obj, start, start + len(poly)))
            if opts.ratio:
                if opts.rles:  # pixelwise masks are rasterised from the pixel coordinates
                    cols.pixel_vertices.append(poly)
                poly = poly / np.array([width, height], np.float32)
            cols.vertices.append(poly)
            cols.n_vertices += len(poly)
        if rle is not None:
            cols.rle_objects.append(obj)
            cols.rle_counts.append(rle[0])
            cols.rle_sizes.append(rle[1])
    cols.box_offsets.append(len(cols.labels))
    cols.poly_offsets.append(len(cols.polygons))
    cols.vert_offsets.append(cols.n_vertices)
    cols.rle_offsets.append(len(cols.rle_objects))

