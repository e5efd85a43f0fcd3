"""Operator schemas, one module per family; importing this package registers them all."""

from __future__ import annotations

import importlib

# Family modules; each registers its schemas on import.
FAMILIES = ("sources.external_source", "random.generators", "tensor.arithmetic", "tensor.tensor",
            "tensor.shape", "tensor.join", "tensor.slicing", "tensor.subscript", "image.geometry",
            "image.crop_mirror_normalize", "readers.file")

# Color and pixel families: color, blur/JPEG filters, noise, erase/grid_mask, lookups,
# and normalize (mean/stddev statistics).
FAMILIES += ("image.color", "image.filters", "image.noise", "image.erase", "image.lut",
             "tensor.normalize")

# Geometric families: resampling, warps, affine transforms and coordinates, paste.
FAMILIES += ("image.resize", "image.transforms", "image.warp", "image.paste")

# Image decoders (JPEG through libjpeg-turbo, other formats through OpenCV).
FAMILIES += ("image.decoders",)

# Reading files named by data (fn.io.file.read).
FAMILIES += ("readers.io_file",)

# Hidden operators that graph/fuse.py substitutes for decode -> resize -> normalize chains.
FAMILIES += ("image.resize_fused", "image.decode_resize")


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"stoker.operators.{family}")
