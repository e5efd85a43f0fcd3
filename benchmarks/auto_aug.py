"""Speed of the automatic augmentations and the operators under them, stoker vs DALI.

A batch of natural 224x224 RGB images (scikit-image's samples, resized) goes through
trivial_augment_wide, rand_augment (n=2, m=9) and auto_augment_image_net, and alone
through fn.reductions.mean/min and fn.filter (the sharpness kernel). The figure is the
median milliseconds per batch after warm-up, and the ratio DALI / stoker (> 1: stoker is
faster). DALI is optional: without it only stoker's times are printed.

    PYTHONPATH=. /work/dali-venv/bin/python benchmarks/auto_aug.py [--batch 32] [case ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from op_timing import compare, natural_images

SHARPEN = np.array([[-0.07, -0.07, -0.07], [-0.07, 1.35, -0.07], [-0.07, -0.07, -0.07]],
                   np.float32)


def _aa(lib: Any) -> Any:
    if lib.__name__.startswith("nvidia"):
        import nvidia.dali.auto_aug.auto_augment
        import nvidia.dali.auto_aug.rand_augment
        import nvidia.dali.auto_aug.trivial_augment  # noqa: F401  (DALI's are submodules)
        from nvidia.dali import auto_aug
    else:
        from stoker import auto_aug
    return auto_aug


CASES: dict[str, Callable[[Any, Any], Any]] = {
    "(source only)": lambda l, x: x,
    "reductions.mean HW": lambda l, x: l.fn.reductions.mean(x, axis_names="HW"),
    "reductions.min HW": lambda l, x: l.fn.reductions.min(x, axis_names="HW"),
    "filter 3x3": lambda l, x: l.fn.filter(x, SHARPEN),
    "trivial_augment_wide": lambda l, x: _aa(l).trivial_augment.trivial_augment_wide(x),
    "rand_augment n=2 m=9": lambda l, x: _aa(l).rand_augment.rand_augment(x, n=2, m=9),
    "auto_augment_image_net": lambda l, x: _aa(l).auto_augment.auto_augment_image_net(x),
}


def images(batch: int) -> list[np.ndarray]:
    return natural_images(batch, (224, 224))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="cases to time (default: all)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    opts = parser.parse_args()
    batch = images(opts.batch)
    print(f"median ms per batch of {opts.batch} 224x224 RGB uint8 images, "
          f"{opts.threads} thread(s)")
    compare(CASES, opts.cases, batch, width=26, label="case", threads=opts.threads,
            repeats=opts.repeats, warmup=2, conditionals=True)


if __name__ == "__main__":
    main()
