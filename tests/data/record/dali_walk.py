"""What DALI's ``fn`` and ``ops`` modules hold, for the recorders (run with DALI)."""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable
from typing import Any


def walk(module: pytypes.ModuleType, pick: Callable[[Any], bool]) -> dict[str, Any]:
    """Every object ``pick`` accepts in ``module`` and its sub-modules, by dotted path;
    "hidden" sub-modules (DALI's own machinery) and private names left out."""
    out: dict[str, Any] = {}

    def visit(mod: pytypes.ModuleType, prefix: str) -> None:
        for name in sorted(dir(mod)):
            if name.startswith("_") or name == "hidden":
                continue
            obj = getattr(mod, name)
            if isinstance(obj, pytypes.ModuleType):
                if obj.__name__.startswith(mod.__name__ + "."):
                    visit(obj, f"{prefix}{name}.")
            elif pick(obj):
                out[prefix + name] = obj

    visit(module, "")
    return out


def fn_functions(fn: pytypes.ModuleType) -> dict[str, Any]:
    """``nvidia.dali.fn``'s operator functions (each carries its schema's name)."""
    return walk(fn, lambda o: callable(o) and hasattr(o, "_schema_name"))
