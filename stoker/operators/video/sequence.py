"""Sequence operators: ``sequence_rearrange``, ``per_frame``, ``element_extract``.

They work on the outer ``F`` (frames) axis of sequences such as a video reader's FHWC
clips: reorder or repeat frames, pick frames out as separate outputs, or mark an argument
tensor as holding one value per frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

_SEQ = [np.arange(2 * 3 * 2 * 1, dtype=np.uint8).reshape(2, 3, 2, 1) + 10 * k for k in range(2)]


def _frames_first(layouts: list, fn_name: str) -> str:
    layout = layouts[0] or ""
    if layout and not layout.startswith("F"):
        raise ArgumentError(f"{fn_name}: expects sequences whose layout starts with 'F', "
                            f"got {layout!r}")
    return layout


def rearrange_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    order = np.asarray(args["new_order"], np.int64).reshape(-1)
    if order.size == 0:
        raise ValueError("'new_order' is empty: a sequence cannot lose every frame")
    if x.ndim == 0:
        raise ValueError("expects sequences (at least one dimension, the frames)")
    if (order < 0).any() or (order >= x.shape[0]).any():
        raise ValueError(f"'new_order' {order.tolist()} indexes frames outside "
                         f"[0, {x.shape[0]})")
    return x[order]


register(OpSchema(
    name="sequence_rearrange",
    doc="Reorders the frames of each sequence: out[i] = in[new_order[i]] (frames may repeat "
        "or be left out).",
    inputs=(Input("input", "Sequences, frames first (F...)."),),
    args=(Arg("new_order", "ints", REQUIRED, "Frame order; a per-sample value per sequence.",
              per_sample=True),),
    devices=("cpu", "gpu"),
    kernel=rearrange_kernel,
    layout=lambda layouts, args: _frames_first(layouts, "fn.sequence_rearrange"),
    examples=(Example(inputs=(_SEQ,), args={"new_order": [1, 1, 0]}),
              Example(inputs=(_SEQ,), args={"new_order": [2]}, raises=RuntimeError,
                      match="outside")),
))


def _per_frame_layout(layouts: list, args: dict) -> str:
    layout = layouts[0] or ""
    if args.get("replace") and layout:
        return "F" + layout[1:]
    if layout.startswith("F"):
        return layout
    # Without a layout the frames axis is named and the others left unnamed, as in DALI.
    return "F" + layout if layout else "F"


def per_frame_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    if np.ndim(ins[0]) == 0:
        raise ValueError("a scalar has no frames axis; give one value per frame (1-D or more)")
    return ins[0]


register(OpSchema(
    name="per_frame",
    doc="Marks a tensor as holding one value per frame (its layout gets a leading 'F'), so "
        "an operator given it as an argument applies each frame its own value.",
    inputs=(Input("input", "Per-sample argument data, frames first."),),
    args=(Arg("replace", "bool", False, "Replace the first layout letter with 'F' instead "
              "of adding one."),),
    devices=("cpu", "gpu"),
    kernel=per_frame_kernel,
    layout=_per_frame_layout,
    examples=(Example(inputs=([np.array([1.0, 2.0], np.float32)],)),
              Example(inputs=([np.array(1.0, np.float32)],), raises=RuntimeError,
                      match="frames axis")),
))


def _extract_outputs(args: dict) -> int:
    return len(args.get("element_map") or [0])


def extract_kernel(ins: list, args: dict, ctx: Any) -> tuple:
    x = np.asarray(ins[0])
    outs = []
    for k in args["element_map"]:
        if not 0 <= k < x.shape[0]:
            raise ValueError(f"'element_map' asks for frame {k} of a sequence of "
                             f"{x.shape[0]}")
        outs.append(x[k])
    return tuple(outs) if len(outs) > 1 else outs[0]


register(OpSchema(
    name="element_extract",
    doc="Picks frames out of sequences: one output per entry of element_map, each the "
        "frame at that index (the F axis dropped: FHWC -> HWC).",
    inputs=(Input("input", "Sequences, frames first (F...)."),),
    args=(Arg("element_map", "ints", REQUIRED, "Indices of the frames to output."),),
    num_outputs=_extract_outputs,
    devices=("cpu", "gpu"),
    kernel=extract_kernel,
    layout=lambda layouts, args: [(_frames_first(layouts, "fn.element_extract") or "F")[1:]]
    * _extract_outputs(args),
    dtype=lambda dtypes, args: [dtypes[0]] * _extract_outputs(args),
    examples=(Example(inputs=(_SEQ,), args={"element_map": [1, 0]}),
              Example(inputs=(_SEQ,), args={"element_map": [0]}),
              Example(inputs=(_SEQ,), args={"element_map": [5]}, raises=RuntimeError,
                      match="frame 5")),
))
