"""DALI's SSD300 COCO training pipeline, ported by changing its import.

The pipeline is ``create_coco_pipeline`` from DALI's PyTorch single-stage-detector example
(``docs/examples/use_cases/pytorch/single_stage_detector/src/coco_pipeline.py``), written
the same way: ``fn.readers.coco(ratio=True, ltrb=True, skip_empty=True,
shuffle_after_epoch=True)`` -> ``fn.random_bbox_crop`` (SSD's IoU thresholds, 50 attempts)
-> ``fn.decoders.image_slice`` on the crop window -> ``fn.resize`` to 300 x 300 ->
``fn.hsv`` + ``fn.brightness_contrast`` with random factors -> ``fn.bb_flip`` and
``fn.crop_mirror_normalize`` with one coin flip -> ``fn.box_encoder`` against SSD300's 8732
default boxes. The one change besides the import: DALI's example decodes with
``device="mixed"`` and moves boxes and labels ``.gpu()``; here ``device`` chooses, and on
the CPU (the default without CUDA) everything runs on the CPU.

Each batch is images (B, 3, 300, 300) float32, encoded boxes (B, 8732, 4) as
(cx, cy, w, h) of the matched ground truth (the anchor itself where unmatched, as DALI's
box_encoder gives them) and labels (B, 8732) int32, 0 for background.

Run it::

    python examples/ssd_coco.py --data /coco/train2017 \\
        --annotations /coco/annotations/instances_train2017.json --batch-size 32
    # CPU smoke test on a generated COCO-style dataset:
    python examples/ssd_coco.py --images 12 --batch-size 4 --iters 3
    # stoker against DALI's CPU backend on the same pipeline (generated data):
    stoker bench examples/ssd_coco.py --compare dali
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

from stoker import fn, pipeline_def, types


class DefaultBoxes:
    """SSD300's default boxes (anchors) for COCO: 6 feature maps, 4 or 6 boxes per cell,
    8732 in all, as relative (cx, cy, w, h) clipped to [0, 1] (the SSD paper's recipe
    with MLPerf's sizes)."""

    def __init__(self, fig_size=300, feat_size=(38, 19, 10, 5, 3, 1),
                 steps=(8, 16, 32, 64, 100, 300), scales=(21, 45, 99, 153, 207, 261, 315),
                 aspect_ratios=((2,), (2, 3), (2, 3), (2, 3), (2,), (2,))):
        boxes = []
        for k, fs in enumerate(feat_size):
            fk = fig_size / steps[k]
            sk1, sk2 = scales[k] / fig_size, scales[k + 1] / fig_size
            sizes = [(sk1, sk1), (math.sqrt(sk1 * sk2), math.sqrt(sk1 * sk2))]
            for alpha in aspect_ratios[k]:
                w, h = sk1 * math.sqrt(alpha), sk1 / math.sqrt(alpha)
                sizes += [(w, h), (h, w)]
            for w, h in sizes:
                for i, j in itertools.product(range(fs), repeat=2):
                    boxes.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
        self.xywh = np.clip(np.array(boxes, np.float64), 0, 1)

    def as_ltrb_list(self) -> list[float]:
        cx, cy, w, h = self.xywh.T
        return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).reshape(-1).tolist()


@pipeline_def
def create_coco_pipeline(default_boxes, file_root, annotations_file, shard_id=0, num_shards=1,
                         device="cpu", fp16=False):
    images, bboxes, labels = fn.readers.coco(file_root=file_root,
                                             annotations_file=annotations_file,
                                             skip_empty=True,
                                             shard_id=shard_id,
                                             num_shards=num_shards,
                                             ratio=True,
                                             ltrb=True,
                                             random_shuffle=False,
                                             shuffle_after_epoch=True,
                                             name="Reader")

    crop_begin, crop_size, bboxes, labels = fn.random_bbox_crop(bboxes, labels,
                                                                device="cpu",
                                                                aspect_ratio=[0.5, 2.0],
                                                                thresholds=[0, 0.1, 0.3, 0.5,
                                                                            0.7, 0.9],
                                                                scaling=[0.3, 1.0],
                                                                bbox_layout="xyXY",
                                                                allow_no_crop=True,
                                                                num_attempts=50)
    decoder_device = "mixed" if device == "gpu" else "cpu"
    images = fn.decoders.image_slice(images, crop_begin, crop_size, device=decoder_device,
                                     output_type=types.RGB)
    flip_coin = fn.random.coin_flip(probability=0.5)
    images = fn.resize(images,
                       resize_x=300,
                       resize_y=300,
                       min_filter=types.DALIInterpType.INTERP_TRIANGULAR)

    saturation = fn.random.uniform(range=[0.5, 1.5])
    contrast = fn.random.uniform(range=[0.5, 1.5])
    brightness = fn.random.uniform(range=[0.875, 1.125])
    hue = fn.random.uniform(range=[-0.5, 0.5])

    # float avoids clipping and quantizing the intermediate result
    images = fn.hsv(images, dtype=types.FLOAT, hue=hue, saturation=saturation)
    images = fn.brightness_contrast(images,
                                    contrast_center=128,  # input is float, in 0..255
                                    dtype=types.UINT8,
                                    brightness=brightness,
                                    contrast=contrast)

    dtype = types.FLOAT16 if fp16 else types.FLOAT

    bboxes = fn.bb_flip(bboxes, ltrb=True, horizontal=flip_coin)
    images = fn.crop_mirror_normalize(images,
                                      crop=(300, 300),
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      mirror=flip_coin,
                                      dtype=dtype,
                                      output_layout="CHW",
                                      pad_output=False)

    bboxes, labels = fn.box_encoder(bboxes, labels,
                                    criteria=0.5,
                                    anchors=default_boxes.as_ltrb_list())
    if device == "gpu":
        labels = labels.gpu()
        bboxes = bboxes.gpu()

    return images, bboxes, labels


def generated_coco(root: str | os.PathLike, images: int, image_size: int | None,
                   seed: int = 0) -> tuple[str, str]:
    """A COCO-style dataset (``stoker.cli.make_coco``): photographs with shapes on them."""
    from stoker.cli.make_coco import make_coco_dataset

    top = image_size or 480
    return make_coco_dataset(root, images=images, seed=seed, min_size=max(top * 2 // 3, 16),
                             max_size=top, photos=True)


def pipeline(batch_size=32, num_threads=4, device_id=None, seed=42):
    """For ``stoker bench examples/ssd_coco.py``: the SSD pipeline on $SSD_COCO_ROOT
    (``images/`` and ``annotations.json``), or on 256 generated COCO-sized images kept in
    the temporary folder for the next run. (The bench runs this file with stoker and with
    DALI, whose modules then answer to ``stoker``: the data is made in a fresh process.)"""
    root = os.environ.get("SSD_COCO_ROOT")
    if not root:
        root = str(pathlib.Path(tempfile.gettempdir()) / "stoker-bench-ssd-coco")
        if not os.path.exists(os.path.join(root, "annotations.json")):
            subprocess.run([sys.executable, "-c", "import sys; from stoker.cli.make_coco "
                            "import make_coco_dataset; make_coco_dataset(sys.argv[1], "
                            "images=256, min_size=427, max_size=640, photos=True)", root],
                           check=True)
    return create_coco_pipeline(DefaultBoxes(), os.path.join(root, "images"),
                                os.path.join(root, "annotations.json"),
                                batch_size=batch_size, num_threads=num_threads,
                                device_id=device_id, seed=seed)


def run(args: argparse.Namespace, file_root: str, annotations: str) -> None:
    import torch

    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    device = "gpu" if args.device == "cuda" else "cpu"
    dboxes = DefaultBoxes()
    pipe = create_coco_pipeline(dboxes, file_root, annotations, device=device,
                                batch_size=args.batch_size, num_threads=args.num_threads,
                                device_id=0 if device == "gpu" else None, seed=args.seed)
    loader = DALIGenericIterator(pipe, ["images", "boxes", "labels"], reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    print(f"{len(dboxes.xywh)} default boxes; {len(loader)} batches per epoch")
    seen, step, start = 0, 0, time.perf_counter()
    while step < args.iters:
        for batch in loader:  # one epoch (the iterator resets itself after it)
            images, boxes, labels = (batch[0][k] for k in ("images", "boxes", "labels"))
            positives = (labels > 0).sum(dim=1).float()
            assert torch.isfinite(images).all() and torch.isfinite(boxes).all()
            print(f"step {step}: images shape {tuple(images.shape)} {images.dtype}, boxes "
                  f"shape {tuple(boxes.shape)}, labels shape {tuple(labels.shape)}, "
                  f"positives per image {positives.mean().item():.1f}")
            seen += images.shape[0]
            step += 1
            if step == args.iters:
                break
    elapsed = time.perf_counter() - start
    print(f"{seen} images in {elapsed:.2f} s ({seen / elapsed:.1f} images/s)")


def main() -> None:
    from common import add_common_args

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(parser, batch_size=32, data_help="COCO image folder (train2017)")
    parser.add_argument("--annotations", help="COCO annotation file (with --data)")
    args = parser.parse_args()
    args.iters = args.iters if args.iters is not None else 10
    if args.data is not None:
        if args.annotations is None:
            parser.error("--data needs --annotations")
        run(args, args.data, args.annotations)
        return
    with tempfile.TemporaryDirectory(prefix="stoker-ssd-") as tmp:
        file_root, ann = generated_coco(tmp, args.images, args.image_size, args.seed)
        run(args, file_root, ann)


if __name__ == "__main__":
    main()
