"""Operator schemas and their glue, one folder per family; ``load_all`` registers them all.

    machinery/ -- what every operator is made of: schemas, argument checks, the registry
                  (and the ``fn`` namespace made from it), DALI's old names, base instances
    image/     -- decoders, crops, resampling and its fusion, warps, color, filters, noise
    tensor/    -- types and copies, shapes, joins, windows, arithmetic, indexing, normalize
    random/    -- per-sample random values
    sources/   -- external_source
    readers/   -- readers.file, readers.coco, io.file.read (the byte sources are ``stoker/readers``)
    detection/ -- boxes, crops that keep them, anchor matching, segmentation masks
    audio/     -- decoding, resampling, spectrograms and mel features, the NeMo reader
    video/     -- empty, for the coming operators

A family has the same folder name under ``stoker/kernels/cpu/``, ``stoker/kernels/gpu/``
and ``tests/``; its ``__init__.py`` lists its operators (tests/test_families.py checks
the list against the registry), and ``docs/operators.md`` (``stoker docs``) documents them.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from stoker.graph.node import RECORDER

FAMILIES = ("image", "tensor", "random", "sources", "readers", "detection", "audio", "video")


def family_modules(family: str) -> list[str]:
    """The modules of a family's folder, by name. Each module that defines operators
    registers their schemas when it is imported."""
    package = importlib.import_module(f"{__name__}.{family}")
    return [f"{package.__name__}.{m.name}" for m in
            sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)]


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
        for module in family_modules(family):
            importlib.import_module(module)
