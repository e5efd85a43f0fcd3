"""DALI's EfficientDet TFRecord training pipeline, ported by changing its import.

The pipeline is ``EfficientDetPipeline._define_pipeline`` with its helpers
``input_tfrecord``, ``normalize_flip`` and ``random_crop_resize`` from DALI's TensorFlow
EfficientDet example (``docs/examples/use_cases/tensorflow/efficientdet/pipeline/dali/``),
written the same way: ``fn.readers.tfrecord`` of COCO-style ``tf.train.Example`` records
(``image/encoded``, ``image/height``, ``image/width``, ``image/object/bbox/xmin..ymax``,
``image/object/class/label``) -> ``fn.decoders.image`` -> boxes stacked and transposed to
``xyXY`` -> ``fn.crop_mirror_normalize`` and ``fn.bb_flip`` with one coin flip -> a random
scale in [0.1, 2.0] of the output size: ``fn.resize(size=...)`` by ``stoker.math.min`` of
the two sides' ratios, ``fn.random_bbox_crop(crop_shape=..., input_shape=...)`` in pixels,
``fn.slice(out_of_bounds_policy="pad")`` -> ``fn.box_encoder(offset=True)`` against
EfficientDet's anchors (levels 3-7, 3 scales, aspect ratios 1, 2, 1/2: 9 per location) ->
``coord_transform`` to (y, x) order, the encoded boxes and classes sliced and reshaped per
level, the boxes scaled to pixels and both boxes and classes padded to 100 with -1.

What differs from DALI's file, and why:

- ``image/height`` and ``image/width`` are read as ``FixedLenFeature([1], ...)``, not
  ``(())``: DALI 2.4 (like stoker) reads ``()`` as a scalar, which ``fn.cat`` refuses, so
  DALI's own pipeline stops there.
- ``random_bbox_crop`` gets ``shape_layout="HW"``: the shapes the example passes are
  (height, width), while the operator reads ``WH`` by default (the same on square images).
- The number of positive anchors is counted outside the pipeline (numpy), since stoker has
  no ``fn.reductions`` yet; DALI's example sums ``enc_classes != 0`` with
  ``fn.reductions.sum``.
- ``dali_tf.DALIDataset`` becomes stoker's PyTorch iterator (no TensorFlow here); DALI's
  ``device="mixed"`` decode runs on the CPU where there is no GPU, as in ``ssd_coco.py``.
- The grid mask is left out: DALI's ``gridmask`` helper computes it and returns the image
  unmasked (and is off by default, ``grid_mask: False``).

Each batch: images (B, S, S, 3) float32, boxes (B, 100, 4) float32 (ymin, xmin, ymax, xmax
in pixels of the output, -1 padding), classes (B, 100) int32 (-1 padding), then per level
3..7 the classes (B, S/2^l, S/2^l, 9) int32 (-1: background) and the encoded boxes
(B, S/2^l, S/2^l, 36) float32.

Run it::

    python examples/efficientdet_tfrecord.py --data '/coco/tfrecord/train-*' --batch-size 16
    # CPU smoke test on generated COCO-style TFRecords:
    python examples/efficientdet_tfrecord.py --images 12 --batch-size 4 --iters 3 --size 256
    # stoker against DALI's CPU backend on the same pipeline (generated data):
    stoker bench examples/efficientdet_tfrecord.py --compare dali
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import stoker.tfrecord as tfrec
from stoker import fn, math, pipeline_def, types

MAX_INSTANCES = 100


class Anchors:
    """EfficientDet's anchors (the automl repository's recipe): on levels ``min_level`` to
    ``max_level`` (stride 2^level), ``num_scales`` octave scales times the aspect ratios per
    location, each ``anchor_scale * stride * 2^(octave / num_scales)`` across, centred on
    the cells of a square ``image_size`` image. ``boxes`` are (ymin, xmin, ymax, xmax) in
    pixels, location-major (the anchors of one cell together), level after level."""

    def __init__(self, min_level=3, max_level=7, num_scales=3, aspect_ratios=(1.0, 2.0, 0.5),
                 anchor_scale=4.0, image_size=512):
        self.min_level, self.max_level = min_level, max_level
        self.per_location = num_scales * len(aspect_ratios)
        self.feat_sizes = {}
        levels = []
        for level in range(min_level, max_level + 1):
            stride = 2 ** level
            centres = np.arange(stride / 2, image_size, stride)
            self.feat_sizes[level] = len(centres)
            yc, xc = np.meshgrid(centres, centres, indexing="ij")
            per_config = []
            for octave in range(num_scales):
                base = anchor_scale * stride * 2 ** (octave / num_scales)
                for ratio in aspect_ratios:
                    half_w, half_h = base * np.sqrt(ratio) / 2, base / np.sqrt(ratio) / 2
                    per_config.append(np.stack([yc - half_h, xc - half_w, yc + half_h,
                                                xc + half_w], -1).reshape(-1, 4))
            levels.append(np.stack(per_config, 1).reshape(-1, 4))
        self.boxes = np.concatenate(levels)
        self.image_size = image_size

    def ltrb_list(self) -> list[float]:
        """The anchors relative to the image as (left, top, right, bottom), flattened: what
        ``box_encoder``'s ``anchors`` takes."""
        t, left, b, r = (self.boxes / self.image_size).T
        return np.stack([left, t, r, b], 1).reshape(-1).tolist()


def input_tfrecord(tfrecord_files, tfrecord_idxs, device, shard_id, num_shards,
                   random_shuffle=True):
    inputs = fn.readers.tfrecord(
        path=tfrecord_files,
        index_path=tfrecord_idxs,
        features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/height": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            "image/width": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0),
            "image/object/bbox/xmax": tfrec.VarLenFeature(tfrec.float32, 0.0),
            "image/object/bbox/ymin": tfrec.VarLenFeature(tfrec.float32, 0.0),
            "image/object/bbox/ymax": tfrec.VarLenFeature(tfrec.float32, 0.0),
            "image/object/class/label": tfrec.VarLenFeature(tfrec.int64, 0),
        },
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=random_shuffle,
        name="Reader",
    )
    images = fn.decoders.image(inputs["image/encoded"],
                               device="mixed" if device == "gpu" else "cpu",
                               output_type=types.RGB)
    xmin = inputs["image/object/bbox/xmin"]
    xmax = inputs["image/object/bbox/xmax"]
    ymin = inputs["image/object/bbox/ymin"]
    ymax = inputs["image/object/bbox/ymax"]
    bboxes = fn.transpose(fn.stack(xmin, ymin, xmax, ymax), perm=[1, 0])
    classes = fn.cast(inputs["image/object/class/label"], dtype=types.INT32)
    shapes = fn.cast(fn.cat(inputs["image/height"], inputs["image/width"]), dtype=types.FLOAT)
    return images, bboxes, classes, shapes


def normalize_flip(device, images, bboxes, p=0.5):
    flip = fn.random.coin_flip(probability=p)
    images = fn.crop_mirror_normalize(images,
                                      mirror=flip,
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      output_layout="HWC",
                                      device=device)
    bboxes = fn.bb_flip(bboxes, horizontal=flip, ltrb=True)
    return images, bboxes


def random_crop_resize(device, images, bboxes, classes, shapes, output_size,
                       scaling=(0.1, 2.0)):
    scale_factor = 1.0 if scaling is None else fn.random.uniform(range=scaling)
    # shapes is (height, width): the larger side fits the output at scale 1
    image_scale = math.min(scale_factor * output_size[0] / shapes[0],
                           scale_factor * output_size[1] / shapes[1])
    scaled_sizes = shapes * image_scale
    images = fn.resize(images, size=scaled_sizes, device=device)
    anchors, crop_shapes, bboxes, classes = fn.random_bbox_crop(
        bboxes,
        classes,
        crop_shape=output_size,
        input_shape=fn.cast(scaled_sizes, dtype=types.INT32),
        shape_layout="HW",
        bbox_layout="xyXY",
        allow_no_crop=False,
        total_num_attempts=64,
    )
    images = fn.slice(images, anchors, crop_shapes, normalized_anchor=False,
                      normalized_shape=False, out_of_bounds_policy="pad", device=device)
    return images, bboxes, classes


def bbox_to_effdet_format(device, bboxes, image_size):
    """Relative (x, y, X, Y) -> (y, x, Y, X) in pixels of the output."""
    h, w = image_size
    return fn.coord_transform(bboxes, M=[0.0, h, 0.0, 0.0,
                                         w, 0.0, 0.0, 0.0,
                                         0.0, 0.0, 0.0, h,
                                         0.0, 0.0, w, 0.0], device=device)


def unpack_labels(anchors, enc_bboxes, enc_classes, device):
    """The encoded boxes and classes cut per level and shaped (size, size, anchors...)."""
    bboxes_layers, classes_layers = [], []
    count = 0
    for level in range(anchors.min_level, anchors.max_level + 1):
        size = anchors.feat_sizes[level]
        steps = size * size * anchors.per_location
        bboxes_layers.append(fn.reshape(
            fn.slice(enc_bboxes, (count, 0), (steps, 4), axes=[0, 1], device=device),
            shape=[size, size, -1], device=device))
        classes_layers.append(fn.reshape(
            fn.slice(enc_classes, count, steps, axes=[0], device=device),
            shape=[size, size, -1], device=device))
        count += steps
    return bboxes_layers, classes_layers


@pipeline_def
def efficientdet_pipeline(tfrecord_files, tfrecord_idxs, image_size=512, is_training=True,
                          shard_id=0, num_shards=1, device="cpu"):
    anchors = Anchors(image_size=image_size)
    output_size = (image_size, image_size)
    images, bboxes, classes, shapes = input_tfrecord(tfrecord_files, tfrecord_idxs,
                                                     device=device, shard_id=shard_id,
                                                     num_shards=num_shards,
                                                     random_shuffle=is_training)
    images, bboxes = normalize_flip(device, images, bboxes, 0.5 if is_training else 0.0)
    images, bboxes, classes = random_crop_resize(device, images, bboxes, classes, shapes,
                                                 output_size,
                                                 (0.1, 2.0) if is_training else None)

    enc_bboxes, enc_classes = fn.box_encoder(bboxes, classes, anchors=anchors.ltrb_list(),
                                             offset=True, device=device)
    enc_classes -= 1  # background -1, the first class 0

    # (x, y, w, h) offsets -> (y, x, h, w), as EfficientDet's loss takes them
    enc_bboxes = fn.coord_transform(enc_bboxes, M=[0, 1, 0, 0,
                                                   1, 0, 0, 0,
                                                   0, 0, 0, 1,
                                                   0, 0, 1, 0], device=device)
    enc_bboxes_layers, enc_classes_layers = unpack_labels(anchors, enc_bboxes, enc_classes,
                                                          device)
    enc_layers = [item for pair in zip(enc_classes_layers, enc_bboxes_layers, strict=True)
                  for item in pair]

    bboxes = bbox_to_effdet_format(device, bboxes, output_size)
    bboxes = fn.pad(bboxes, fill_value=-1, shape=(MAX_INSTANCES, 4), device=device)
    classes = fn.pad(classes, fill_value=-1, shape=(MAX_INSTANCES,), device=device)
    return (images, bboxes, classes, *enc_layers)


def output_names(anchors: Anchors) -> list[str]:
    names = ["images", "boxes", "classes"]
    for level in range(anchors.min_level, anchors.max_level + 1):
        names += [f"classes_l{level}", f"boxes_l{level}"]
    return names


def generated_tfrecords(root: str | os.PathLike, images: int, image_size: int | None,
                        seed: int = 0) -> tuple[list[str], list[str]]:
    """COCO-style photographs with shapes (``stoker.cli.make_coco``) converted to two
    TFRecord shards with DALI's indexes beside them (``stoker.cli.coco_tfrecord``)."""
    from stoker.cli.coco_tfrecord import coco_to_tfrecord
    from stoker.cli.make_coco import make_coco_dataset

    top = image_size or 640
    file_root, ann = make_coco_dataset(pathlib.Path(root) / "coco", images=images, seed=seed,
                                       min_size=max(top * 2 // 3, 16), max_size=top,
                                       photos=True)
    return coco_to_tfrecord(file_root, ann, pathlib.Path(root) / "tfrecord")


def pipeline(batch_size=16, num_threads=4, device_id=None, seed=42):
    """For ``stoker bench examples/efficientdet_tfrecord.py``: the pipeline at 512 x 512 on
    $EFFDET_TFRECORDS (a glob of TFRecord files with ``_idx`` files beside them), or on
    256 generated COCO-sized images kept in the temporary folder for the next run. (The
    bench runs this file with stoker and with DALI, whose modules then answer to
    ``stoker``: the data is made in a fresh process.)"""
    pattern = os.environ.get("EFFDET_TFRECORDS")
    if not pattern:
        root = pathlib.Path(tempfile.gettempdir()) / "stoker-bench-effdet"
        pattern = str(root / "tfrecord" / "*.tfrecord")
        if not glob.glob(pattern + "_idx"):
            subprocess.run([sys.executable, "-c", "import sys; from stoker.cli.make_coco "
                            "import make_coco_dataset; from stoker.cli.coco_tfrecord import "
                            "coco_to_tfrecord; r = sys.argv[1]; coco_to_tfrecord(*"
                            "make_coco_dataset(r + '/coco', images=256, min_size=427, "
                            "max_size=640, photos=True), r + '/tfrecord')", str(root)],
                           check=True)
    files = sorted(glob.glob(pattern))
    return efficientdet_pipeline(files, [f + "_idx" for f in files],
                                 batch_size=batch_size, num_threads=num_threads,
                                 device_id=device_id, seed=seed)


def run(args: argparse.Namespace, files: list[str], indexes: list[str]) -> None:
    import torch

    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    device = "gpu" if args.device == "cuda" else "cpu"
    anchors = Anchors(image_size=args.size)
    pipe = efficientdet_pipeline(files, indexes, image_size=args.size, device=device,
                                 batch_size=args.batch_size, num_threads=args.num_threads,
                                 device_id=0 if device == "gpu" else None, seed=args.seed)
    names = output_names(anchors)
    loader = DALIGenericIterator(pipe, names, reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    print(f"{len(anchors.boxes)} anchors; {len(loader)} batches per epoch")
    seen, step, start = 0, 0, time.perf_counter()
    while step < args.iters:
        for batch in loader:  # one epoch (the iterator resets itself after it)
            out = batch[0]
            images, boxes, classes = out["images"], out["boxes"], out["classes"]
            # DALI's num_positives: the anchors matched to an object, per image
            positives = sum((out[f"classes_l{lv}"] >= 0).flatten(1).sum(1)
                            for lv in range(anchors.min_level, anchors.max_level + 1))
            encoded = set()
            for lv in range(anchors.min_level, anchors.max_level + 1):
                level = out[f"classes_l{lv}"]
                encoded |= set(level[level >= 0].tolist())
            real = boxes[classes >= 0]  # the objects, not the padding
            ordered = bool((real[:, 2:] >= real[:, :2]).all())
            assert torch.isfinite(images).all()
            print(f"step {step}: images shape {tuple(images.shape)} {images.dtype}, "
                  f"boxes shape {tuple(boxes.shape)} {boxes.dtype}, classes shape "
                  f"{tuple(classes.shape)} {classes.dtype}, objects {len(real)}, labels "
                  f"{sorted(set(classes[classes >= 0].tolist()))}, encoded "
                  f"{sorted(encoded)}, boxes within "
                  f"[{real.min().item() if len(real) else 0:.2f}, "
                  f"{real.max().item() if len(real) else 0:.2f}] ordered {ordered}, "
                  f"positives per image {positives.float().mean().item():.1f}")
            print("  levels " + ", ".join(f"{k} {tuple(out[k].shape)} {out[k].dtype}"
                                          for k in names[3:]))
            seen += images.shape[0]
            step += 1
            if step == args.iters:
                break
    elapsed = time.perf_counter() - start
    print(f"{seen} images in {elapsed:.2f} s ({seen / elapsed:.1f} images/s)")


def main() -> None:
    from common import add_common_args

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(parser, batch_size=16,
                    data_help="glob of TFRecord files, each with its DALI index FILE_idx")
    parser.add_argument("--size", type=int, default=512,
                        help="output image size (EfficientDet-D0: 512; a multiple of 128)")
    args = parser.parse_args()
    args.iters = args.iters if args.iters is not None else 10
    if args.size % 128:
        parser.error("--size must be a multiple of 128 (the coarsest level's stride)")
    if args.data is not None:
        files = sorted(glob.glob(args.data))
        if not files:
            parser.error(f"no file matches {args.data!r}")
        run(args, files, [f + "_idx" for f in files])
        return
    with tempfile.TemporaryDirectory(prefix="stoker-effdet-") as tmp:
        run(args, *generated_tfrecords(tmp, args.images, args.image_size, args.seed))


if __name__ == "__main__":
    main()
