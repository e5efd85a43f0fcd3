"""Per-operator speed of the color and pixel operators: stoker vs DALI's CPU backend.

Each operator runs in a pipeline fed by external_source with a batch of natural 640x480
RGB images (scikit-image's samples, resized) and nothing else; the figure is milliseconds
per batch (best of a few runs after warm-up), and the ratio DALI / stoker (> 1: stoker is
faster). DALI is optional: without it only stoker's times are printed.

    /work/bench-venv/bin/python benchmarks/ops_color.py [--threads 1] [--batch 16] [op ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from op_timing import compare, natural_images

OPS: dict[str, Callable[[Any, Any], Any]] = {
    # the floor: external_source alone (copying the batch in), no operator
    "(source only)": lambda l, x: x,
    "brightness": lambda l, x: l.fn.brightness(x, brightness=1.2, brightness_shift=0.05),
    "contrast": lambda l, x: l.fn.contrast(x, contrast=1.3),
    "brightness_contrast": lambda l, x: l.fn.brightness_contrast(x, brightness=1.2,
                                                                 contrast=0.8),
    "bc_float_out": lambda l, x: l.fn.brightness_contrast(x, brightness=1.2, contrast=0.8,
                                                          dtype=l.types.FLOAT),
    "hue": lambda l, x: l.fn.hue(x, hue=30.0),
    "saturation": lambda l, x: l.fn.saturation(x, saturation=0.6),
    "hsv": lambda l, x: l.fn.hsv(x, hue=30.0, saturation=1.2, value=0.9),
    "color_twist": lambda l, x: l.fn.color_twist(x, hue=30.0, saturation=1.2, brightness=1.1,
                                                 contrast=0.9),
    "csc_rgb2ycbcr": lambda l, x: l.fn.color_space_conversion(
        x, image_type=l.types.RGB, output_type=l.types.YCbCr),
    "csc_rgb2gray": lambda l, x: l.fn.color_space_conversion(
        x, image_type=l.types.RGB, output_type=l.types.GRAY),
    "gaussian_blur": lambda l, x: l.fn.gaussian_blur(x, sigma=1.5),
    "gaussian_blur_float": lambda l, x: l.fn.gaussian_blur(x, sigma=1.5, dtype=l.types.FLOAT),
    "normalize": lambda l, x: l.fn.normalize(x),
    "normalize_hw": lambda l, x: l.fn.normalize(x, axis_names="HW"),
    "normalize_batch": lambda l, x: l.fn.normalize(x, batch=True),
    "jpeg_compression_distortion": lambda l, x: l.fn.jpeg_compression_distortion(x,
                                                                                 quality=50),
    "noise.gaussian": lambda l, x: l.fn.noise.gaussian(x, stddev=10.0),
    "noise.salt_and_pepper": lambda l, x: l.fn.noise.salt_and_pepper(x, prob=0.1),
    "noise.shot": lambda l, x: l.fn.noise.shot(x, factor=4.0),
    "grid_mask": lambda l, x: l.fn.grid_mask(x, tile=40, angle=0.3),
    "erase": lambda l, x: l.fn.erase(x, anchor=[100, 100, 200, 300], shape=[150, 200, 80, 90],
                                     fill_value=[0.0, 127.0, 255.0]),
    "equalize": lambda l, x: l.fn.equalize(x),
    "lookup_table": lambda l, x: l.fn.lookup_table(x, keys=list(range(0, 256, 2)),
                                                   values=[float(v) for v in range(128)],
                                                   dtype=l.types.UINT8),
}


def images(batch: int) -> list[np.ndarray]:
    return natural_images(batch, (640, 480))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", help="operators to time (default: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    opts = parser.parse_args()
    batch = images(opts.batch)
    print(f"ms per batch of {opts.batch} 640x480 RGB uint8 images, {opts.threads} thread(s)")
    compare(OPS, opts.ops, batch, width=30, threads=opts.threads, repeats=opts.repeats,
            best=True)


if __name__ == "__main__":
    main()
