"""stoker.kernels.cpu.jit: cached kernels load without numba's registries, and a kernel
whose code needs more of numba loads numba's usual way."""

import os
import pathlib
import subprocess
import sys

import numpy as np

from stoker.kernels.cpu import jit


def _fresh(code: str, *path: str, env: dict | None = None) -> str:
    setup = f"import sys; sys.path[:0] = {list(path)!r}\n"
    out = subprocess.run([sys.executable, "-c", setup + code], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


# A fresh process's call of the rng kernel; ``_rng_here`` makes the same call here.
_RNG_CALL = ("import numpy as np\n"
             "from stoker.kernels.cpu.random.rng_loop import uniform01_loop\n"
             "out = np.empty((2, 3))\n"
             "uniform01_loop(np.uint64(1), np.arange(2, dtype=np.uint64), out)\n")


def _rng_here() -> list:
    """_RNG_CALL's output, computed in this process (so the kernel is cached from here on)."""
    from stoker.kernels.cpu.random.rng_loop import uniform01_loop

    out = np.empty((2, 3))
    uniform01_loop(np.uint64(1), np.arange(2, dtype=np.uint64), out)
    return out.tolist()


def test_cached_kernel_loads_without_numba_registries():
    want = _rng_here()
    code = _RNG_CALL + ("from numba.core.runtime import rtsys\n"
                        "print(out.tolist(), 'numba.np.arraymath' in sys.modules,\n"
                        "      'scipy.linalg' in sys.modules, rtsys._init)")
    # rtsys._init: numba's runtime compiled its own functions (27 ms, 29 MB), which
    # cached code does not call
    assert _fresh(code) == f"{want} False False False"


def test_kernels_using_more_of_numba_load_from_the_cache(tmp_path):
    # numba's str hash reads CPython's hash secret through symbols its hashing module
    # registers (typing the str argument imports it); a new array goes through numba's
    # runtime (allocation, reference counts); a raise, through numba's exception helpers.
    # After the fast loads, a compile in the same process installs the registries and
    # starts the runtime, and its code may call a loaded kernel.
    (tmp_path / "more.py").write_text(
        "import numpy as np\n"
        "from stoker.kernels.cpu.jit import njit\n\n\n"
        "@njit(cache=True)\n"
        "def h(s):\n"
        "    return hash(s)\n\n\n"
        "@njit(cache=True)\n"
        "def doubled(n):\n"
        "    if n < 0:\n"
        "        raise ValueError('negative size')\n"
        "    return np.arange(n) * 2\n")
    code = ("import numba, numpy as np\n"
            "import more\n"
            "try:\n"
            "    more.doubled(-1)\n"
            "except ValueError as e:\n"
            "    error = str(e)\n"
            "print(more.h('stoker') == hash('stoker'), more.doubled(5).tolist(), error,\n"
            "      'numba.np.arraymath' in sys.modules)\n"
            "summed = numba.njit(lambda n: (more.doubled(n) + np.ones(n)).sum())\n"
            "print(summed(4))")
    # compiles, and caches; then loads from the cache, the fast way
    assert _fresh(code, str(tmp_path)) == "True [0, 2, 4, 6, 8] negative size True\n16.0"
    assert _fresh(code, str(tmp_path)) == "True [0, 2, 4, 6, 8] negative size False\n16.0"


def test_a_changed_kernel_is_recompiled_in_the_kernels_that_call_it(tmp_path):
    # numba keys a cached kernel by its own code and file: a kernel calling a function of
    # another kernel module kept the old code of that function after it changed.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "jit.py").write_text(open(jit.__file__).read())
    (pkg / "outer.py").write_text("from pkg.jit import njit\n"
                                  "from pkg.inner import step\n\n\n"
                                  "@njit(cache=True)\n"
                                  "def twice(x):\n"
                                  "    return step(step(x))\n")
    code = "from pkg.outer import twice\nprint(twice(1))"
    for add, want in ((1, "3"), (5, "11")):
        (pkg / "inner.py").write_text("from pkg.jit import njit\n\n\n"
                                      "@njit(cache=True)\n"
                                      f"def step(x):\n    return x + {add}\n")
        assert _fresh(code, str(tmp_path)) == want  # compiled
        assert _fresh(code, str(tmp_path)) == want  # loaded from the cache


def test_kernels_run_as_python_with_numba_jit_disabled():
    from stoker.kernels.cpu.random.rng import uniform01_reference

    code = ("import numpy as np\n"
            "from stoker.kernels.cpu.random.rng_loop import uniform01_loop\n"
            "out = np.empty((2, 3))\n"
            "with np.errstate(over='ignore'):\n"
            "    uniform01_loop(np.uint64(7), np.arange(2, dtype=np.uint64), out)\n"
            "print(type(uniform01_loop).__name__, out.tolist())")
    out = _fresh(code, env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    assert out == f"function {uniform01_reference(7, np.arange(2), 3).tolist()}"


def test_unresolved_code_installs_the_registries_first():
    want = _rng_here()
    code = ("from stoker.kernels.cpu import jit\n"
            "jit._resolved = lambda library: False\n" + _RNG_CALL +
            "print(out.tolist(), 'numba.np.arraymath' in sys.modules)")
    assert _fresh(code) == f"{want} True"


def test_resolved_names_what_code_needs():
    import llvmlite.binding as ll
    from numba.core.registry import cpu_target

    assert cpu_target.target_context  # registers numba's C helpers (numba_gil_ensure, ...)

    def library(ir: str) -> tuple:
        return ("lib", "object", (b"", ll.parse_assembly(ir).as_bitcode()))

    calls = "declare void @{0}()\ndefine void @f() {{\n  call void @{0}()\n  ret void\n}}\n"
    assert jit._resolved(library(calls.format("numba_gil_ensure")))
    assert not jit._resolved(library(calls.format("stoker_no_such_symbol")))
    assert not jit._resolved(library("@stoker_no_global = external global i64\n"
                                      "define i64 @f() {\n"
                                      "  %v = load i64, ptr @stoker_no_global\n"
                                      "  ret i64 %v\n}\n"))
    assert not jit._resolved(("lib", "bitcode", b""))


def test_importing_the_operators_loads_no_numba():
    # numba costs about 0.2 s and 64 MB: a pipeline pays it only when it calls a compiled
    # loop (stoker.kernels.cpu.compiled.loops), never for `from stoker import fn`.
    code = ("import sys\nimport stoker.fn, stoker.ops\n"
            "print(sorted(m for m in ('numba', 'scipy', 'llvmlite', 'torch', 'av', 'jax',"
            " 'tensorflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(pathlib.Path(__file__).resolve().parents[2]))
    assert out.stdout.strip() == "[]", out.stdout


def test_a_cpu_pipeline_never_loads_torch():
    # torch is about 200 MB and a second: only GPU stages and the plugins may import it.
    code = ("import sys\nimport numpy as np\nfrom stoker import fn, pipeline_def\n"
            "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
            "def p():\n"
            "    x = fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)] * 2,"
            " layout='HWC')\n"
            "    return fn.crop_mirror_normalize(fn.flip(x), crop=(2, 2))\n"
            "pipe = p(); pipe.build(); pipe.run()\n"
            "print(sorted(m for m in ('torch', 'jax', 'tensorflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(pathlib.Path(__file__).resolve().parents[2]))
    assert out.stdout.strip() == "[]", out.stdout
