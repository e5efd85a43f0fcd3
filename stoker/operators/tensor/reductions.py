"""``fn.reductions.*``: min, max, sum, mean, mean_square, rms, std_dev, variance.

Each reduces every sample over 'axes' (indices, negative from the back) or 'axis_names'
(layout letters) - all axes by default - dropping the reduced dimensions unless
'keep_dims'. std_dev and variance take the mean as a second input (one tensor per sample,
shaped as the reduction with or without kept dimensions: fn.reductions.mean's output, any
shape with as many elements, or one value)
and divide by count - 'ddof'. DALI 2.4 facts, measured (tests/data/dali_reductions.json):
inputs are 8- to 64-bit integers or float32; min and max keep the type; sum defaults to
the 64-bit integer of the input's sign (float32 stays float32) and the others to float32;
'dtype' may be the input type or FLOAT (sum: also the 64-bit type, mean_square: only the
64-bit type or FLOAT), and an integer type is the accumulator. An axis named twice, an
axis out of range and 'axes' with 'axis_names' are errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import reduce as K
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import in_layout, layout_instance

T = types.DALIDataType
_INTS = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32,
                                    np.int32, np.uint64, np.int64))
_IN_TYPES = (*_INTS, np.dtype(np.float32))
_F32 = np.dtype(np.float32)


def _wide(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "f":
        return _F32
    return np.dtype(np.uint64 if dtype.kind == "u" else np.int64)


def allowed_types(kind: str, dtype: np.dtype) -> tuple[np.dtype, ...]:
    """Output types DALI 2.4 accepts for ``kind`` of ``dtype`` (the default first)."""
    if kind in ("min", "max"):
        return (dtype,)
    if dtype == _F32:
        return (_F32,)
    if kind == "sum":
        return (_wide(dtype),) if dtype.itemsize == 8 else (_wide(dtype), dtype, _F32)
    if kind == "mean_square":
        return (_F32, _wide(dtype))
    return (_F32, dtype)  # mean, rms


def _check_type(fn_name: str, dtype: np.dtype) -> None:
    if dtype not in _IN_TYPES:
        raise TypeError(f"{fn_name}: inputs of type {dtype.name} are not supported; give "
                        "8- to 64-bit integers or float32")


def out_type(kind: str, dtype: np.dtype, args: dict) -> np.dtype:
    allowed = allowed_types(kind, dtype)
    if args.get("dtype") is None:
        return allowed[0]
    want = types.to_numpy(args["dtype"])
    if want not in allowed:
        names = ", ".join(types.to_dali(t).name for t in allowed)
        raise ValueError(f"'dtype' {types.to_dali(want).name} is not supported for "
                         f"{dtype.name} inputs; choose one of {names}")
    return want


def sample_axes(args: dict, layout: str, ndim: int) -> tuple[int, ...]:
    """The reduced axes of a sample, non-negative and in order."""
    names, axes = args.get("axis_names"), args.get("axes")
    if names is not None:
        missing = [c for c in names if c not in layout]
        if missing:
            raise ValueError(f"'axis_names' {names!r} names axes that the input layout "
                             f"{layout!r} lacks")
        return tuple(sorted(layout.index(c) for c in names))
    if axes is None:
        return tuple(range(ndim))
    bad = [a for a in axes if not -ndim <= a < ndim]
    if bad:
        raise ValueError(f"'axes' entry {bad[0]} is out of range for {ndim}-D samples "
                         f"({-ndim}..{ndim - 1})")
    return tuple(sorted(a % ndim for a in axes))


def _layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    if args.get("keep_dims") or not src:
        return src
    try:
        axes = set(sample_axes(args, src, len(src)))
    except ValueError:
        return ""  # the kernel names the problem at run time, as DALI does
    return "".join(c for i, c in enumerate(src) if i not in axes)


def _check(fn_name: str) -> Any:
    def check(args: dict) -> None:
        axes = args.get("axes")
        if axes is not None and args.get("axis_names") is not None:
            raise ArgumentError(f"{fn_name}: arguments 'axes' and 'axis_names' exclude each "
                                "other; give one")
        if axes is not None and len(set(axes)) != len(axes):
            raise ArgumentError(f"{fn_name}: argument 'axes' names an axis twice: {axes!r}")
    return check


def _reduce_kernel(kind: str, fn_name: str, lead: int) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = np.asarray(ins[0])
        _check_type(fn_name, x.dtype)
        axes = sample_axes(args, in_layout(args), x.ndim - lead)
        return K.reduce_cpu(x, kind, tuple(a + lead for a in axes), bool(args["keep_dims"]),
                            out_type(kind, x.dtype, args))
    return kernel


def _mean_for(mean: np.ndarray, shape: tuple, axes: tuple) -> np.ndarray:
    """The given mean, shaped for broadcasting against the sample."""
    kept = tuple(1 if a in axes else s for a, s in enumerate(shape))
    dropped = tuple(s for a, s in enumerate(shape) if a not in axes)
    if mean.size == 1:  # one value for the whole reduction
        return mean.reshape(())
    if mean.shape not in (kept, dropped) and mean.size != int(np.prod(dropped)):
        raise ValueError(f"the mean (input 1) has shape {mean.shape}; it must be the "
                         f"reduced shape {dropped} (or {kept} with kept dimensions)")
    return mean.reshape(kept)


def _spread_kernel(root: bool, fn_name: str) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x, mean = np.asarray(ins[0]), np.asarray(ins[1])
        _check_type(fn_name, x.dtype)
        if mean.dtype != _F32:
            raise TypeError(f"{fn_name}: the mean (input 1) must be float32 (as "
                            f"fn.reductions.mean gives it), got {mean.dtype.name}")
        axes = sample_axes(args, in_layout(args), x.ndim)
        return K.variance_cpu(x, _mean_for(mean, x.shape, axes), axes,
                              bool(args["keep_dims"]), int(args["ddof"]), root)
    return kernel


_RNG = np.random.default_rng(28)
_HWC = [_RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8)]
_F = [x.astype(np.float32) - 100 for x in _HWC]

_AXES = (Arg("axes", "ints", None, "Axes to reduce (negative count from the back); "
             "default: all."),
         Arg("axis_names", "layout", None, "Layout letters of the axes to reduce."),
         Arg("keep_dims", "bool", False, "Keep the reduced dimensions, with extent 1."))
_DTYPE = Arg("dtype", "dtype", None, "Output (and accumulator) type; default: see the "
             "operator.")
_DOCS = {
    "min": "Smallest value", "max": "Largest value", "sum": "Sum",
    "mean": "Arithmetic mean", "mean_square": "Mean of the squares",
    "rms": "Root mean square",
}


def _register_simple(kind: str) -> None:
    fn_name = f"fn.reductions.{kind}"
    with_dtype = kind not in ("min", "max")
    register(OpSchema(
        name=f"reductions.{kind}",
        doc=f"{_DOCS[kind]} of each sample along some axes (default: all).",
        inputs=(Input("input", "Integer (8 to 64 bits) or float32 data."),),
        args=_AXES + ((_DTYPE,) if with_dtype else ()),
        kernel=_reduce_kernel(kind, fn_name, 0), batch_kernel=_reduce_kernel(kind, fn_name, 1),
        instance=layout_instance, check=_check(fn_name), layout=_layout,
        dtype=lambda d, a, kind=kind: out_type(kind, d[0], a) if d[0] in _IN_TYPES else d[0],
        examples=(
            Example(inputs=(_HWC,)),
            Example(args={"axes": [0, 1], "keep_dims": True}, inputs=(_HWC,)),
            # The battery's inputs have no layout (the DALI replay covers axis names).
            Example(args={"axis_names": "HW"}, inputs=(_HWC,), raises=RuntimeError,
                    match="names axes that the input layout '' lacks"),
            Example(args={"axes": [-1]}, inputs=(_F,)),
            Example(args={"axes": [0, 0]}, inputs=(_HWC,), raises=ArgumentError,
                    match="names an axis twice"),
            Example(args={"axes": [3]}, inputs=(_HWC,), raises=RuntimeError,
                    match="'axes' entry 3 is out of range"),
            Example(inputs=([x.astype(np.float64) for x in _F],), raises=RuntimeError,
                    match="float64 are not supported"),
        ) + ((Example(args={"dtype": T.INT16}, inputs=(_HWC,), raises=RuntimeError,
                      match="'dtype' INT16 is not supported for uint8"),) if with_dtype else ()),
    ))


for _kind in _DOCS:
    _register_simple(_kind)


def _mean_of(samples: list, axes: tuple) -> list:
    return [x.astype(np.float64).mean(axis=axes).astype(np.float32) for x in samples]


def _register_spread(kind: str, root: bool) -> None:
    fn_name = f"fn.reductions.{kind}"
    register(OpSchema(
        name=f"reductions.{kind}",
        doc=("Standard deviation" if root else "Variance") + " of each sample along some "
            "axes (default: all) around the given mean, dividing by count - ddof.",
        inputs=(Input("data", "Integer (8 to 64 bits) or float32 data."),
                Input("mean", "float32 mean of each sample over the same axes (the output "
                              "of fn.reductions.mean, with or without kept dimensions).")),
        args=_AXES + (Arg("ddof", "int", 0, "Delta degrees of freedom: the divisor is the "
                          "count of reduced elements minus ddof."),),
        kernel=_spread_kernel(root, fn_name), instance=layout_instance, check=_check(fn_name),
        layout=_layout, dtype=lambda d, a: _F32,
        examples=(
            Example(inputs=(_HWC, _mean_of(_HWC, (0, 1, 2)))),
            Example(args={"axes": [0, 1], "keep_dims": True, "ddof": 1},
                    inputs=(_HWC, _mean_of(_HWC, (0, 1)))),
            Example(args={"axes": [0, 1]}, inputs=(_F, [m.reshape(1, 1, 3) for m in
                                                        _mean_of(_F, (0, 1))])),
            Example(args={"axes": [0, 1]}, inputs=(_HWC, _mean_of(_HWC, (0,))),
                    raises=RuntimeError, match="it must be the reduced shape"),
            Example(inputs=(_HWC, [np.float64(1.0)] * 2), raises=RuntimeError,
                    match="must be float32"),
            Example(args={"axes": [0], "axis_names": "H"}, inputs=(_HWC, _HWC),
                    raises=ArgumentError, match="exclude each other"),
        ),
    ))


_register_spread("std_dev", True)
_register_spread("variance", False)
