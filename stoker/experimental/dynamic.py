"""Dynamic mode: call any operator on arrays directly, outside a pipeline definition.

DALI 2.4 names this ``nvidia.dali.experimental.dynamic`` (imported as ``ndd``; there is
no ``experimental.eager`` in 2.4). ``dynamic.flip(image, horizontal=1)`` returns a
``Tensor``; a list of arrays or a ``Batch`` as input returns a ``Batch``; operators with no
data input take ``batch_size=``. Nested names follow ``fn``: ``dynamic.decoders.image``,
``dynamic.random.uniform``.

Each call runs a one-operator pipeline (external sources feeding the operator, the
operator's outputs as the pipeline's): the same schema checks, kernels and results as
``fn.<name>`` inside a pipeline, by construction. The built pipelines are kept (keyed by
operator, arguments and input signature), so calling again costs a feed and a run, and a
random operator goes on drawing from its stream (pass ``seed=`` to repeat draws).
Readers are not offered: they need a pipeline's epochs (use a Pipeline).
"""

from __future__ import annotations

import collections
import os
import threading
import types as pytypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import stoker.fn as _fn
from stoker import types
from stoker.errors import ArgumentError
from stoker.pipeline import Pipeline

__all__ = ["Batch", "DType", "Tensor", "as_batch", "as_tensor", "batch", "get_num_threads",
           "set_num_threads", "tensor"]

# DALI's dynamic mode names the data types at its top level (ndd.uint8, ndd.float32, ...).
DType = types.DALIDataType
bool = types.DALIDataType.BOOL  # noqa: A001 (DALI's name)
int8, int16, int32, int64 = (types.INT8, types.INT16, types.INT32, types.INT64)
uint8, uint16, uint32, uint64 = (types.UINT8, types.UINT16, types.UINT32, types.UINT64)
float16, float32, float64 = (types.FLOAT16, types.FLOAT, types.FLOAT64)

_CACHE_SIZE = 64  # one-operator pipelines kept (each holds its worker threads)
_num_threads = min(4, os.cpu_count() or 1)


def set_num_threads(n: int) -> None:
    """Threads each one-operator pipeline uses (built from now on)."""
    global _num_threads
    if int(n) < 1:
        raise ArgumentError(f"set_num_threads: {n} is not a positive number of threads")
    _num_threads = int(n)


def get_num_threads() -> int:
    return _num_threads


class Tensor:
    """One sample: an array with a layout (``np.asarray(t)`` gives the array, no copy)."""

    def __init__(self, data: Any, layout: str | None = None):
        self._array = np.asarray(data)
        self.layout = layout or ""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._array if dtype is None else self._array.astype(dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> types.DALIDataType:
        return types.to_dali(self._array.dtype)

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def cpu(self) -> Tensor:
        return self

    def __repr__(self) -> str:
        return f"Tensor({self._array!r}, layout={self.layout!r})"

    # Arithmetic runs stoker's arithmetic operators, as inside a pipeline.
    def __add__(self, other): return _arith("add", self, other)
    def __radd__(self, other): return _arith("add", other, self)
    def __sub__(self, other): return _arith("sub", self, other)
    def __rsub__(self, other): return _arith("sub", other, self)
    def __mul__(self, other): return _arith("mul", self, other)
    def __rmul__(self, other): return _arith("mul", other, self)
    def __truediv__(self, other): return _arith("truediv", self, other)
    def __rtruediv__(self, other): return _arith("truediv", other, self)


class Batch:
    """Samples of one batch (they may differ in shape)."""

    def __init__(self, tensors: Sequence[Any], layout: str | None = None):
        self.tensors = [t if isinstance(t, Tensor) and layout is None else
                        Tensor(t, layout or getattr(t, "layout", None)) for t in tensors]
        self.layout = layout or (self.tensors[0].layout if self.tensors else "")

    def __len__(self) -> int:
        return len(self.tensors)

    def __iter__(self):
        return iter(self.tensors)

    def __getitem__(self, i: int) -> Tensor:
        return self.tensors[i]

    @property
    def batch_size(self) -> int:
        return len(self.tensors)

    @property
    def shape(self) -> list[tuple[int, ...]]:
        return [t.shape for t in self.tensors]

    @property
    def dtype(self) -> types.DALIDataType:
        return self.tensors[0].dtype if self.tensors else types.DALIDataType.NO_TYPE

    def cpu(self) -> Batch:
        return self

    def __repr__(self) -> str:
        return f"Batch({len(self)} samples, shapes {self.shape}, layout={self.layout!r})"

    __add__ = Tensor.__add__
    __radd__ = Tensor.__radd__
    __sub__ = Tensor.__sub__
    __rsub__ = Tensor.__rsub__
    __mul__ = Tensor.__mul__
    __rmul__ = Tensor.__rmul__
    __truediv__ = Tensor.__truediv__
    __rtruediv__ = Tensor.__rtruediv__


def tensor(data: Any, layout: str | None = None) -> Tensor:
    """A Tensor holding a copy of ``data``."""
    return Tensor(np.array(data), layout)


def as_tensor(data: Any, layout: str | None = None) -> Tensor:
    """A Tensor over ``data`` (no copy when it already is an array)."""
    if isinstance(data, Tensor) and layout is None:
        return data
    return Tensor(data, layout)


def batch(samples: Sequence[Any], layout: str | None = None) -> Batch:
    return Batch([np.array(s) for s in samples], layout)


def as_batch(samples: Any, layout: str | None = None) -> Batch:
    if isinstance(samples, Batch) and layout is None:
        return samples
    return Batch(list(samples), layout)


# -- running one operator ---------------------------------------------------------------------
def _is_data(x: Any) -> bool:
    return isinstance(x, Tensor | Batch | np.ndarray) or (
        isinstance(x, list) and len(x) > 0 and all(isinstance(s, np.ndarray | Tensor) for s in x))


def _samples(x: Any, n: int | None) -> tuple[list[np.ndarray], str | None]:
    """Per-sample arrays of an input for a batch of ``n`` (a single tensor is repeated)."""
    if isinstance(x, Batch):
        return [np.asarray(t) for t in x], x.layout or None
    if isinstance(x, list):
        return [np.asarray(t) for t in x], getattr(x[0], "layout", None) or None
    return [np.asarray(x)] * (n or 1), getattr(x, "layout", None) or None


def _freeze(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return ("nd", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, list | tuple):
        return (type(v).__name__, *(_freeze(x) for x in v))
    if isinstance(v, dict):
        return ("dict", *sorted((k, _freeze(x)) for k, x in v.items()))
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


_pipes: collections.OrderedDict = collections.OrderedDict()
_lock = threading.Lock()


def _pipeline(key: Any, n: int, graph: Callable[[list, dict], Any], data_names: list[str],
              arg_names: list[str], layouts: dict) -> tuple[Pipeline, int]:
    """The one-operator pipeline for ``key``, built on first use."""
    entry = _pipes.get(key)
    if entry is not None:
        _pipes.move_to_end(key)
        return entry
    pipe = Pipeline(batch_size=n, num_threads=_num_threads, device_id=None,
                    exec_pipelined=False, exec_async=False, prefetch_queue_depth=1)
    with pipe:
        ins = [_fn.external_source(name=name, layout=layouts.get(name)) for name in data_names]
        args = {name: _fn.external_source(name=f"arg_{name}") for name in arg_names}
        out = graph(ins, args)
        outs = tuple(out) if isinstance(out, list | tuple) else (out,)
        pipe.set_outputs(*outs)
    pipe.build()
    _pipes[key] = (pipe, len(outs))
    while len(_pipes) > _CACHE_SIZE:
        _pipes.popitem(last=False)[1][0].close()
    return pipe, len(outs)


def _call(key: Any, graph: Callable[[list, dict], Any], inputs: Sequence[Any],
          kwargs: dict, batch_size: int | None) -> Any:
    tensor_args = {k: v for k, v in kwargs.items() if _is_data(v)}
    sizes = {len(x) for x in (*inputs, *tensor_args.values()) if isinstance(x, Batch | list)}
    if batch_size is not None:
        sizes.add(int(batch_size))
    if len(sizes) > 1:
        raise ArgumentError(f"{key[0]}: the inputs and batch_size give different batch sizes "
                            f"{sorted(sizes)}")
    as_batch_out = len(sizes) > 0
    n = sizes.pop() if sizes else 1
    fed = {f"in{i}": _samples(x, n) for i, x in enumerate(inputs)}
    fed_args = {name: _samples(v, n) for name, v in tensor_args.items()}
    layouts = {name: layout for name, (_, layout) in fed.items()}
    signature = tuple((name, s[0].dtype.str if s else None, s[0].ndim if s else None, lay)
                      for name, (s, lay) in sorted({**fed, **fed_args}.items()))
    full_key = (*key, n, signature)
    with _lock:  # a pipeline is fed and run by one caller at a time
        pipe, _ = _pipeline(full_key, n, graph, list(fed), list(fed_args), layouts)
        for name, (samples, layout) in fed.items():
            pipe.feed_input(name, samples, layout)
        for name, (samples, _) in fed_args.items():
            pipe.feed_input(f"arg_{name}", samples)
        outputs = pipe.run()
    results = []
    for tl in outputs:
        layout = tl.layout() or ""
        samples = [Tensor(tl.at(i), layout) for i in range(len(tl))]
        results.append(Batch(samples, layout or None) if as_batch_out else samples[0])
    return results[0] if len(results) == 1 else tuple(results)


def _op_function(path: str, func: Callable) -> Callable:
    def call(*inputs: Any, batch_size: int | None = None, **kwargs: Any) -> Any:
        static = {k: v for k, v in kwargs.items() if not _is_data(v)}
        data_args = sorted(k for k in kwargs if k not in static)

        def graph(ins: list, args: dict) -> Any:
            return func(*ins, **static, **args)

        key = (path, _freeze(static), tuple(data_args), len(inputs))
        return _call(key, graph, inputs, kwargs, batch_size)

    call.__name__ = path.rpartition(".")[2]
    call.__qualname__ = path
    call.__doc__ = f"``fn.{path}`` called directly (dynamic mode).\n\n{func.__doc__ or ''}"
    return call


_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "truediv": lambda a, b: a / b}


def _arith(name: str, a: Any, b: Any) -> Any:
    data = [x for x in (a, b) if _is_data(x)]
    consts = [None if _is_data(x) else x for x in (a, b)]

    def graph(ins: list, args: dict) -> Any:
        it = iter(ins)
        left, right = (next(it) if c is None else c for c in consts)
        return _ARITH[name](left, right)

    key = (name, _freeze(consts[0]), _freeze(consts[1]))
    return _call(key, graph, data, {}, None)


class _Namespace(pytypes.ModuleType):
    """``dynamic.decoders``, ``dynamic.random``, ...: the sub-namespaces of ``fn``."""

    def __init__(self, path: str, source: Any):
        super().__init__(f"{__name__}.{path}")
        self._path, self._source = path, source

    def __getattr__(self, name: str) -> Any:
        return _resolve(self._source, name, f"{self._path}.{name}")

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._source) if not n.startswith("_")]


def _resolve(source: Any, name: str, path: str) -> Any:
    target = getattr(source, name, None)
    if target is None or name.startswith("_") or name.startswith("readers") or \
            path.startswith("readers"):
        raise AttributeError(f"stoker.experimental.dynamic has no operator {path!r}"
                             + (" (readers need a Pipeline)" if "readers" in path else ""))
    if isinstance(target, pytypes.ModuleType):
        return _Namespace(path, target)
    if callable(target):
        return _op_function(path, target)
    raise AttributeError(f"stoker.experimental.dynamic has no operator {path!r}")


def __getattr__(name: str) -> Any:  # PEP 562: every fn operator, resolved on first use
    if name.startswith("__"):
        raise AttributeError(name)
    value = _resolve(_fn, name, name)
    globals()[name] = value
    return value
