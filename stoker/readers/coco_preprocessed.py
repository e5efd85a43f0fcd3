"""DALI's preprocessed COCO annotations: a folder of small binary files, both ways.

``fn.readers.coco(save_preprocessed_annotations=True, save_preprocessed_annotations_dir=D)``
writes the parsed index into D and ``preprocessed_annotations=D`` reads it back without
the JSON (DALI added it because parsing COCO's 450 MB file is slow). The files are DALI
2.4's, byte for byte, so a folder written by either library loads in the other:

* an array file is a little-endian ``uint32`` element count followed by the elements:
  int32 ``offsets``/``counts``/``labels``/``original_ids``/``masks_rles_idx``/
  ``heights``/``widths``, float32 ``boxes`` (4 per box) and ``vertices`` (2 per vertex),
  int32 triples in ``polygon_data``, int64 ``polygon_offset``/``polygons_count``/
  ``vertices_offset``/``vertices_count``/``masks_offset``/``mask_count``;
* ``masks_rles.dat``: the count, then per mask ``uint64 h, w, m`` and ``m`` uint32 runs;
* ``filenames.dat``: one file name per line.

An empty array is not written (DALI skips it too) and a missing file reads as empty. The
mask files exist only when masks were parsed, ``original_ids.dat`` only with
``image_ids=True``.
"""

from __future__ import annotations

import os

import numpy as np

from stoker.readers.coco import CocoIndex
from stoker.readers.index import DatasetError, PathTable

_ARRAYS = {  # file -> (dtype, values per element)
    "offsets.dat": (np.int32, 1), "counts.dat": (np.int32, 1), "boxes.dat": (np.float32, 1),
    "labels.dat": (np.int32, 1), "original_ids.dat": (np.int32, 1),
    "polygon_data.dat": (np.int32, 3), "polygon_offset.dat": (np.int64, 1),
    "polygons_count.dat": (np.int64, 1), "vertices.dat": (np.float32, 2),
    "vertices_offset.dat": (np.int64, 1), "vertices_count.dat": (np.int64, 1),
    "masks_rles_idx.dat": (np.int32, 1), "masks_offset.dat": (np.int64, 1),
    "mask_count.dat": (np.int64, 1), "heights.dat": (np.int32, 1), "widths.dat": (np.int32, 1),
}


def _write_array(folder: str, name: str, values: np.ndarray) -> None:
    dtype, width = _ARRAYS[name]
    data = np.ascontiguousarray(values, dtype).reshape(-1)
    if data.size == 0:
        return
    with open(os.path.join(folder, name), "wb") as f:
        f.write(np.uint32(data.size // width).tobytes())
        f.write(data.tobytes())


def _read_array(folder: str, name: str) -> np.ndarray:
    dtype, width = _ARRAYS[name]
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return np.zeros((0, width) if width > 1 else 0, dtype)
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise DatasetError(f"preprocessed annotations file {path!r} is truncated")
    count = int(np.frombuffer(data[:4], np.uint32)[0])
    need = count * width * np.dtype(dtype).itemsize
    if len(data) - 4 != need:
        raise DatasetError(f"preprocessed annotations file {path!r} should hold {count} "
                           f"elements ({need} bytes after the count), has {len(data) - 4} bytes")
    out = np.frombuffer(data, dtype, offset=4).copy()
    return out.reshape(-1, width) if width > 1 else out


def _starts(offsets: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """Per-image offsets as one (n + 1) array; the saved counts must tile the data."""
    if n == 0 or len(offsets) == 0:
        return np.zeros(n + 1, np.int64)
    return np.append(np.asarray(offsets, np.int64), int(offsets[-1]) + int(counts[-1]))


def save_preprocessed(index: CocoIndex, folder: str, polygons: bool, masks: bool,
                      image_ids: bool, who: str) -> None:
    """Writes ``index`` into ``folder`` (created if needed) in DALI's format."""
    if not folder:
        raise DatasetError(f"{who}: save_preprocessed_annotations=True needs "
                           "save_preprocessed_annotations_dir")
    os.makedirs(folder, exist_ok=True)
    n = len(index)
    names = [index.paths.name(i) for i in range(n)]
    if any("\n" in p for p in names):
        raise DatasetError(f"{who}: a file name holds a newline; it cannot be saved")
    box_off = index.box_offsets
    _write_array(folder, "offsets.dat", box_off[:-1])
    _write_array(folder, "counts.dat", np.diff(box_off))
    _write_array(folder, "boxes.dat", index.boxes)
    _write_array(folder, "labels.dat", index.labels)
    with open(os.path.join(folder, "filenames.dat"), "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in names))
    if polygons or masks:
        _write_array(folder, "polygon_data.dat", index.polygons)
        _write_array(folder, "polygon_offset.dat", index.poly_offsets[:-1])
        _write_array(folder, "polygons_count.dat", np.diff(index.poly_offsets))
        _write_array(folder, "vertices.dat", index.vertices)
        _write_array(folder, "vertices_offset.dat", index.vert_offsets[:-1])
        _write_array(folder, "vertices_count.dat", np.diff(index.vert_offsets))
    if masks:
        if index.rle_counts:
            with open(os.path.join(folder, "masks_rles.dat"), "wb") as f:
                f.write(np.uint32(len(index.rle_counts)).tobytes())
                for runs, (h, w) in zip(index.rle_counts, index.rle_sizes, strict=True):
                    f.write(np.array([h, w, len(runs)], np.uint64).tobytes())
                    f.write(np.asarray(runs, np.uint32).tobytes())
        _write_array(folder, "masks_rles_idx.dat", index.rle_objects)
        _write_array(folder, "masks_offset.dat", index.rle_offsets[:-1])
        _write_array(folder, "mask_count.dat", np.diff(index.rle_offsets))
        _write_array(folder, "heights.dat", index.heights)
        _write_array(folder, "widths.dat", index.widths)
    if image_ids:
        _write_array(folder, "original_ids.dat", index.image_ids)


def _read_rles(folder: str) -> tuple[list[np.ndarray], np.ndarray]:
    path = os.path.join(folder, "masks_rles.dat")
    if not os.path.exists(path):
        return [], np.zeros((0, 2), np.int64)
    with open(path, "rb") as f:
        data = f.read()
    try:
        count = int(np.frombuffer(data[:4], np.uint32)[0])
        pos, runs, sizes = 4, [], []
        for _ in range(count):
            h, w, m = (int(v) for v in np.frombuffer(data[pos:pos + 24], np.uint64))
            pos += 24
            if pos + 4 * m > len(data):
                raise ValueError
            runs.append(np.frombuffer(data[pos:pos + 4 * m], np.uint32).astype(np.int64))
            sizes.append((h, w))
            pos += 4 * m
    except (ValueError, IndexError):
        raise DatasetError(f"preprocessed annotations file {path!r} is truncated") from None
    return runs, np.asarray(sizes, np.int64).reshape(-1, 2)


def load_preprocessed(folder: str, root: str | None, polygons: bool, masks: bool,
                      image_ids: bool, who: str) -> CocoIndex:
    """The index saved in ``folder`` by DALI or stoker."""
    names_path = os.path.join(folder, "filenames.dat")
    if not os.path.isdir(folder) or not os.path.exists(names_path):
        raise DatasetError(f"{who}: preprocessed_annotations {folder!r} holds no "
                           "filenames.dat (save it with save_preprocessed_annotations=True)")
    with open(names_path, encoding="utf-8") as f:
        names = [line.rstrip("\n") for line in f if line.strip()]
    n = len(names)
    offsets, counts = _read_array(folder, "offsets.dat"), _read_array(folder, "counts.dat")
    boxes = _read_array(folder, "boxes.dat").reshape(-1, 4)
    labels = _read_array(folder, "labels.dat")
    if len(offsets) != n or len(counts) != n or len(boxes) != len(labels):
        raise DatasetError(f"{who}: preprocessed_annotations {folder!r} are inconsistent: "
                           f"{n} file names, {len(offsets)} offsets, {len(counts)} counts, "
                           f"{len(boxes)} boxes, {len(labels)} labels")
    ids = _read_array(folder, "original_ids.dat")
    if image_ids and len(ids) != n:
        raise DatasetError(f"{who}: preprocessed_annotations {folder!r} hold no image ids "
                           "(original_ids.dat); save them with image_ids=True")
    zeros = np.zeros(n + 1, np.int64)
    index = CocoIndex(
        paths=PathTable(root, names), image_ids=ids if len(ids) == n else np.zeros(n, np.int32),
        heights=np.zeros(n, np.int32), widths=np.zeros(n, np.int32),
        box_offsets=_starts(offsets, counts, n), boxes=boxes, labels=labels,
        poly_offsets=zeros, polygons=np.zeros((0, 3), np.int32), vert_offsets=zeros,
        vertices=np.zeros((0, 2), np.float32), rle_offsets=zeros,
        rle_objects=np.zeros(0, np.int32))
    if polygons or masks:
        index.polygons = _read_array(folder, "polygon_data.dat").reshape(-1, 3)
        index.poly_offsets = _starts(_read_array(folder, "polygon_offset.dat"),
                                     _read_array(folder, "polygons_count.dat"), n)
        index.vertices = _read_array(folder, "vertices.dat").reshape(-1, 2)
        index.vert_offsets = _starts(_read_array(folder, "vertices_offset.dat"),
                                     _read_array(folder, "vertices_count.dat"), n)
    if masks:
        heights, widths = _read_array(folder, "heights.dat"), _read_array(folder, "widths.dat")
        if len(heights) != n or len(widths) != n:
            raise DatasetError(f"{who}: preprocessed_annotations {folder!r} hold no image "
                               "sizes (heights.dat, widths.dat); save them with "
                               "pixelwise_masks=True")
        index.heights, index.widths = heights, widths
        index.rle_counts, index.rle_sizes = _read_rles(folder)
        index.rle_objects = _read_array(folder, "masks_rles_idx.dat")
        index.rle_offsets = _starts(_read_array(folder, "masks_offset.dat"),
                                    _read_array(folder, "mask_count.dat"), n)
    return index
