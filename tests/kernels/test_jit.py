"""stoker.kernels.cpu.jit: numba starts without importing SciPy's BLAS, and jitted linear
algebra elsewhere still finds it."""

import subprocess
import sys

import numpy as np
import pytest


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_kernels_load_without_scipy_blas():
    # A cached stoker kernel loads numba's CPU target (all its numpy registries).
    code = ("import sys, numpy as np\n"
            "from stoker.kernels.cpu.rng_loop import uniform01_loop\n"
            "out = np.empty((2, 3))\n"
            "uniform01_loop(np.uint64(1), np.arange(2, dtype=np.uint64), out)\n"
            "print('scipy.linalg' in sys.modules)")
    assert _fresh(code) == "False"


def test_jitted_code_still_finds_scipy_blas():
    # Other jitted code keeps numba's own choice: np.dot, and np.convolve through it,
    # import SciPy's BLAS when they compile.
    pytest.importorskip("scipy")
    code = ("import sys, numpy as np, numba\n"
            "import stoker.kernels.cpu.jit\n"
            "import numba.np.linalg as linalg, numba.np.arraymath as am\n"
            "assert am.ensure_blas is linalg.ensure_blas and am._HAVE_BLAS\n"
            "f = numba.njit(lambda a, b: np.dot(a, b))\n"
            "g = numba.njit(lambda a, b: np.convolve(a, b))\n"
            "a = np.arange(6.0).reshape(2, 3)\n"
            "print(f(a, a.T).tolist(), g(a[0], a[1]).tolist(),\n"
            "      'scipy.linalg.cython_blas' in sys.modules)")
    a = np.arange(6.0).reshape(2, 3)
    assert _fresh(code) == f"{(a @ a.T).tolist()} {np.convolve(a[0], a[1]).tolist()} True"
