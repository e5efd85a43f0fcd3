"""numba's ``njit`` for every numba kernel module here (``from stoker.kernels.cpu.jit
import njit``): the same compiler, with a faster start when the kernels are cached.

Before numba loads a cached kernel, it imports and installs every typing and lowering
registry it has (its numpy, typed containers, jitclass, random, ...; with SciPy present,
SciPy's linear algebra too): 0.27 s of a fresh process's first batch here and 25 MB,
though a compiled kernel is machine code that needs none of them. Only compiling needs
them, and numba's compiler installs them itself before it compiles.

So stoker's kernels load through ``_Cache``, which registers numba's runtime functions
(the memory functions compiled code calls) and skips the rest. A kernel whose code calls
a symbol this process has not registered gets the registries installed before it loads,
numba's stock way: a call into an unregistered symbol would crash, not raise.
"""

from __future__ import annotations

import functools
import hashlib
import os

import llvmlite.binding as ll
import numba
from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

# What a numba whose internals differ from those this module reads raises: such a numba
# loads its own way.
_DRIFT = (AttributeError, ImportError, IndexError, TypeError, ValueError)


class _Cache(FunctionCache):
    """numba's on-disk cache of a kernel's compiled code, loaded without the registries."""

    def load_overload(self, sig, target_context):  # noqa: ANN001, ANN201
        try:
            data = self._cached(sig, target_context)
        except _DRIFT:
            return super().load_overload(sig, target_context)
        if data is None:
            return None  # not cached: numba compiles, installing the registries first
        return self._impl.rebuild(target_context, data)

    def _index_key(self, sig, codegen):  # noqa: ANN001, ANN202
        # numba keys a cached kernel by its own bytecode, and drops it when its own file
        # changes: a kernel calling (or inlining) a function of another module kept that
        # function's old code after it changed. Every kernel module's source is in the key.
        return (*super()._index_key(sig, codegen), _sources_digest())

    def _cached(self, sig, target_context):  # noqa: ANN001, ANN202
        """The cached data of ``sig`` (None if there is none), with the registries
        installed first if its code names a symbol this process has not registered."""
        _register_runtime()
        data = None
        with self._guard_against_spurious_io_errors():
            if self._enabled:
                data = self._cache_file.load(self._index_key(sig, target_context.codegen()))
        if data is not None and not _resolved(data[0]):
            target_context.refresh()
        return data


@functools.cache
def _sources_digest() -> str:
    """A digest of the source of every module beside this one and in its family folders
    (the kernels and the Python code they compile)."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for folder, _dirs, files in sorted(os.walk(here)):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    digest.update(os.path.relpath(path, here).encode() + b"\0" + f.read())
    return digest.hexdigest()


@functools.cache
def _register_runtime() -> None:
    """Gives the C functions of numba's runtime (its memory functions) the names compiled
    code calls them by, as numba's runtime start does before it compiles its own few
    functions (27 ms and 29 MB here, which loading compiled code does not need: those
    functions are linked into each kernel)."""
    from numba.core.runtime import _nrt_python

    if numba.core.config.NRT_STATS:
        _nrt_python.memsys_enable_stats()
    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)


def _resolved(library: tuple) -> bool:
    """Whether every function and global a serialized library's code uses from outside
    it has an address in this process (LLVM's own intrinsics aside)."""
    _name, kind, payload = library
    if kind != "object":
        return False
    module = ll.parse_bitcode(payload[1])
    names = [f.name for f in module.functions if f.is_declaration]
    names += [g.name for g in module.global_variables if g.is_declaration]
    return all(n.startswith("llvm.") or ll.address_of_symbol(n) for n in names)


def njit(**options):  # noqa: ANN003, ANN201
    """``numba.njit(**options)``; with ``cache=True`` the kernel loads through ``_Cache``
    (with NUMBA_DISABLE_JIT set, numba hands back the Python function as it is)."""
    cache = options.pop("cache", False)

    def decorate(func):  # noqa: ANN001, ANN202
        dispatcher = numba.njit(**options)(func)
        if cache and isinstance(dispatcher, Dispatcher):
            dispatcher._cache = _Cache(dispatcher.py_func)
        return dispatcher
    return decorate


__all__ = ["njit"]
