"""Image operators given samples without a layout: the cases, for DALI and for stoker.

DALI names such an input by its number of dimensions when it gives the output's layout
(HWC for 3-D samples, FHWC for 4-D; a crop names a 4-D input DHWC). Each case is one
operator call on an ``external_source`` with no layout; ``outcome`` runs it with either
library and returns the output's layout, or the word "error".
"""

from __future__ import annotations

from typing import Any

import numpy as np

CASES = {
    "flip": lambda fn, t, x: fn.flip(x, horizontal=1),
    "rotate": lambda fn, t, x: fn.rotate(x, angle=10.0),
    "warp_affine": lambda fn, t, x: fn.warp_affine(x, matrix=[1.0, 0, 0, 0, 1, 0]),
    "resize": lambda fn, t, x: fn.resize(x, resize_x=4, resize_y=4),
    "random_resized_crop": lambda fn, t, x: fn.random_resized_crop(x, size=[4, 4]),
    "resize_crop_mirror": lambda fn, t, x: fn.resize_crop_mirror(x, resize_x=6, resize_y=6,
                                                                 crop=[4, 4]),
    "paste": lambda fn, t, x: fn.paste(x, ratio=2.0, fill_value=0),
    "crop": lambda fn, t, x: fn.crop(x, crop=[4, 4]),
    "crop_mirror_normalize": lambda fn, t, x: fn.crop_mirror_normalize(x),
    "gaussian_blur": lambda fn, t, x: fn.gaussian_blur(x, sigma=1.0),
    "hsv": lambda fn, t, x: fn.hsv(x),
    "brightness_contrast": lambda fn, t, x: fn.brightness_contrast(x, brightness=1.2),
    "color_space_conversion": lambda fn, t, x: fn.color_space_conversion(
        x, image_type=t.RGB, output_type=t.BGR),
    "jpeg_compression_distortion": lambda fn, t, x: fn.jpeg_compression_distortion(x),
    "noise.gaussian": lambda fn, t, x: fn.noise.gaussian(x),
    "cast": lambda fn, t, x: fn.cast(x, dtype=t.FLOAT),
}
SHAPES = {3: (8, 9, 3), 4: (2, 8, 9, 3)}


def outcome(lib: Any, name: str, ndim: int) -> str:
    """The layout of ``name``'s output for unnamed ``ndim``-D samples, or "error"."""
    fn, types = lib.fn, lib.types
    data = [np.random.default_rng(k).integers(0, 255, SHAPES[ndim], dtype=np.uint8)
            for k in range(2)]

    @lib.pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        return CASES[name](fn, types, fn.external_source(source=lambda: data))

    try:
        p = pipe()
        p.build()
        return p.run()[0].layout()
    except Exception:
        return "error"
