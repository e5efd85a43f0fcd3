"""``fn.clahe``: contrast limited adaptive histogram equalization of HWC images.

DALI 2.4's CPU operator gives OpenCV's CLAHE exactly (measured), so this is OpenCV's:
tiles_x x tiles_y tiles, 'clip_limit' as OpenCV's clipLimit. One-channel images are
equalized as they are; RGB images with luma_only=True (the default) have their L channel
equalized in OpenCV's CIE Lab and are converted back, with luma_only=False each channel
is equalized alone. Only uint8 HWC images with 1 or 3 channels and 256 bins (the layout
DALI allows is HWC).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema


def clahe_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    import cv2  # (OpenCV loads with the first call, not at import)
    x = np.asarray(ins[0])
    layout = args["_in_layouts"][0] or ("HWC" if x.ndim == 3 else "")
    if layout != "HWC" or x.ndim != 3:
        raise ValueError(f"expects HWC images, got a {x.ndim}-D sample with layout "
                         f"{layout!r}")
    if x.dtype != np.uint8:
        raise TypeError(f"expects uint8 images, got {x.dtype.name}")
    if x.shape[2] not in (1, 3):
        raise ValueError(f"expects 1 or 3 channels, got {x.shape[2]}")
    engine = cv2.createCLAHE(clipLimit=float(args["clip_limit"]),
                             tileGridSize=(int(args["tiles_x"]), int(args["tiles_y"])))
    if x.shape[2] == 1:
        return engine.apply(np.ascontiguousarray(x[..., 0]))[..., None]
    if args["luma_only"]:
        lab = cv2.cvtColor(np.ascontiguousarray(x), cv2.COLOR_RGB2LAB)
        lab[..., 0] = engine.apply(np.ascontiguousarray(lab[..., 0]))
        return cv2.cvtColor(lab, cv2.COLOR_LAB2RGB)
    return np.stack([engine.apply(np.ascontiguousarray(x[..., k])) for k in range(3)], -1)


def _check(args: dict) -> None:
    for name in ("tiles_x", "tiles_y"):
        if args.get(name) is not None and args[name] < 1:
            raise ArgumentError(f"fn.clahe: argument '{name}' must be at least 1, got "
                                f"{args[name]}")
    if args.get("clip_limit") is not None and args["clip_limit"] < 0:
        raise ArgumentError(f"fn.clahe: argument 'clip_limit' must not be negative, got "
                            f"{args['clip_limit']}")
    if args.get("bins", 256) != 256:
        raise ArgumentError(f"fn.clahe: only bins=256 is supported (uint8 images), got "
                            f"{args['bins']}")


_RNG = np.random.default_rng(17)
_IMG = [np.clip(_RNG.normal(100, 20, (24, 32, 3)), 0, 255).astype(np.uint8),
        np.clip(_RNG.normal(60, 10, (17, 23, 3)), 0, 255).astype(np.uint8)]
_BASE = {"tiles_x": 4, "tiles_y": 3, "clip_limit": 2.0}

register(OpSchema(
    name="clahe",
    doc="Contrast limited adaptive histogram equalization (OpenCV's CLAHE, as DALI's CPU "
        "operator); RGB images on their Lab lightness by default.",
    inputs=(Input("input", "uint8 HWC images with 1 or 3 (RGB) channels."),),
    args=(Arg("tiles_x", "int", REQUIRED, "Tiles across the width."),
          Arg("tiles_y", "int", REQUIRED, "Tiles down the height."),
          Arg("clip_limit", "float", REQUIRED, "Contrast limit (OpenCV's clipLimit)."),
          Arg("bins", "int", 256, "Histogram bins (256)."),
          Arg("luma_only", "bool", True, "RGB: equalize the Lab lightness only; False: "
              "each channel alone.")),
    kernel=clahe_sample, check=_check, layout=image_layout,
    examples=(
        Example(args=_BASE, inputs=(_IMG,)),
        Example(args={**_BASE, "luma_only": False}, inputs=(_IMG,)),
        Example(args=_BASE, inputs=([x[..., :1].copy() for x in _IMG],)),
        Example(args={**_BASE, "bins": 128}, inputs=(_IMG,), raises=ArgumentError,
                match="only bins=256"),
        Example(args=_BASE, inputs=([x.astype(np.float32) for x in _IMG],),
                raises=RuntimeError, match="expects uint8 images"),
        Example(args={**_BASE, "tiles_x": 0}, inputs=(_IMG,), raises=ArgumentError,
                match="'tiles_x' must be at least 1"),
    ),
))
