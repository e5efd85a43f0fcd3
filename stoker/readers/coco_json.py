"""COCO annotation JSON to columns: the values ``fn.readers.coco`` needs, as arrays.

Two ways in. The fast one decodes with msgspec against a schema of just the fields the
reader reads (``id``, ``file_name``, ``height``, ``width`` of images; ``image_id``,
``category_id``, ``iscrowd``, ``bbox``, ``id`` of annotations; ``id`` of categories),
skipping the rest and keeping each ``segmentation`` as raw bytes, decoded only for the
annotations whose masks are asked for: COCO's files are mostly polygons. Where the file
does not fit the schema, the general way parses it with orjson (or json) and checks entry
by entry, so that the error names the file and the entry ("annotation 10 (image
'a.jpg'): 'bbox' must contain exactly 4 values, got 3").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker.readers.index import DatasetError

try:  # orjson parses JSON several times faster than json (a dependency)
    import orjson as _orjson
except ImportError:  # pragma: no cover - installed with stoker
    _orjson = None
try:  # msgspec decodes straight into the few fields needed (a dependency)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - installed with stoker
    _msgspec = None


@dataclass
class Columns:
    """Images and annotations of one file, in file order."""

    ids: np.ndarray  # int64 image ids
    names: list[str]
    heights: np.ndarray  # int64; 0 where the file gives none
    widths: np.ndarray
    ann_image: np.ndarray  # int64: the image id of each annotation
    ann_crowd: np.ndarray  # int64 iscrowd (0 where missing)
    ann_boxes: np.ndarray  # float32 (N, 4): x, y, w, h
    ann_category: np.ndarray  # int64
    ann_ids: list  # each annotation's "id" (None where missing), for messages
    categories: dict[int, int]  # category id -> 1..N in list order
    # Annotation indices -> their decoded segmentations (None where there is none).
    segmentations: Callable[[list[int]], list]


class _Where:
    """Names the file and entry an error is about."""

    def __init__(self, who: str, path: str):
        self.who, self.path = who, path

    def error(self, what: str, message: str) -> DatasetError:
        return DatasetError(f"{self.who}: annotations_file {self.path!r}, {what}: {message}")


def _read(path: str, who: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DatasetError(f"{who}: annotations_file {path!r} does not exist") from None
    except IsADirectoryError:
        raise DatasetError(f"{who}: annotations_file {path!r} is a folder, not a file") from None
    except OSError as e:
        raise DatasetError(f"{who}: cannot read annotations_file {path!r}: {e.strerror}") from None
    return data


def _parse(data: bytes, where: _Where) -> Any:
    path, who = where.path, where.who
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # the standard parser says where, in its words
    try:
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{who}: annotations_file {path!r} is not valid JSON: {e.msg} at "
                           f"line {e.lineno}, column {e.colno}") from None
    except UnicodeDecodeError as e:
        raise DatasetError(f"{who}: annotations_file {path!r} is not UTF-8 text: {e}") from None


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


def _objects(entries: Any, what: str, where: _Where) -> list:
    if not isinstance(entries, list):
        raise where.error(f"'{what}'", "must be a list")
    if not all(type(e) is dict for e in entries):
        k = next(k for k, e in enumerate(entries) if type(e) is not dict)
        raise where.error(f"{what}[{k}]", f"must be an object, got {type(entries[k]).__name__}")
    return entries


def _ints(entries: list, key: str, what: Any, where: _Where, required: bool = True
          ) -> np.ndarray:
    """Column ``key`` of ``entries`` as int64 (missing optional values: 0); a bad value is
    reported by the entry-by-entry check, which names the entry."""
    values = [e.get(key) for e in entries]
    arr = np.array(values) if values else np.zeros(0, np.int64)
    if arr.dtype.kind == "b" or (arr.dtype.kind not in "iu" and arr.size):
        for k, e in enumerate(entries):  # the slow path only finds and names the culprit
            _int(e, key, what(k, e), where, required)
        arr = np.array([int(v) if v is not None else 0 for v in values], np.int64)
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < -(1 << 31) or arr.max() >= 1 << 31):
        k = int(np.argmax((arr < -(1 << 31)) | (arr >= 1 << 31)))
        _int(entries[k], key, what(k, entries[k]), where, required)
    return arr


def _image_columns(doc: dict, where: _Where) -> dict:
    images = doc.get("images")
    if not isinstance(images, list):
        raise where.error("the top level", "has no 'images' list")
    images = _objects(images, "images", where)
    ids = _ints(images, "id", lambda k, e: f"images[{k}]", where)
    names = [e.get("file_name") for e in images]
    check_names(ids, names, where)
    sizes = [_ints(images, key, lambda k, e: f"images[{k}]", where, required=False)
             for key in ("height", "width")]
    return {"ids": ids, "names": names, "heights": sizes[0], "widths": sizes[1]}


def check_names(ids: np.ndarray, names: list, where: _Where) -> None:
    if not all(type(n) is str and n for n in names):
        k = next(k for k, n in enumerate(names) if type(n) is not str or not n)
        raise where.error(f"images[{k}] (id {int(ids[k])})", "has no 'file_name'")


def check_images(cols: Columns, need_size: bool, where: _Where) -> None:
    """Image ids and file names are unique; sizes are known where they are needed."""
    ids, names = cols.ids, cols.names
    uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = int(uniq[counts > 1][0])
        k = np.flatnonzero(ids == dup)[1]
        raise where.error(f"images[{k}]", f"repeats image id {dup} of "
                                          f"images[{int(first[counts > 1][0])}]")
    if len(set(names)) != len(names):
        seen: dict[str, int] = {}
        for k, n in enumerate(names):
            if n in seen:
                raise where.error(f"images[{k}]", f"repeats file_name {n!r} of "
                                                  f"images[{seen[n]}]")
            seen[n] = k
    bad = (cols.heights <= 0) | (cols.widths <= 0)
    if need_size and bad.any():
        k = int(np.argmax(bad))
        raise where.error(f"image {int(ids[k])} ({names[k]!r})", "needs a positive 'width' "
                                                                "and 'height' for ratio=True "
                                                                "and pixelwise_masks")


def _boxes(anns: list, where: _Where, what: Any) -> np.ndarray:
    raw = [a.get("bbox") for a in anns]
    try:
        arr = np.array(raw, np.float64)
        ok = arr.shape == (len(anns), 4) or (not anns)
    except (ValueError, TypeError):
        ok = False
    if not ok:
        for k, a in enumerate(anns):
            _bbox(a, what(k, a), where)
        raise where.error("'annotations'", "a 'bbox' is not 4 numbers")  # (unreachable)
    return arr.reshape(-1, 4).astype(np.float32)


# -- the fast way: msgspec against a schema of the needed fields ------------------------------


if _msgspec is not None:
    class _Image(_msgspec.Struct):
        id: int
        file_name: str
        height: int | None = None
        width: int | None = None

    class _Annotation(_msgspec.Struct):
        image_id: int
        category_id: int
        bbox: tuple[float, float, float, float]
        iscrowd: int = 0
        id: Any = None
        segmentation: _msgspec.Raw = _msgspec.Raw()

    class _Category(_msgspec.Struct):
        id: int

    class _Document(_msgspec.Struct):
        images: list[_Image]
        annotations: list[_Annotation] = []
        categories: list[_Category] = []


_DECODER: Any = None
_INT32 = (-(1 << 31), 1 << 31)


def _fast(data: bytes, where: _Where) -> Columns | None:
    """The columns, or None where the file is not in the schema's shape."""
    global _DECODER
    if _msgspec is None:
        return None
    if _DECODER is None:
        _DECODER = _msgspec.json.Decoder(_Document)
    try:
        doc = _DECODER.decode(data)
    except (_msgspec.ValidationError, _msgspec.DecodeError):
        return None
    images, anns = doc.images, doc.annotations
    n, m = len(images), len(anns)
    ids = np.fromiter((im.id for im in images), np.int64, n)
    ann_image = np.fromiter((a.image_id for a in anns), np.int64, m)
    ann_crowd = np.fromiter((a.iscrowd for a in anns), np.int64, m)
    ann_category = np.fromiter((a.category_id for a in anns), np.int64, m)
    cat_ids = [c.id for c in doc.categories]
    for arr in (ids, ann_image, ann_crowd, ann_category, np.array(cat_ids, np.int64)):
        if arr.size and (arr.min() < _INT32[0] or arr.max() >= _INT32[1]):
            return None  # the general way names the value that does not fit int32
    names = [im.file_name for im in images]
    check_names(ids, names, where)
    table: dict[int, int] = {}
    for k, c in enumerate(cat_ids):
        table.setdefault(c, k + 1)
    raw = [a.segmentation for a in anns]
    return Columns(
        ids=ids, names=names,
        heights=np.fromiter((im.height or 0 for im in images), np.int64, n),
        widths=np.fromiter((im.width or 0 for im in images), np.int64, n),
        ann_image=ann_image, ann_crowd=ann_crowd,
        ann_boxes=np.array([a.bbox for a in anns], np.float64).reshape(-1, 4)
        .astype(np.float32),
        ann_category=ann_category, ann_ids=[a.id for a in anns], categories=table,
        segmentations=lambda ks: _decode_all([raw[k] for k in ks]))


def _decode_all(raws: list) -> list:
    """Raw JSON values decoded in one call: joined into one array."""
    joined = b"[" + b",".join(bytes(r) if len(r) else b"null" for r in raws) + b"]"
    return _msgspec.json.decode(joined)


# -- the general way: any JSON, checked entry by entry ---------------------------------------


def _general(data: bytes, where: _Where) -> Columns:
    doc = _parse(data, where)
    if not isinstance(doc, dict):
        raise where.error("the top level", f"must be an object, got {type(doc).__name__}")
    im = _image_columns(doc, where)
    anns = _objects(doc.get("annotations", []), "annotations", where)
    names_by_id = dict(zip(im["ids"].tolist(), im["names"], strict=True))

    def what(k: int, a: dict) -> str:
        name = names_by_id.get(a.get("image_id"))
        return f"annotation {a.get('id', f'[{k}]')}" + (f" (image {name!r})" if name else "")

    return Columns(
        ids=im["ids"], names=im["names"], heights=im["heights"], widths=im["widths"],
        ann_image=_ints(anns, "image_id", what, where),
        ann_crowd=_ints(anns, "iscrowd", what, where, required=False),
        ann_boxes=_boxes(anns, where, what),
        ann_category=_ints(anns, "category_id", what, where),
        ann_ids=[a.get("id") for a in anns], categories=_categories(doc, where),
        segmentations=lambda ks: [anns[k].get("segmentation") for k in ks])


def read_columns(path: str, need_size: bool, who: str) -> tuple[Columns, _Where]:
    """The columns of annotation file ``path``: the fast way where it fits, else the
    general way, whose checks name what is wrong."""
    where = _Where(who, path)
    data = _read(path, who)
    cols = _fast(data, where)
    if cols is None:
        cols = _general(data, where)
    check_images(cols, need_size, where)
    return cols, where
