"""``fn.readers.coco``: images and their boxes, labels and masks from a COCO dataset.

Outputs, in DALI 2.4's order and types: the encoded image bytes (uint8), boxes (float32
``(M, 4)``), labels (int32 ``(M,)``), then ``polygons`` (int32 ``(P, 3)``) and
``vertices`` (float32 ``(V, 2)``) with ``polygon_masks``, or ``pixelwise_masks`` (int32
``(H, W, 1)``, layout HWC) with ``pixelwise_masks``, then ``image_ids`` (int32 ``(1,)``)
with ``image_ids``. ``stoker/readers/coco.py`` holds the annotation rules; sharding,
shuffling, epochs, checkpoints and ``on_error="skip"`` are ``fn.readers.file``'s
(``FileReader``), whose sample list here is the images of the annotation file.

Where stoker differs from DALI 2.4 on purpose: errors for annotations DALI reads
silently (see ``readers/coco.py``); an image with a box outside it fails the build, or is
skipped and reported under ``on_error="skip"``; pixelwise masks count every polygon and
RLE of every object and are rasterised in pixels also with ``ratio=True`` (DALI drops
some masks, see ``coco_rle.pixelwise_mask``, and rasterises the relative vertices).
"""

from __future__ import annotations

import pathlib
import warnings
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, SampleError
from stoker.executor.context import FAILED
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.file import FileReader
from stoker.readers.coco import CocoIndex, CocoOptions, parse_coco
from stoker.readers.coco_preprocessed import load_preprocessed, save_preprocessed
from stoker.readers.coco_rle import pixelwise_mask
from stoker.readers.index import DatasetError, SampleIndex
from stoker.readers.sharding import check_shards

_FN = "fn.readers.coco"


def _polygons_on(args: dict) -> bool:
    return bool(args.get("polygon_masks") or args.get("masks"))


class CocoReader(FileReader):
    """readers.file's source over the images of a COCO annotation file; the sample list
    it reads holds each image's position in ``self.coco``, whose rows become the outputs."""

    coco: CocoIndex

    def _build_index(self) -> SampleIndex:
        a, who = self.args, self._who()
        polygons, masks, ids = _polygons_on(a), a["pixelwise_masks"], a["image_ids"]
        if a.get("preprocessed_annotations"):
            coco = load_preprocessed(a["preprocessed_annotations"], a["file_root"], polygons,
                                     masks, ids, who)
            if masks and a["ratio"]:
                _pixel_vertices_from_ratio(coco)
        else:
            opts = CocoOptions(
                ltrb=a["ltrb"], ratio=a["ratio"], size_threshold=a["size_threshold"],
                include_iscrowd=a["include_iscrowd"], skip_empty=a["skip_empty"],
                avoid_class_remapping=a["avoid_class_remapping"],
                images=tuple(a["images"]) if a.get("images") is not None else None,
                polygons=polygons or masks, rles=masks)
            coco = parse_coco(a["annotations_file"], a["file_root"], opts, who)
        if a["save_preprocessed_annotations"]:
            save_preprocessed(coco, a["save_preprocessed_annotations_dir"], polygons, masks,
                              ids, who)
        check_shards(len(coco), a["num_shards"], a["shard_id"], who)
        if coco.problems and self._on_error() != "skip":
            first = min(coco.problems)
            raise DatasetError(
                f"{who}: annotations_file {a['annotations_file']!r}, "
                f"{coco.problems[first]} ({len(coco.problems)} image(s) have such boxes; fix "
                "the file, or build the pipeline with on_error='skip' to leave them out)")
        self.coco = coco
        return SampleIndex(coco.paths, np.arange(len(coco), dtype=np.int32))

    def _on_error(self) -> str:
        pipe = self._pipeline() if self._pipeline is not None else None
        return getattr(pipe, "_on_error", "raise")

    def _read_error(self, e: OSError) -> SampleError:
        path = e.filename or "?"
        return SampleError(f"{self._who()}: cannot read image file {path!r}: "
                           f"{e.strerror or e}", op=_FN, source=str(path), where=self.op.where)

    def next_batch(self, bctx: Any) -> tuple[list, list[str]]:
        (data, rows), names = super().next_batch(bctx)
        a, coco = self.args, self.coco
        polygons, masks, ids = _polygons_on(a), a["pixelwise_masks"], a["image_ids"]
        n_out = 3 + 2 * polygons + masks + ids
        outs: list[list] = [list(data)] + [[] for _ in range(n_out - 1)]
        for row, image in enumerate(rows[:, 0].tolist()):
            if data[row] is FAILED or (image in coco.problems and bctx.fail(
                    row, f"{self._who()}: {coco.problems[image]}")):
                for out in outs[1:]:
                    out.append(FAILED)
                continue
            b, p, v, r = coco.sample(image)
            got = [coco.boxes[b].copy(), coco.labels[b].copy()]
            if polygons:
                poly = coco.polygons[p].copy()
                if a.get("masks") and not a.get("polygon_masks"):
                    poly[:, 1:] *= 2  # DALI's deprecated format counts coordinates
                got += [poly, coco.vertices[v].copy()]
            if masks:
                verts = coco.pixel_vertices if coco.pixel_vertices is not None else coco.vertices
                got.append(pixelwise_mask(int(coco.heights[image]), int(coco.widths[image]),
                                          coco.labels[b], coco.polygons[p], verts[v],
                                          coco.rle_objects[r], coco.rle_counts[r]))
            if ids:
                got.append(np.array([coco.image_ids[image]], np.int32))
            for out, value in zip(outs[1:], got, strict=True):
                out.append(value)
        return outs, names


def _pixel_vertices_from_ratio(coco: CocoIndex) -> None:
    """Pixel coordinates of vertices saved relative to their image (ratio=True)."""
    sizes = np.zeros((len(coco.vertices), 2), np.float64)
    for i in range(len(coco)):
        sizes[coco.vert_offsets[i]:coco.vert_offsets[i + 1]] = (coco.widths[i], coco.heights[i])
    coco.pixel_vertices = (coco.vertices.astype(np.float64) * sizes).astype(np.float32)


def _check(args: dict) -> None:
    given = args["_given"]
    if args.get("file_root") is None:
        raise ArgumentError(f"{_FN}: missing argument 'file_root', the folder the images' "
                            "file names are relative to")
    pre = args.get("preprocessed_annotations")
    if pre and args.get("annotations_file"):
        raise ArgumentError(f"{_FN}: give 'annotations_file' or 'preprocessed_annotations', "
                            "not both")
    if not pre and not args.get("annotations_file"):
        raise ArgumentError(f"{_FN}: give the COCO annotations as 'annotations_file' (a JSON "
                            "file) or 'preprocessed_annotations' (a folder saved with "
                            "save_preprocessed_annotations=True)")
    if pre and args.get("images") is not None:
        raise ArgumentError(f"{_FN}: 'images' cannot be combined with "
                            "'preprocessed_annotations' (the saved list is fixed)")
    if _polygons_on(args) and args.get("pixelwise_masks"):
        raise ArgumentError(f"{_FN}: 'polygon_masks' and 'pixelwise_masks' are mutually "
                            "exclusive")
    if args.get("skip_cached_images"):
        raise ArgumentError(f"{_FN}: 'skip_cached_images' is not supported by this reader "
                            "(as in DALI)")
    if args.get("save_preprocessed_annotations") and not args.get(
            "save_preprocessed_annotations_dir"):
        raise ArgumentError(f"{_FN}: save_preprocessed_annotations=True needs "
                            "'save_preprocessed_annotations_dir'")
    if "masks" in given and args.get("masks"):
        warnings.warn(f"{_FN}: 'masks' is deprecated; use polygon_masks=True, whose polygons "
                      "count vertices instead of coordinates (DALI: 'Use `polygon_masks` "
                      "instead')", DeprecationWarning, stacklevel=4)
    check_reader_args(_FN, args, random_with_epoch_shuffle=False)


def _n_outputs(args: dict) -> int:
    return 3 + 2 * _polygons_on(args) + bool(args.get("pixelwise_masks")) + \
        bool(args.get("image_ids"))


def _dtypes(in_dtypes: list, args: dict) -> list:
    out = [np.dtype(np.uint8), np.dtype(np.float32), np.dtype(np.int32)]
    if _polygons_on(args):
        out += [np.dtype(np.int32), np.dtype(np.float32)]
    if args.get("pixelwise_masks"):
        out.append(np.dtype(np.int32))
    if args.get("image_ids"):
        out.append(np.dtype(np.int32))
    return out


def _layouts(in_layouts: list, args: dict) -> list:
    out = ["", "", ""] + ["", ""] * _polygons_on(args)
    if args.get("pixelwise_masks"):
        out.append("HWC")
    return out + [""] * bool(args.get("image_ids"))


# A tiny annotation file listing stoker's own sources as "images" (readers don't decode).
_EXAMPLE_ROOT = str(pathlib.Path(__file__).resolve().parents[2] / "readers")
_EXAMPLE_JSON = str(pathlib.Path(_EXAMPLE_ROOT) / "coco_example.json")
_EX = {"file_root": _EXAMPLE_ROOT, "annotations_file": _EXAMPLE_JSON}

SCHEMA = register(OpSchema(
    name="readers.coco",
    doc="Reads a COCO dataset: each image's encoded bytes, its boxes (xywh or ltrb, in "
        "pixels or relative), labels, and optionally polygon or pixelwise masks and the "
        "image id.",
    args=(
        Arg("file_root", "str", None, "Folder the images' file_name paths are relative to."),
        Arg("annotations_file", "str", "", "The COCO JSON annotation file."),
        Arg("ltrb", "bool", False, "Boxes as [left, top, right, bottom] instead of "
            "[x, y, width, height]."),
        Arg("ratio", "bool", False, "Boxes and polygon vertices relative to the image size."),
        Arg("skip_empty", "bool", False, "Leave out images without (kept) annotations."),
        Arg("size_threshold", "float", 0.1, "Drop objects narrower or lower than this many "
            "pixels."),
        Arg("polygon_masks", "bool", False, "Output polygons and vertices of the masks."),
        Arg("pixelwise_masks", "bool", False, "Output an (H, W, 1) int32 label map."),
        Arg("masks", "bool", False, "Deprecated: polygon_masks with polygons counting "
            "coordinates instead of vertices."),
        Arg("image_ids", "bool", False, "Output each image's COCO id."),
        Arg("images", "strs", None, "Read these files (as named in the annotations), in this "
            "order, repeats included, instead of every image sorted by id."),
        Arg("include_iscrowd", "bool", True, "Keep annotations marked iscrowd=1."),
        Arg("avoid_class_remapping", "bool", False, "Labels are the raw category ids instead "
            "of 1..N in the order of 'categories'."),
        Arg("preprocessed_annotations", "str", "", "Folder of annotations saved with "
            "save_preprocessed_annotations (DALI's format), read instead of the JSON."),
        Arg("save_preprocessed_annotations", "bool", False, "Save the parsed annotations "
            "(DALI's format) into save_preprocessed_annotations_dir."),
        Arg("save_preprocessed_annotations_dir", "str", "", "Where to save them."),
        *reader_args(containers=False),
    ),
    num_outputs=_n_outputs,
    stage="source",
    instance=CocoReader,
    random=False,
    layout=_layouts,
    dtype=_dtypes,
    check=_check,
    renamed={"save_img_ids": "image_ids", "dump_meta_files": "save_preprocessed_annotations",
             "dump_meta_files_path": "save_preprocessed_annotations_dir",
             "meta_files_path": "preprocessed_annotations"},
    examples=(
        Example(args=dict(_EX)),
        Example(args={**_EX, "ltrb": True, "ratio": True, "polygon_masks": True,
                      "image_ids": True}),
        Example(args={**_EX, "pixelwise_masks": True, "skip_empty": True}),
        Example(args={**_EX, "polygon_masks": True, "pixelwise_masks": True},
                raises=ArgumentError, match="mutually exclusive"),
    ),
))
