"""Shape operators: reshape, reinterpret, transpose, expand_dims, squeeze.

The output layout is the input's when the number of dimensions is unchanged (reshape),
permuted with the axes (transpose), or built from the names given. Where the output's
dimensions are only known at run time (a shape given per sample), the input's layout is
kept and checked against each sample's result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.graph.node import DataNode
from stoker.kernels.cpu.tensor import tensor as k
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import (
    check_out_layout,
    common_row,
    in_layout,
    layout_instance,
)

_U8 = [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.arange(24, 48, dtype=np.uint8)
       .reshape(2, 3, 4)]
_RAGGED = [np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(12, dtype=np.float32)
           .reshape(4, 3)]
_SHAPE_HINT = "; pass layout= with as many letters as the new shape has dimensions (or '')"


# -- reshape, reinterpret ---------------------------------------------------------------------

def _reshape_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    x = ins[0]
    shape = args.get("shape")
    if len(ins) > 1:
        shape = np.asarray(ins[1])
        if shape.dtype.kind not in "iu":
            raise ValueError(f"the shape input must hold integers, got {shape.dtype}")
    rel, src = args.get("rel_shape"), args.get("src_dims")
    if lead:  # a dense chunk: every sample must ask for the same shape
        shape, rel, src = common_row(shape), common_row(rel), common_row(src)
    out_dtype = types.to_numpy(args["dtype"]) if args.get("dtype") is not None else x.dtype
    target = k.reshape_target(x.shape[lead:], None if shape is None else np.ravel(shape),
                              rel, src, x.dtype.itemsize, np.dtype(out_dtype).itemsize)
    check_out_layout(len(target), args, _SHAPE_HINT)
    if out_dtype == x.dtype:
        return x.reshape(x.shape[:lead] + target)
    flat = np.ascontiguousarray(x).reshape(x.shape[:lead] + (-1,))
    return flat.view(out_dtype).reshape(x.shape[:lead] + target)


def _static_ndim(layouts: list, args: dict) -> int | None:
    if len(layouts) > 1:
        return None
    for key in ("shape", "rel_shape", "src_dims"):
        value = args.get(key)
        if isinstance(value, DataNode):  # a per-sample shape: known only at run time
            return None
        if value is not None:
            return len(value)
    return None


def _reshape_layout(name: str) -> Any:
    def layout(layouts: list, args: dict) -> str:
        if len(layouts) > 1 and (args.get("shape") is not None or
                                 args.get("rel_shape") is not None):
            raise ArgumentError(f"fn.{name}: a shape input and the arguments 'shape' / "
                                "'rel_shape' are mutually exclusive")
        ndim = _static_ndim(layouts, args)
        if args.get("layout") is not None:
            if ndim is not None and args["layout"] and len(args["layout"]) != ndim:
                raise ArgumentError(f"fn.{name}: argument 'layout' {args['layout']!r} does not "
                                    f"fit the {ndim}-D output shape")
            return args["layout"]
        src = layouts[0] or ""
        return src if ndim is None or ndim == len(src) else ""
    return layout


def _check_reshape(name: str) -> Any:
    def check(args: dict) -> None:
        if args.get("shape") is not None and args.get("rel_shape") is not None:
            raise ArgumentError(f"fn.{name}: arguments 'shape' and 'rel_shape' are mutually "
                                "exclusive")
        for key in ("shape", "rel_shape"):
            value = args.get(key)
            if isinstance(value, list) and sum(1 for v in value if v < 0) > 1:
                raise ArgumentError(f"fn.{name}: argument '{key}' may have one negative "
                                    f"(inferred) extent, got {value!r}")
        if isinstance(args.get("shape"), list) and 0 in args["shape"]:
            raise ArgumentError(f"fn.{name}: argument 'shape' must not contain 0, got "
                                f"{args['shape']!r}")
        src, rel = args.get("src_dims"), args.get("rel_shape")
        if isinstance(src, list) and isinstance(rel, list) and len(src) != len(rel):
            raise ArgumentError(f"fn.{name}: arguments 'src_dims' ({len(src)} entries) and "
                                f"'rel_shape' ({len(rel)}) must have the same length")
    return check


def _reshape_instance(name: str, keys: tuple[str, ...]) -> Any:
    def make(op: Any, pipeline: Any) -> Any:
        given = [key for key in keys if op.args.get(key) is not None or key in op.arg_nodes]
        if not given and len(op.inputs) == 1:
            raise ArgumentError(f"fn.{name}: nothing to do: give " +
                                ", ".join(f"'{key}'" for key in keys) + " or a shape input")
        return layout_instance(op, pipeline)
    return make


_RESHAPE_ARGS = (
    Arg("shape", "ints", None, "The output shape; one negative extent is inferred from the "
        "size. Mutually exclusive with 'rel_shape' and the shape input.", per_sample=True),
    Arg("rel_shape", "floats", None, "The output shape as multiples of the input's extents "
        "(rounded to nearest); one negative extent is inferred.", per_sample=True),
    Arg("src_dims", "ints", None, "Which input dimension each output dimension comes from; "
        "-1 inserts an axis of extent 1.", per_sample=True, range=(-1, None)),
    Arg("layout", "layout", None, "Layout of the output (default: the input's when the "
        "number of dimensions is unchanged, else empty)."),
)
_SHAPE_INPUT = Input("shape_input", "The output shape per sample (same as 'shape').",
                     optional=True)

register(OpSchema(
    name="reshape",
    doc="Views each sample with another shape and/or layout; the data is not copied.",
    inputs=(Input("data", "The data."), _SHAPE_INPUT),
    args=_RESHAPE_ARGS,
    kernel=_reshape_sample, batch_kernel=lambda ins, a, c: _reshape_sample(ins, a, c, lead=1),
    instance=_reshape_instance("reshape", ("shape", "rel_shape", "src_dims", "layout")),
    check=_check_reshape("reshape"), layout=_reshape_layout("reshape"),
    examples=(
        Example(args={"shape": [6, -1]}, inputs=(_U8,)),
        Example(args={"rel_shape": [0.5, -1]}, inputs=(_U8,)),
        Example(args={"src_dims": [-1, 2, 1, 0]}, inputs=(_U8,)),
        Example(args={"shape": [-1]}, inputs=(_RAGGED,)),
        Example(args={"layout": "XY"}, inputs=(_RAGGED,)),
        Example(inputs=(_U8, [np.array([4, 6], np.int32)] * 2)),
        Example(args={"shape": [5, 4]}, inputs=(_U8,), raises=RuntimeError,
                match="cannot reshape a sample of shape (2, 3, 4) (24 elements) to (5, 4)"),
        Example(args={"shape": [-1, -1]}, inputs=(_U8,), raises=ValueError,
                match="may have one negative"),
        Example(inputs=(_U8,), raises=ValueError, match="nothing to do"),
    ),
))

register(OpSchema(
    name="reinterpret",
    doc="Views each sample's bytes as another type, shape and/or layout; without a shape, "
        "the innermost extent is scaled to the new type's size.",
    inputs=(Input("data", "The data."), _SHAPE_INPUT),
    args=(Arg("dtype", "dtype", None, "The output type (default: the input's)."),
          *_RESHAPE_ARGS),
    kernel=_reshape_sample, batch_kernel=lambda ins, a, c: _reshape_sample(ins, a, c, lead=1),
    instance=_reshape_instance("reinterpret", ("dtype", "shape", "rel_shape", "src_dims",
                                               "layout")),
    check=_check_reshape("reinterpret"), layout=_reshape_layout("reinterpret"),
    dtype=lambda d, a: types.to_numpy(a["dtype"]) if a.get("dtype") is not None else d[0],
    examples=(
        Example(args={"dtype": types.INT32}, inputs=(_U8,)),
        Example(args={"dtype": types.INT16, "shape": [-1]}, inputs=(_U8,)),
        Example(args={"dtype": types.INT64}, inputs=(_U8,), raises=RuntimeError,
                match="innermost dimension (4 x 1 bytes) is not a multiple"),
        Example(inputs=(_U8,), raises=ValueError, match="nothing to do"),
    ),
))


# -- transpose ----------------------------------------------------------------------------------

def _transpose_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    out = k.transpose_cpu(ins[0], args.get("perm"), lead)
    check_out_layout(out.ndim - lead, args)
    return out


def _transpose_layout(layouts: list, args: dict) -> str:
    perm = args.get("perm")
    if args.get("output_layout") is not None:
        out = args["output_layout"]
        if perm is not None and out and len(out) != len(perm):
            raise ArgumentError(f"fn.transpose: argument 'output_layout' {out!r} does not fit "
                                f"'perm' {perm!r}")
        return out
    src = layouts[0] or ""
    if not args["transpose_layout"] or not src:
        return src
    if perm is None:
        return src[::-1]
    if len(perm) != len(src):
        raise ArgumentError(f"fn.transpose: argument 'perm' {perm!r} has {len(perm)} entries, "
                            f"but the input layout {src!r} has {len(src)} dimensions")
    return "".join(src[p] for p in perm)


def _check_perm(args: dict) -> None:
    perm = args.get("perm")
    if perm is not None and sorted(perm) != list(range(len(perm))):
        raise ArgumentError(f"fn.transpose: argument 'perm' must be a permutation of "
                            f"0..{len(perm) - 1}, got {perm!r}")


register(OpSchema(
    name="transpose",
    doc="Reorders the dimensions: output dimension i is input dimension perm[i].",
    inputs=(Input("input", "The data."),),
    args=(Arg("perm", "ints", None, "The permutation (default: the dimensions reversed)."),
          Arg("transpose_layout", "bool", True, "Permute the layout's letters along with the "
              "dimensions (else the input's layout is kept)."),
          Arg("output_layout", "layout", None, "Sets the output layout; overrides "
              "'transpose_layout'.")),
    kernel=_transpose_sample, batch_kernel=lambda ins, a, c: _transpose_sample(ins, a, c, 1),
    instance=layout_instance, check=_check_perm, layout=_transpose_layout,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.tensor", "transpose"),
    examples=(
        Example(args={"perm": [2, 0, 1]}, inputs=(_U8,)),
        Example(inputs=(_RAGGED,)),
        Example(args={"perm": [1, 0], "output_layout": "AB"}, inputs=(_RAGGED,)),
        Example(args={"perm": [2, 0, 0]}, inputs=(_U8,), raises=ValueError,
                match="must be a permutation of 0..2"),
        Example(args={"perm": [1, 0]}, inputs=(_U8,), raises=RuntimeError,
                match="'perm' [1, 0] has 2 entries, but the sample (2, 3, 4) has 3"),
    ),
))


# -- expand_dims, squeeze -----------------------------------------------------------------------

def _expand_layout(layouts: list, args: dict) -> str:
    names, axes = args.get("new_axis_names") or "", args["axes"]
    if not names:
        return ""
    src = layouts[0] or ""
    out: list[str | None] = [None] * (len(src) + len(axes))
    for a, name in zip(axes, names, strict=True):
        if a >= len(out):
            raise ArgumentError(f"fn.expand_dims: 'axes' entry {a} is out of range for an "
                                f"input of layout {src!r} with {len(axes)} new axes")
        out[a] = name
    rest = iter(src)
    return "".join(c if c is not None else next(rest) for c in out)


def _check_expand(args: dict) -> None:
    axes, names = args["axes"], args.get("new_axis_names") or ""
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"fn.expand_dims: argument 'axes' names an axis twice: {axes!r}")
    if names and len(names) != len(axes):
        raise ArgumentError(f"fn.expand_dims: argument 'new_axis_names' {names!r} must have "
                            f"one letter per entry of 'axes' {axes!r}")


def _expand_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    out = k.expand_dims_cpu(ins[0], args["axes"], lead)
    check_out_layout(out.ndim - lead, args, "; 'new_axis_names' needs an input with a layout")
    return out


register(OpSchema(
    name="expand_dims",
    doc="Inserts dimensions of extent 1 at the given output positions.",
    inputs=(Input("data", "The data."),),
    args=(Arg("axes", "ints", REQUIRED, "Positions of the new dimensions in the output.",
              range=(0, None)),
          Arg("new_axis_names", "layout", "", "Names of the new dimensions, one per axis; "
              "without them the output layout is empty.")),
    kernel=_expand_sample, batch_kernel=lambda ins, a, c: _expand_sample(ins, a, c, 1),
    instance=layout_instance, check=_check_expand, layout=_expand_layout,
    examples=(
        Example(args={"axes": [0, 4]}, inputs=(_U8,)),
        Example(args={"axes": [1]}, inputs=(_RAGGED,)),
        Example(args={"axes": [1, 0], "new_axis_names": "AB"},
                inputs=([np.array(1.5, np.float32), np.array(2.5, np.float32)],)),
        Example(args={"axes": [-1]}, inputs=(_U8,), raises=ValueError, match="must be in [0"),
        Example(args={"axes": [4]}, inputs=(_U8,), raises=RuntimeError,
                match="'axes' entry 4 is out of range"),
    ),
))


def _squeeze_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    x, names = ins[0], args.get("axis_names")
    if names is not None:  # checked against the layout when the graph was built
        axes = [in_layout(args).index(c) for c in names]
    else:
        axes = np.ravel(common_row(args["axes"]) if lead else args["axes"]).tolist()
    out = k.squeeze_cpu(x, axes, lead)
    check_out_layout(out.ndim - lead, args)
    return out


def _squeeze_layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    names, axes = args.get("axis_names"), args.get("axes")
    if names is not None:
        for c in names:
            if c not in src:
                raise ArgumentError(f"fn.squeeze: axis {c!r} of 'axis_names' is not in the "
                                    f"input layout {src!r}")
        return "".join(c for c in src if c not in names)
    if axes is None or not src:
        return ""  # axes given per sample: the output's dimensions are not known here
    try:
        drop = {k.normalize_axis(a, len(src), "axes") for a in axes}
    except ValueError as e:
        raise ArgumentError(f"fn.squeeze: argument {e} (input layout {src!r})") from None
    return "".join(c for i, c in enumerate(src) if i not in drop)


def _check_squeeze(args: dict) -> None:
    has_axes, has_names = args.get("axes") is not None, args.get("axis_names") is not None
    if has_axes == has_names:
        raise ArgumentError("fn.squeeze: give exactly one of 'axes' and 'axis_names'")
    axes = args.get("axes")
    if isinstance(axes, list) and len(set(axes)) != len(axes):
        raise ArgumentError(f"fn.squeeze: argument 'axes' names an axis twice: {axes!r}")


register(OpSchema(
    name="squeeze",
    doc="Removes dimensions of extent 1, given by index or by layout name.",
    inputs=(Input("data", "The data."),),
    args=(Arg("axes", "ints", None, "Indices of the dimensions to remove (negative count "
              "from the back).", per_sample=True),
          Arg("axis_names", "layout", None, "Layout letters of the dimensions to remove.")),
    kernel=_squeeze_sample, batch_kernel=lambda ins, a, c: _squeeze_sample(ins, a, c, 1),
    instance=layout_instance, check=_check_squeeze, layout=_squeeze_layout,
    examples=(
        Example(args={"axes": [0, 2]}, inputs=([np.zeros((1, 3, 1, 2), np.uint8)] * 2,)),
        Example(args={"axes": [-1]}, inputs=([np.ones((2, 1), np.float32),
                                              np.ones((3, 1), np.float32)],)),
        Example(args={}, inputs=(_U8,), raises=ValueError, match="exactly one of 'axes'"),
        Example(args={"axes": [1]}, inputs=(_U8,), raises=RuntimeError,
                match="cannot squeeze axis 1 of extent 3"),
    ),
))
