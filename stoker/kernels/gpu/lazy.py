"""References from operator schemas to GPU kernels that load torch only when called.

``gpu_kernel=lazy("image.geometry", "crop")`` in a schema keeps ``import stoker`` free of torch:
``stoker.kernels.gpu.image.geometry`` (and torch with it) is imported when a GPU operator first
runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy(module: str, name: str) -> Callable[..., Any]:
    """A gpu_kernel calling ``stoker.kernels.gpu.<module>.<name>``, imported on first use."""

    def run(ins: list, args: dict, ctx: Any) -> Any:
        mod = importlib.import_module(f"stoker.kernels.gpu.{module}")
        return getattr(mod, name)(ins, args, ctx)

    run.__qualname__ = run.__name__ = f"gpu.{module}.{name}"
    return run
