"""Operator schemas, one module per family; importing this package registers them all."""

from __future__ import annotations

import importlib
from typing import Any

from stoker.graph.node import RECORDER

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

# Readers of annotated datasets (fn.readers.coco).
FAMILIES += ("readers.coco",)

# Detection and segmentation: boxes, crops that keep them, anchors, masks.
FAMILIES += ("detection",)

# Hidden operators that the fusion rules (image.fusion) substitute for decode -> resize ->
# normalize chains, and the rules.
FAMILIES += ("image.resize_fused", "image.decode_resize", "image.fusion")


def _call_op(name: str, inputs: list, kwargs: dict) -> Any:
    from stoker.operators.machinery.registry import call_op

    return call_op(name, inputs, kwargs)


def _expression(op: str, *operands: Any) -> Any:
    from stoker.operators.tensor.arithmetic import expression

    return expression(op, *operands)


def _subscript(node: Any, index: Any) -> Any:
    from stoker.operators.tensor.subscript import subscript

    return subscript(node, index)


# A DataNode's arithmetic, indexing and device moves are operator calls; graph/ sits below
# the operators and imports none of them, so they are handed to it here, by the package
# that loads before any operator module (and so before any DataNode can exist).
RECORDER.call_op, RECORDER.expression, RECORDER.subscript = _call_op, _expression, _subscript


def load_all() -> None:
    for family in FAMILIES:
        importlib.import_module(f"stoker.operators.{family}")
