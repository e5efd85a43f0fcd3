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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stoker.readers.coco_json import Columns, _polygons, _rle, _Where, read_columns
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


def _lookup(keys: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index into ``table`` (unique values) of each key, and whether it is there."""
    order = np.argsort(table, kind="stable")
    pos = np.searchsorted(table[order], keys)
    pos = np.minimum(pos, max(len(table) - 1, 0))
    found = (table[order][pos] == keys) if len(table) else np.zeros(len(keys), bool)
    return order[pos] if len(table) else pos, found


def parse_coco(path: str, root: str | None, opts: CocoOptions, who: str) -> CocoIndex:
    """The index of the COCO annotation file ``path`` (images relative to ``root``)."""
    cols, where = read_columns(path, opts.ratio or opts.rles, who)
    ids, names = cols.ids, cols.names
    if opts.images is not None:
        by_name = {n: k for k, n in enumerate(names)}
        missing = [p for p in opts.images if p not in by_name]
        if missing:
            raise DatasetError(f"{who}: argument 'images' names {len(missing)} file(s) that "
                               f"annotations_file {path!r} does not list, e.g. {missing[0]!r}")
        order = np.array([by_name[p] for p in opts.images], np.int64)
    else:
        order = np.argsort(ids, kind="stable")
    image_of, known = _lookup(cols.ann_image, ids)

    def what(k: int) -> str:
        name = f" (image {names[image_of[k]]!r})" if known[k] else ""
        label = cols.ann_ids[k] if cols.ann_ids[k] is not None else f"[{k}]"
        return f"annotation {label}{name}"

    crowd, boxes = cols.ann_crowd, cols.ann_boxes
    threshold = np.float32(opts.size_threshold)
    # Annotations of images not in the file are ignored (a subset's image list), as in DALI.
    keep = known & ((crowd == 0) | opts.include_iscrowd)
    keep &= (boxes[:, 2] >= threshold) & (boxes[:, 3] >= threshold)
    categories = cols.ann_category
    labels = categories.copy()
    if not opts.avoid_class_remapping:
        table = cols.categories
        cat_ids = np.array(list(table), np.int64)
        slot, found = _lookup(categories, cat_ids)
        bad = keep & ~found
        if bad.any():
            k = int(np.argmax(bad))
            raise where.error(what(k), f"category_id {int(categories[k])} is not in "
                              "'categories' (DALI would label it 0, the background)")
        labels = np.array(list(table.values()), np.int64)[slot] if len(cat_ids) else labels
    # The kept annotations grouped by image, in file order within an image.
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(image_of[kept], kind="stable")]
    per_image = np.bincount(image_of[kept], minlength=len(ids))
    first = np.concatenate([[0], np.cumsum(per_image)])[:-1]
    if opts.skip_empty:
        order = order[per_image[order] > 0]
    if len(order) == 0:
        raise DatasetError(f"{who}: annotations_file {path!r} gives no images to read"
                           + (" (skip_empty=True left none)" if len(ids) else ""))
    counts = per_image[order]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    gather = np.repeat(first[order] - offsets[:-1], counts) + np.arange(offsets[-1])
    chosen = kept[gather]  # annotation indices in output order
    owner = np.repeat(np.arange(len(order)), counts)  # output image of each
    raw = boxes[chosen]
    out = raw.copy()
    if opts.ltrb:
        out[:, 2:] += out[:, :2]
    widths = cols.widths[order].astype(np.float32)
    heights = cols.heights[order].astype(np.float32)
    if opts.ratio:
        out[:, 0::2] /= widths[owner][:, None]
        out[:, 1::2] /= heights[owner][:, None]
    index = CocoIndex(
        paths=PathTable(root, [names[k] for k in order.tolist()]),
        image_ids=ids[order].astype(np.int32), heights=cols.heights[order].astype(np.int32),
        widths=cols.widths[order].astype(np.int32), box_offsets=offsets, boxes=out,
        labels=labels[chosen].astype(np.int32), poly_offsets=np.zeros(len(order) + 1, np.int64),
        polygons=np.zeros((0, 3), np.int32), vert_offsets=np.zeros(len(order) + 1, np.int64),
        vertices=np.zeros((0, 2), np.float32), rle_offsets=np.zeros(len(order) + 1, np.int64),
        rle_objects=np.zeros(0, np.int32))
    _problems(index, raw, owner, chosen, what)
    if opts.polygons or opts.rles:
        _masks(index, cols, chosen, owner, offsets, opts, where, what)
    return index


def _problems(index: CocoIndex, raw: np.ndarray, owner: np.ndarray, chosen: np.ndarray,
              what: Any) -> None:
    """Images with a box outside them (beyond BOX_TOLERANCE), with the first reason."""
    w = index.widths[owner].astype(np.float64)
    h = index.heights[owner].astype(np.float64)
    x, y, bw, bh = (raw[:, k].astype(np.float64) for k in range(4))
    tol = BOX_TOLERANCE
    sized = (w > 0) & (h > 0)
    bad = sized & ((bw < 0) | (bh < 0) | (x < -tol) | (y < -tol) | (x + bw > w + tol) |
                   (y + bh > h + tol))
    for j in np.flatnonzero(bad).tolist():
        image = int(owner[j])
        if image not in index.problems:
            index.problems[image] = (
                f"{what(int(chosen[j]))}: box [x, y, w, h] = [{x[j]:g}, {y[j]:g}, {bw[j]:g}, "
                f"{bh[j]:g}] lies outside its {int(w[j])} x {int(h[j])} image")


def _masks(index: CocoIndex, cols: Columns, chosen: np.ndarray, owner: np.ndarray,
           offsets: np.ndarray, opts: CocoOptions, where: _Where, what: Any) -> None:
    """Polygons (and, for pixelwise masks, RLEs) of the chosen annotations, in one pass
    over their coordinates; a malformed polygon is found and named entry by entry."""
    n_images = len(index)
    picked = chosen.tolist()
    segs = cols.segmentations(picked)
    obj_of = np.arange(len(picked)) - offsets[owner]  # object index within its image
    poly_rows = [j for j, seg in enumerate(segs) if type(seg) is list] if opts.polygons else []
    try:
        counts = [len(segs[j]) for j in poly_rows]
        lengths = [len(p) for j in poly_rows for p in segs[j]]
        coords = np.array([v for j in poly_rows for p in segs[j] for v in p], np.float64)
        ok = coords.ndim == 1 and not any(n % 2 for n in lengths)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        for j in poly_rows:
            _polygons(segs[j], what(picked[j]), where)
    row_of_poly = np.repeat(np.asarray(poly_rows, np.int64), counts) if poly_rows else \
        np.zeros(0, np.int64)
    nverts = np.asarray(lengths, np.int64) // 2
    image_of_poly = owner[row_of_poly]
    verts_per_image = np.bincount(image_of_poly, weights=nverts, minlength=n_images)
    vert_off = np.concatenate([[0], np.cumsum(verts_per_image)]).astype(np.int64)
    abs_start = np.concatenate([[0], np.cumsum(nverts)])[:-1].astype(np.int64)
    rel_start = abs_start - vert_off[image_of_poly]
    index.polygons = np.stack([obj_of[row_of_poly], rel_start, rel_start + nverts], 1) \
        .astype(np.int32).reshape(-1, 3)
    index.poly_offsets = np.concatenate(
        [[0], np.cumsum(np.bincount(image_of_poly, minlength=n_images))]).astype(np.int64)
    index.vert_offsets = vert_off
    vertices = coords.astype(np.float32).reshape(-1, 2)  # float32 first, as DALI stores them
    if opts.ratio:
        image_of_vert = np.repeat(image_of_poly, nverts)
        scale = np.stack([index.widths, index.heights], 1).astype(np.float32)[image_of_vert]
        index.pixel_vertices = vertices if opts.rles else None
        vertices = vertices / scale
    index.vertices = vertices
    rle_rows = [j for j, seg in enumerate(segs) if type(seg) is dict] if opts.rles else []
    index.rle_counts, sizes, objects, images = [], [], [], []
    for j in rle_rows:
        image = int(owner[j])
        runs, size = _rle(segs[j], what(picked[j]), where,
                          {"height": int(index.heights[image]),
                           "width": int(index.widths[image])})
        index.rle_counts.append(runs)
        sizes.append(size)
        objects.append(int(obj_of[j]))
        images.append(image)
    index.rle_objects = np.asarray(objects, np.int32)
    index.rle_sizes = np.asarray(sizes, np.int64).reshape(-1, 2)
    index.rle_offsets = np.concatenate(
        [[0], np.cumsum(np.bincount(np.asarray(images, np.int64), minlength=n_images))]
    ).astype(np.int64)
