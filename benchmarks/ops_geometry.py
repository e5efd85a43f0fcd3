"""Per-operator speed of the geometric operators: stoker vs DALI's CPU backend.

Each operator runs in a pipeline fed by external_source with a batch of natural RGB images
(scikit-image's samples, resized to ImageNet's typical 500x375) and nothing else; the
figure is milliseconds per batch (best of a few runs after warm-up; --cpu-time measures
the process's CPU time instead, steadier on a shared machine), and the ratio DALI / stoker
(> 1: stoker is faster). The "(source only)" row is the cost both pay for feeding the
batch. DALI is optional: without it only stoker's times are printed.

    /work/bench-venv/bin/python benchmarks/ops_geometry.py [--threads 1] [--batch 16] [op ...]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from op_timing import compare, natural_images

_M = [0.9, 0.2, 10.3, -0.15, 1.1, -5.7]

OPS: dict[str, Callable[[Any, Any], Any]] = {
    "(source only)": lambda l, x: x,
    "resize_224x224": lambda l, x: l.fn.resize(x, size=[224, 224]),
    "resize_shorter_256": lambda l, x: l.fn.resize(x, resize_shorter=256),
    "resize_shorter_256_crop_cmn": lambda l, x: l.fn.crop_mirror_normalize(
        l.fn.resize(x, resize_shorter=256), crop=[224, 224], mean=[124.0, 116.0, 104.0],
        std=[58.0, 57.0, 57.0]),
    "resize_up_800": lambda l, x: l.fn.resize(x, resize_longer=800),
    "resize_nn_224": lambda l, x: l.fn.resize(x, size=[224, 224], interp_type=l.types.INTERP_NN),
    "resize_cubic_224": lambda l, x: l.fn.resize(x, size=[224, 224],
                                                 interp_type=l.types.INTERP_CUBIC),
    "resize_lanczos_224": lambda l, x: l.fn.resize(x, size=[224, 224],
                                                   interp_type=l.types.INTERP_LANCZOS3),
    "resize_float_224": lambda l, x: l.fn.resize(x, size=[224, 224], dtype=l.types.FLOAT),
    "resize_crop_mirror": lambda l, x: l.fn.resize_crop_mirror(x, resize_shorter=256,
                                                               crop=[224, 224], mirror=1),
    "random_resized_crop_224": lambda l, x: l.fn.random_resized_crop(x, size=[224, 224]),
    "rotate_30": lambda l, x: l.fn.rotate(x, angle=30.0, fill_value=0.0),
    "rotate_30_nn": lambda l, x: l.fn.rotate(x, angle=30.0, interp_type=l.types.INTERP_NN),
    "warp_affine": lambda l, x: l.fn.warp_affine(x, matrix=_M, fill_value=0.0),
}


def images(batch: int) -> list[np.ndarray]:
    import cv2

    return natural_images(batch, (500, 375), cv2.INTER_AREA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", help="operators to time (default: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-time", action="store_true", help="time with process CPU time")
    opts = parser.parse_args()
    clock = time.process_time if opts.cpu_time else time.perf_counter
    batch = images(opts.batch)
    print(f"ms per batch of {opts.batch} 500x375 RGB uint8 images, {opts.threads} thread(s), "
          f"{'CPU' if opts.cpu_time else 'wall'} time")
    compare(OPS, opts.ops, batch, width=30, threads=opts.threads, repeats=opts.repeats,
            best=True, clock=clock)


if __name__ == "__main__":
    main()
