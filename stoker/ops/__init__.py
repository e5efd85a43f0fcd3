"""Operator schemas, one module per family; importing this package registers them all."""

from __future__ import annotations

import importlib

# Family modules; each registers its schemas on import.
FAMILIES = ("external_source", "random", "arithmetic", "tensor", "tensor_shape", "tensor_join",
            "tensor_slice", "subscript", "geometry", "normalize", "readers", "decoders",
            "resize", "transforms", "warp", "paste")


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"stoker.ops.{family}")
