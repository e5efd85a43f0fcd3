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


def test_jitted_dot_still_uses_blas():
    pytest.importorskip("scipy")
    code = ("import numpy as np, numba\n"
            "import stoker.kernels.cpu.jit\n"
            "import numba.np.linalg as linalg, numba.np.arraymath as am\n"
            "assert am.ensure_blas is linalg.ensure_blas\n"
            "f = numba.njit(lambda a, b: np.dot(a, b))\n"
            "a = np.arange(6.0).reshape(2, 3)\n"
            "print(f(a, a.T).tolist())")
    a = np.arange(6.0).reshape(2, 3)
    assert _fresh(code) == str((a @ a.T).tolist())
