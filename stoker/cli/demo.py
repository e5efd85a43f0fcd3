"""``stoker demo``: writes a small ImageNet-like JPEG dataset, then runs the ResNet-50
training pipeline on it (read, decode a random crop, resize to 224, mirror, normalize),
printing the time to the first batch and images/s. No network: the photographs come from
scikit-image's wheel (``stoker make-dataset``)."""

from __future__ import annotations

import os
import pathlib
import time

from stoker.cli.make_dataset import make_dataset

# A first batch slower than this was compiling the kernels (cached: 0.5-0.6 s here).
COMPILING_SECONDS = 3.0


def run_demo(data: str, seconds: float) -> int:
    import stoker
    from stoker.cli import pipelines

    root = pathlib.Path(data)
    if not any(root.glob("*/*.jpg")):
        stats = make_dataset(root, images=256, classes=8)
        print(f"stoker demo: wrote {stats['images']} JPEGs ({stats['total_mb']:.0f} MB) to "
              f"{root}/")
    batch_size, threads = 64, os.cpu_count() or 1
    print(f"stoker demo: ResNet-50 training pipeline, batch {batch_size}, {threads} threads")
    start = time.perf_counter()
    pipe = pipelines.build("train", stoker, str(root), batch_size, threads)
    images, labels = pipe.run()
    first = time.perf_counter() - start
    print(f"  first batch after {first:.2f} s: images "
          f"{images.as_array().shape} {images.dtype.name} {images.layout()}, labels "
          f"{labels.as_array()[:8, 0].tolist()}")
    if first > COMPILING_SECONDS:
        print("  (this run compiled stoker's kernels for this CPU, 15-20 s on 2 cores; "
              "later runs load them. `stoker build-kernels`, an install step, does it "
              "ahead: `make setup` runs it)")
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        pipe.run()
        n += 1
    print(f"  {n * batch_size / (time.perf_counter() - start):,.0f} images/s over {n} batches")
    pipe.close()
    return 0
