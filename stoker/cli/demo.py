"""``stoker demo``: writes a small sample dataset, then trains-style iterates over it.

No network: the dataset is generated (CIFAR-sized images with class labels), stored as
``.npy`` files, and read back through ``external_source`` into the usual augmentation
pipeline (pad + random crop, random mirror, normalize to CHW float).
"""

from __future__ import annotations

import os
import pathlib
import time

import numpy as np

from stoker.cli.pipelines import CIFAR_MEAN, CIFAR_STD, cifar_images


def write_sample(root: pathlib.Path, count: int = 4096, classes: int = 10) -> pathlib.Path:
    root.mkdir(parents=True, exist_ok=True)
    images, labels = root / "images.npy", root / "labels.npy"
    if not images.exists():
        np.save(images, cifar_images(count, seed=7))
        np.save(labels, (np.arange(count) % classes).astype(np.int32))
    return root


def run_demo(data: str, seconds: float) -> int:
    from stoker import fn, pipeline_def, types

    root = write_sample(pathlib.Path(data))
    images = np.load(root / "images.npy", mmap_mode="r")
    labels = np.load(root / "labels.npy")
    batch_size, threads = 256, os.cpu_count() or 1
    count = len(images) // batch_size

    def source(info):
        i = info.iteration % count
        sl = slice(i * batch_size, (i + 1) * batch_size)
        return np.asarray(images[sl]), labels[sl]

    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=0)
    def train():
        imgs, lbls = fn.external_source(source=source, num_outputs=2, batch_info=True,
                                        layout=["HWC", ""])
        padded = fn.crop(imgs, crop=(40, 40), out_of_bounds_policy="pad")
        out = fn.crop_mirror_normalize(
            padded, crop=(32, 32), crop_pos_x=fn.random.uniform(range=(0, 1)),
            crop_pos_y=fn.random.uniform(range=(0, 1)), mirror=fn.random.coin_flip(),
            mean=CIFAR_MEAN, std=CIFAR_STD, dtype=types.FLOAT, output_layout="CHW")
        return out, lbls

    print(f"stoker demo: {len(images)} sample images in {root}/, batch {batch_size}, "
          f"{threads} threads")
    pipe = train()
    start = time.perf_counter()
    out, lbl = pipe.run()
    print(f"  first batch after {time.perf_counter() - start:.2f} s: images "
          f"{out.as_array().shape} {out.dtype.name} {out.layout()}, labels {lbl.as_array()[:8]}")
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        pipe.run()
        n += 1
    rate = n * batch_size / (time.perf_counter() - start)
    print(f"  {rate:,.0f} images/s over {n} batches")
    pipe.close()
    return 0
