"""Operator schemas, one module per family; importing this package registers them all."""

from __future__ import annotations

import importlib

# Family modules; each registers its schemas on import.
FAMILIES = ("external_source", "random", "arithmetic", "tensor", "tensor_shape", "tensor_join",
            "tensor_slice", "subscript", "geometry", "normalize", "readers")

# Color and pixel families: color, blur/JPEG filters, noise, erase/grid_mask, lookups,
# and normalize (mean/stddev statistics).
FAMILIES += ("color", "filters", "noise", "erase", "lut", "normalize_stats")

# Geometric families: resampling, warps, affine transforms and coordinates, paste.
FAMILIES += ("resize", "transforms", "warp", "paste")

# Image decoders (JPEG through libjpeg-turbo, other formats through OpenCV).
FAMILIES += ("decoders",)

# Reading files named by data (fn.io.file.read).
FAMILIES += ("io_file",)

# Video readers and decoders (PyAV), experimental.inputs.video, sequence operators.
FAMILIES += ("video",)

# Hidden operators that graph/fuse.py substitutes for decode -> resize -> normalize chains.
FAMILIES += ("resize_fused",)


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"stoker.operators.{family}")
