"""The modules of compiled loops (``*_loop.py``, ``*_loops.py``), imported on first use.

Importing one loads numba (about 0.2 s and 64 MB), which a pipeline that never calls it
should not pay, so no module imports them at its top. A ``from ... import`` inside the
calling function runs importlib's Python code on every call: about 1 us, and 4-5 us in a
pipeline between two image decodes (py-spy: 3.7% of the GIL-holding time of the decode-crop
pipeline was that one line in ``crop_window.py``). ``loops(name)`` is a dict lookup.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_loaded: dict[str, ModuleType] = {}


def loops(name: str) -> ModuleType:
    """``stoker.kernels.cpu.<name>``, imported the first time it is asked for."""
    module = _loaded.get(name)
    if module is None:
        module = _loaded[name] = importlib.import_module(f"stoker.kernels.cpu.{name}")
    return module
