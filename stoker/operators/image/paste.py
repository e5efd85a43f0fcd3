"""``paste``: places each image on a larger canvas (``ratio`` times its size) of one color.

DALI runs it on the GPU only; stoker runs it on the CPU as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import paste as K
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema


def paste_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    image = np.asarray(ins[0])
    if image.ndim != 3:
        raise ValueError(f"expects HWC images, got a {image.ndim}-D sample")
    ratio = float(args["ratio"])
    if ratio < 1:
        raise ValueError(f"'ratio' must be >= 1, got {ratio}")
    c = image.shape[2]
    fill = np.asarray(args["fill_value"], np.float64).reshape(-1)
    if fill.size not in (1, c):
        raise ValueError(f"'fill_value' has {fill.size} values for {c} channels")
    for key in ("paste_x", "paste_y"):
        if not 0 <= float(args[key]) <= 1:
            raise ValueError(f"'{key}' must be in [0, 1], got {float(args[key])}")
    if float(args["min_canvas_size"]) < 0:
        raise ValueError(f"'min_canvas_size' must be >= 0, got {float(args['min_canvas_size'])}")
    new_h, new_w, top, left = K.paste_geometry(image.shape[:2], ratio, float(args["paste_x"]),
                                               float(args["paste_y"]),
                                               float(args["min_canvas_size"]))
    return K.paste_hwc(image, (new_h, new_w), top, left, fill)


def _check(args: dict) -> None:
    fill, n = args.get("fill_value"), args.get("n_channels", 3)
    if isinstance(fill, list) and len(fill) not in (1, n):
        raise ArgumentError(f"fn.paste: argument 'fill_value' must have 1 or n_channels={n} "
                            f"values, got {fill!r}")


_IMG = [np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
        np.arange(30, dtype=np.uint8).reshape(2, 5, 3)]

register(OpSchema(
    name="paste",
    doc="Pastes each image on a canvas 'ratio' times its size (at least min_canvas_size) "
        "filled with fill_value, at relative position (paste_x, paste_y).",
    inputs=(Input("input", "HWC images."),),
    args=(Arg("ratio", "float", REQUIRED, "Canvas size / image size (>= 1).", per_sample=True,
              range=(1, None)),
          Arg("fill_value", "ints", REQUIRED, "Canvas color: one value or one per channel."),
          Arg("paste_x", "float", 0.5, "Horizontal position: 0 left, 1 right.",
              per_sample=True, range=(0, 1)),
          Arg("paste_y", "float", 0.5, "Vertical position: 0 top, 1 bottom.", per_sample=True,
              range=(0, 1)),
          Arg("min_canvas_size", "float", 0.0, "Smallest canvas extent.", per_sample=True,
              range=(0, None)),
          Arg("n_channels", "int", 3, "Channels of the images (fill_value's length).",
              range=(1, None))),
    devices=("cpu", "gpu"), kernel=paste_kernel, check=_check, layout=image_layout,
    examples=(
        Example(args={"ratio": 2.0, "fill_value": [1, 2, 3]}, inputs=(_IMG,)),
        Example(args={"ratio": 1.5, "fill_value": [9], "paste_x": 0.0, "paste_y": 1.0,
                      "min_canvas_size": 7.0}, inputs=(_IMG,)),
        Example(args={"ratio": 0.5, "fill_value": [0]}, inputs=(_IMG,), raises=ArgumentError,
                match="'ratio' must be in [1, inf]"),
    ),
))
