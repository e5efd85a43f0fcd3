"""numba's ``njit``, for every numba kernel module here (``from stoker.kernels.cpu.jit
import njit``), with numba's start-up trimmed once.

numba's first compile or cached load imports its numpy registries, and one of them
(``numba.np.arraymath``) imports SciPy's BLAS only to decide whether jitted
``np.convolve``/``np.correlate`` may call ``np.dot``: 0.15-0.25 s of a fresh process's
time to first batch where SciPy is installed, for functions stoker's kernels do not call.
That module is imported here while its check answers "no BLAS", so those two functions
use numba's own loop. ``np.dot`` and ``np.linalg`` in other jitted code check for SciPy
when they compile, as before.
"""

from __future__ import annotations

import sys

import numba.np.linalg as _linalg
from numba import njit


def _no_blas() -> None:
    raise ImportError("skipped at start-up (stoker.kernels.cpu.jit)")


if "numba.np.arraymath" not in sys.modules and "scipy.linalg.cython_blas" not in sys.modules:
    _real = _linalg.ensure_blas
    _linalg.ensure_blas = _no_blas
    try:
        import numba.np.arraymath as _arraymath
    finally:
        _linalg.ensure_blas = _real
    _arraymath.ensure_blas = _real

__all__ = ["njit"]
