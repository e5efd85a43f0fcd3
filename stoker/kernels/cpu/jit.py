"""numba's ``njit``, for every numba kernel module here (``from stoker.kernels.cpu.jit
import njit``), with numba's start-up trimmed once.

numba's first compile or cached load imports its numpy registries, and one of them
(``numba.np.arraymath``) imports SciPy's BLAS only to decide whether jitted
``np.convolve``/``np.correlate`` may call ``np.dot``: 0.15-0.25 s of a fresh process's
time to first batch where SciPy is installed, for functions stoker's kernels do not call.
That module is imported here while its check answers "no BLAS"; its answer is then set
from whether SciPy's BLAS module is installed (a look at SciPy's folder, no import), so
other jitted code keeps numba's usual choice and imports SciPy when it compiles.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

import numba.np.linalg as _linalg
from numba import njit


def _no_blas() -> None:
    raise ImportError("skipped at start-up (stoker.kernels.cpu.jit)")


def _scipy_blas_installed() -> bool:
    spec = importlib.util.find_spec("scipy")
    return spec is not None and any(
        glob.glob(os.path.join(folder, "linalg", "cython_blas.*"))
        for folder in spec.submodule_search_locations or ())


if "numba.np.arraymath" not in sys.modules and "scipy.linalg.cython_blas" not in sys.modules:
    _real = _linalg.ensure_blas
    _linalg.ensure_blas = _no_blas
    try:
        import numba.np.arraymath as _arraymath
    finally:
        _linalg.ensure_blas = _real
    _arraymath.ensure_blas = _real
    _arraymath._HAVE_BLAS = _scipy_blas_installed()

__all__ = ["njit"]
