"""``fn.slice``: a window of each sample, from named arguments or anchor/shape inputs.

Coordinates may be absolute or relative to the sample's extents (rounded to nearest, half
away from zero). By DALI's convention the arguments list the axes in (W, H) order: by the
layout names 'WH' (an input without a layout being HW, HWC or DHWC by its rank), else by
the indices [1, 0].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import tensor as k
from stoker.kernels.cpu.tensor import window as W
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import common_row, in_layout, layout_instance

_NAMED = ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")
_ENDS = ("end", "rel_end", "shape", "rel_shape")

_AXES = Arg("axes", "ints", [1, 0], "Axes the slice arguments refer to, in order; negative "
            "count from the back.", per_sample=True)
_AXIS_NAMES = Arg("axis_names", "layout", "WH", "Axes the slice arguments refer to, by "
                  "layout name; used instead of 'axes' when given, or when neither is given "
                  "and the input has a layout.")


def _explicit(args: dict, arg: Arg) -> bool:
    # An explicit axes=[1, 0] is honoured even on a 'CHW' input; a default is not.
    return arg.name in args.get("_given", ())


_UNNAMED = {2: "HW", 3: "HWC", 4: "DHWC"}


def _slice_axes(args: dict, ndim: int) -> list[int]:
    """The sliced axes, in the order the arguments list them. As in DALI, empty 'axes'
    (a constant or one sample's value) or an empty 'axis_names' mean every axis."""
    # An input without a layout is named as DALI names it for this (measured): HW, HWC,
    # DHWC by rank, so default and given axis_names work on unnamed images too.
    src, names = in_layout(args) or _UNNAMED.get(ndim, ""), args["axis_names"]
    use_names = _explicit(args, _AXIS_NAMES) or (
        not _explicit(args, _AXES) and src and all(c in src for c in names))
    if use_names:
        missing = [c for c in names if c not in src]
        if missing:  # DALI's words after stoker's
            raise ValueError(f"axis {missing[0]!r} of 'axis_names' {names!r} is not in the "
                             f"input layout {src!r}: Axis '{missing[0]}' is not present in "
                             "the input layout; use 'axes' to name axes by index")
        return [src.index(c) for c in names] if names else list(range(ndim))
    axes = [int(a) for a in np.ravel(args["axes"])]
    return k.check_axes(axes, ndim) if axes else list(range(ndim))


def _channel_axis(args: dict, ndim: int) -> int:
    src = in_layout(args)
    return src.index("C") if "C" in src else ndim - 1


def _slice(x: np.ndarray, anchor: Any, shape: Any, args: dict, lead: int) -> np.ndarray:
    in_shape = x.shape[lead:]
    axes = _slice_axes(args, len(in_shape))
    if anchor is not None:
        if any(args.get(key) is not None for key in _NAMED):
            raise ValueError("anchor/shape inputs and the arguments start/end/shape/rel_* "
                             "are mutually exclusive")
        lo, hi = W.slice_window_from_inputs(in_shape, axes, anchor, shape,
                                            args["normalized_anchor"], args["normalized_shape"])
    else:
        lo, hi = W.slice_window(in_shape, axes, **{key: args.get(key) for key in _NAMED})
    policy = args["out_of_bounds_policy"]
    lo, hi = W.check_window(in_shape, lo, hi, policy)
    dtype = types.to_numpy(args["dtype"]) if args.get("dtype") is not None else x.dtype
    return W.slice_cpu(x, lo, hi, policy, args["fill_values"],
                       _channel_axis(args, len(in_shape)), dtype, lead)


def slice_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    anchor, shape = (ins[1], ins[2]) if len(ins) == 3 else (None, None)
    return _slice(ins[0], anchor, shape, args, lead=0)


def slice_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    """A dense chunk in one call, when every sample asks for the same window."""
    rows = {key: common_row(args.get(key)) for key in (*_NAMED, "axes") if key in args}
    anchor, shape = (common_row(ins[1]), common_row(ins[2])) if len(ins) == 3 else (None, None)
    return _slice(ins[0], anchor, shape, {**args, **rows}, lead=1)


def _check(args: dict) -> None:
    """Arguments that exclude each other. Checked at build, when DALI checks them, and
    worded as DALI's messages (its words in double quotes), which code may look for."""
    if args.get("start") is not None and args.get("rel_start") is not None:
        raise ArgumentError('fn.slice: "start" and "rel_start" arguments are mutually '
                            "exclusive")
    ends = [key for key in _ENDS if args.get(key) is not None]
    if len(ends) > 1:
        raise ArgumentError(f"fn.slice: arguments {', '.join(repr(e) for e in ends)} given: "
                            '"end", "rel_end", "shape", and "rel_shape" arguments are '
                            "mutually exclusive")
    if _explicit(args, _AXES) and _explicit(args, _AXIS_NAMES):
        raise ArgumentError('fn.slice: "axes" and "axis_names" are mutually exclusive')


def _instance(op: Any, pipeline: Any) -> Any:
    _check({**op.args, **op.arg_nodes})
    named = [key for key in _NAMED if op.args.get(key) is not None or key in op.arg_nodes]
    n_in = len(op.inputs)
    if n_in == 2:
        raise ArgumentError("fn.slice: give both the anchor and the shape inputs, or neither")
    # DALI finds these two at run; stoker has all it needs at build.
    if n_in == 3 and named:
        raise ArgumentError(f"fn.slice: anchor/shape inputs and the arguments {named} are "
                            "mutually exclusive (Named arguments start/end/shape are not "
                            "compatible with positional anchor and shape inputs)")
    if n_in == 1 and not named:
        raise ArgumentError("fn.slice: nothing to slice: give start/rel_start with "
                            "end/rel_end/shape/rel_shape, or anchor and shape inputs "
                            "(Expected named slice arguments (e.g. start/end, start/shape) or "
                            "positional inputs (start, shape).)")
    return layout_instance(op, pipeline)


def _layout(layouts: list, args: dict) -> str:
    src = layouts[0] or ""
    # A named layout is checked now; an empty one may be the data's at run time (a layout
    # given to feed_input), so an input without one fails at run, as in DALI.
    if _explicit(args, _AXIS_NAMES) and src:
        for c in args["axis_names"]:
            if c not in src:
                raise ArgumentError(f"fn.slice: axis {c!r} of 'axis_names' is not in the input "
                                    f"layout {src!r}; use 'axes' to name axes by index")
    return src


_IMG = [np.arange(48, dtype=np.uint8).reshape(4, 6, 2),
        np.arange(64, dtype=np.uint8).reshape(8, 4, 2)]

register(OpSchema(
    name="slice",
    doc="Extracts a window of each sample, given by start/end/shape arguments (absolute or "
        "relative) or by anchor and shape inputs. Windows leaving the sample raise, are "
        "trimmed or are filled, per 'out_of_bounds_policy'.",
    inputs=(Input("data", "The data."),
            Input("anchor", "Window start per sample (relative when float and "
                  "'normalized_anchor').", optional=True),
            Input("shape_input", "Window shape per sample (relative when float and "
                  "'normalized_shape').", optional=True)),
    args=(Arg("start", "ints", None, "Window start (absolute).", per_sample=True),
          Arg("rel_start", "floats", None, "Window start, relative to the extents.",
              per_sample=True),
          Arg("end", "ints", None, "Window end (absolute, exclusive).", per_sample=True),
          Arg("rel_end", "floats", None, "Window end, relative to the extents.",
              per_sample=True),
          Arg("shape", "ints", None, "Window shape (absolute).", per_sample=True),
          Arg("rel_shape", "floats", None, "Window shape, relative to the extents.",
              per_sample=True),
          _AXES, _AXIS_NAMES,
          Arg("normalized_anchor", "bool", True, "A float anchor input is relative."),
          Arg("normalized_shape", "bool", True, "A float shape input is relative."),
          Arg("out_of_bounds_policy", "str", "error", "What a window leaving the sample does.",
              choices=tuple(W.POLICY_MODES)),
          Arg("fill_values", "floats", [0.0], "Fill for 'pad'/'constant': one value, or one per "
              "channel (the layout's 'C', else the last axis)."),
          Arg("dtype", "dtype", None, "Output type (default: the input's); conversion "
              "saturates.")),
    kernel=slice_sample, batch_kernel=slice_batch, instance=_instance, layout=_layout,
    dtype=lambda d, a: types.to_numpy(a["dtype"]) if a.get("dtype") is not None else d[0],
    examples=(
        Example(args={"rel_start": [0.5, 0.25], "rel_shape": [0.5, 0.5]}, inputs=(_IMG,)),
        Example(args={"start": [1, 2], "end": [3, 4], "dtype": types.FLOAT}, inputs=(_IMG,)),
        Example(args={"start": [3, -1], "shape": [3, 3], "out_of_bounds_policy": "pad",
                      "fill_values": [7.0, 8.0]}, inputs=(_IMG,)),
        Example(args={"start": [-3], "shape": [10], "axes": [0],
                      "out_of_bounds_policy": "reflect_101"}, inputs=(_IMG,)),
        Example(inputs=(_IMG, [np.array([0.5, 0.25], np.float32)] * 2,
                        [np.array([0.5, 0.5], np.float32)] * 2)),
        Example(args={"start": [5, 2], "shape": [2, 2]}, inputs=(_IMG,), raises=RuntimeError,
                match="slice window [2:4, 5:7, 0:2] is outside the sample of shape (4, 6, 2)"),
        Example(args={"start": [1, 1], "end": [2, 2], "shape": [1, 1]}, inputs=(_IMG,),
                raises=ValueError, match="are mutually exclusive"),
        Example(inputs=(_IMG,), raises=ValueError, match="nothing to slice"),
    ),
))
