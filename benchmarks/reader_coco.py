"""``fn.readers.coco``, stoker vs DALI in one run: build time over a big annotation file,
and reading throughput (no decoding) on a generated COCO-style dataset.

``--build``: writes a COCO JSON of ``--images`` images with ``--per-image`` polygon
annotations each (no image files: neither library opens one before the first run) and
times a fresh pipeline's ``fn.readers.coco`` call + ``build()``, alternating libraries.
``--read`` (default): reads ``--batches`` batches of images, boxes and labels (and, with
``--masks``, polygons) from a 256-image dataset, after one warm-up batch, alternating
libraries. Prints the medians and stoker's speed relative to DALI's.

    PYTHONPATH=. /work/dali-venv/bin/python benchmarks/reader_coco.py [--build] [--masks]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import time
import types


def libraries() -> dict:
    import stoker

    libs = {"stoker": types.SimpleNamespace(fn=stoker.fn, pipeline_def=stoker.pipeline_def)}
    try:
        import nvidia.dali.fn as dali_fn
        from nvidia.dali import pipeline_def as dali_pipeline_def
    except ImportError:
        print("nvidia.dali is not importable here: timing stoker only")
    else:
        libs["DALI"] = types.SimpleNamespace(fn=dali_fn, pipeline_def=dali_pipeline_def)
    return libs


def big_annotations(path: str, images: int, per_image: int) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    imgs = [{"id": i + 1, "file_name": f"{i + 1:012d}.jpg", "height": 480, "width": 640}
            for i in range(images)]
    anns = []
    for i in range(images):
        for _ in range(per_image):
            x, y = rng.uniform(0, 500), rng.uniform(0, 350)
            w, h = rng.uniform(5, 130), rng.uniform(5, 120)
            poly = [x, y, x + w, y, x + w, y + h, x, y + h]
            anns.append({"id": len(anns) + 1, "image_id": i + 1,
                         "category_id": int(rng.integers(1, 81)),
                         "bbox": [round(v, 2) for v in (x, y, w, h)], "iscrowd": 0,
                         "area": round(w * h, 2),
                         "segmentation": [[round(v, 2) for v in poly]]})
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, 81)]
    with open(path, "w") as f:
        json.dump({"images": imgs, "annotations": anns, "categories": cats}, f)


def _pipe(lib, root: str, ann: str, batch: int, masks: bool):
    @lib.pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=1)
    def pipe():
        return tuple(lib.fn.readers.coco(file_root=root, annotations_file=ann, ratio=True,
                                         ltrb=True, polygon_masks=masks, name="Reader"))
    return pipe()


def bench_build(images: int, per_image: int, reps: int, masks: bool) -> None:
    libs = libraries()
    with tempfile.TemporaryDirectory() as tmp:
        ann = os.path.join(tmp, "annotations.json")
        big_annotations(ann, images, per_image)
        size_mb = os.path.getsize(ann) / 2**20
        times: dict[str, list[float]] = {name: [] for name in libs}
        for _ in range(reps):
            for name, lib in libs.items():
                gc.collect()
                t0 = time.perf_counter()
                p = _pipe(lib, tmp, ann, 32, masks)
                p.build()
                times[name].append(time.perf_counter() - t0)
                del p
    print(f"build over {images} images, {images * per_image} annotations ({size_mb:.0f} MB), "
          f"polygon_masks={masks}: median of {reps}")
    report(times, "s", lower_is_better=True)


def bench_read(batches: int, reps: int, masks: bool) -> None:
    from stoker.cli.make_coco import make_coco_dataset

    libs = libraries()
    root = os.path.join(tempfile.gettempdir(), "stoker-bench-ssd-coco")
    if not os.path.exists(os.path.join(root, "annotations.json")):
        make_coco_dataset(root, images=256, min_size=427, max_size=640, photos=True)
    file_root, ann = os.path.join(root, "images"), os.path.join(root, "annotations.json")
    rates: dict[str, list[float]] = {name: [] for name in libs}
    pipes = {name: _pipe(lib, file_root, ann, 64, masks) for name, lib in libs.items()}
    for p in pipes.values():
        p.build()
        p.run()  # warm-up (page cache, first allocations)
    for _ in range(reps):
        for name, p in pipes.items():
            t0 = time.perf_counter()
            for _ in range(batches):
                p.run()
            rates[name].append(batches * 64 / (time.perf_counter() - t0))
    print(f"reading {batches} batches of 64 (images undecoded, boxes, labels"
          f"{', polygons' if masks else ''}): median of {reps}")
    report(rates, "samples/s", lower_is_better=False)


def report(values: dict[str, list[float]], unit: str, lower_is_better: bool) -> None:
    med = {name: statistics.median(v) for name, v in values.items()}
    for name, m in med.items():
        print(f"  {name:7s} {m:10.3f} {unit}")
    if "DALI" in med:
        ratio = med["DALI"] / med["stoker"] if lower_is_better else med["stoker"] / med["DALI"]
        print(f"  stoker is {ratio:.2f}x DALI's speed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", action="store_true", help="time build() instead of reads")
    parser.add_argument("--masks", action="store_true", help="with polygon_masks=True")
    parser.add_argument("--images", type=int, default=20000)
    parser.add_argument("--per-image", type=int, default=7)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    if args.build:
        bench_build(args.images, args.per_image, args.reps, args.masks)
    else:
        bench_read(args.batches, args.reps, args.masks)


if __name__ == "__main__":
    main()
