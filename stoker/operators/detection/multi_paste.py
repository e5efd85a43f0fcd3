"""``fn.multi_paste``: pastes regions of several images onto one canvas per output sample.

With ``in_ids`` (one input), output sample i gets the regions of the input samples
``in_ids[i]`` of the same batch, in order (a later paste covers an earlier one); without
it, output sample i gets sample i of each input. Regions are (H, W) windows given in
pixels or relative to the source (``in_anchors``/``in_anchors_rel``, ``shapes``/
``shapes_rel``), placed at ``out_anchors``/``out_anchors_rel``, one row per paste; the
canvas is ``output_size`` (or the inputs' common shape) filled with zeros. HWC or FHWC
data, DALI 2.4's checks: every region inside its source and inside the canvas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import batch_stage

_WINDOW_ARGS = ("in_anchors", "in_anchors_rel", "shapes", "shapes_rel", "out_anchors",
                "out_anchors_rel")


def _rows(argv: dict, args: dict, name: str, j: int, k: int) -> np.ndarray | None:
    value = argv[name][j] if name in argv else args.get(name)
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.size != 2 * k:
        raise ValueError(f"'{name}' must have {k} rows of (H, W) for {k} pastes, got shape "
                         f"{arr.shape}")
    return arr.reshape(k, 2)


def _absolute(rel: np.ndarray, extent: np.ndarray, round_up: bool = False) -> np.ndarray:
    """Pixels of a relative anchor (rounded down) or shape (rounded up), as DALI rounds
    them (measured)."""
    scaled = rel.astype(np.float32) * extent.astype(np.float32)
    return (np.ceil(scaled) if round_up else np.floor(scaled)).astype(np.int64)


def _paste_one(sources: list[np.ndarray], argv: dict, args: dict, j: int, out_hw: Any,
               dtype: np.dtype) -> np.ndarray:
    k = len(sources)
    first = sources[0]
    frames = first.ndim == 4
    out_hw = np.asarray(out_hw, np.int64).reshape(-1)
    canvas = np.zeros((*first.shape[:1] * frames, int(out_hw[0]), int(out_hw[1]),
                       first.shape[-1]), dtype)
    in_a = _rows(argv, args, "in_anchors", j, k)
    in_r = _rows(argv, args, "in_anchors_rel", j, k)
    sh = _rows(argv, args, "shapes", j, k)
    sh_r = _rows(argv, args, "shapes_rel", j, k)
    out_a = _rows(argv, args, "out_anchors", j, k)
    out_r = _rows(argv, args, "out_anchors_rel", j, k)
    for p, src in enumerate(sources):
        src_hw = np.asarray(src.shape[frames:frames + 2], np.int64)
        anchor = in_a[p] if in_a is not None else (
            _absolute(in_r[p], src_hw) if in_r is not None else np.zeros(2, np.int64))
        size = sh[p] if sh is not None else (
            _absolute(sh_r[p], src_hw, True) if sh_r is not None else src_hw - anchor)
        dst = out_a[p] if out_a is not None else (
            _absolute(out_r[p], out_hw) if out_r is not None else np.zeros(2, np.int64))
        anchor, size, dst = (np.asarray(v, np.int64) for v in (anchor, size, dst))
        if (anchor < 0).any() or (anchor + size > src_hw).any() or (size < 0).any():
            raise ValueError(f"paste {p}: the region at {anchor.tolist()} of shape "
                             f"{size.tolist()} is not inside its {src_hw.tolist()} source")
        if (dst < 0).any() or (dst + size > out_hw).any():
            raise ValueError(f"paste {p}: the pasted region must be within the output "
                             f"bounds: anchor {dst.tolist()}, shape {size.tolist()}, canvas "
                             f"{out_hw.tolist()}")
        (y, x), (h, w), (oy, ox) = anchor, size, dst
        region = src[..., y:y + h, x:x + w, :]
        canvas[..., oy:oy + h, ox:ox + w, :] = region.astype(dtype, copy=False)
    return canvas


def _run(ins: list, args: dict, argv: dict, n: int) -> Any:
    if n == 0:
        return ins[0]
    batches = [[np.asarray(x[j]) for j in range(n)] for x in ins]
    for batch in batches:
        for s in batch:
            if s.ndim not in (3, 4):
                raise ValueError(f"fn.multi_paste: samples must be HWC or FHWC, got a "
                                 f"{s.ndim}-D sample")
    dtype = np.dtype(types.to_numpy(args["dtype"])) if args.get("dtype") is not None else \
        batches[0][0].dtype
    ids = argv.get("in_ids") if "in_ids" in argv else args.get("in_ids")
    outs = []
    for j in range(n):
        if ids is not None:
            row = np.asarray(ids[j] if "in_ids" in argv else ids, np.int64).reshape(-1)
            if ((row < 0) | (row >= n)).any():
                raise ValueError(f"fn.multi_paste: 'in_ids' must be in [0, {n - 1}] (the "
                                 f"batch size is {n}), got {row.tolist()}")
            sources = [batches[0][int(i)] for i in row]
        else:
            sources = [b[j] for b in batches]
        if not sources:
            raise ValueError("fn.multi_paste: a sample has no region to paste")
        size = argv["output_size"][j] if "output_size" in argv else args.get("output_size")
        if size is None:
            shapes = {s.shape for b in batches for s in b}
            if len(shapes) != 1:
                raise ValueError("fn.multi_paste: the inputs' shapes differ; give "
                                 "'output_size'")
            size = sources[0].shape[-3:-1]
        outs.append(_paste_one(sources, argv, args, j, size, dtype))
    return outs


def _check(args: dict) -> None:
    for a, b in (("in_anchors", "in_anchors_rel"), ("shapes", "shapes_rel"),
                 ("out_anchors", "out_anchors_rel")):
        if a in args["_given"] and b in args["_given"]:
            raise ArgumentError(f"fn.multi_paste: give '{a}' or '{b}', not both")
    if "in_ids" in args["_given"] and args.get("_n_inputs", 1) != 1:
        raise ArgumentError("fn.multi_paste: with 'in_ids' the operator takes exactly one "
                            "input")


_IMG = [np.full((4, 5, 3), i + 1, np.uint8) for i in range(3)]

register(OpSchema(
    name="multi_paste",
    doc="Pastes regions of several images onto a zero canvas per output sample: the "
        "samples in_ids[i] of the one input, or sample i of each input.",
    # Up to 64 inputs, as DALI takes.
    inputs=(Input("images", "HWC or FHWC images."),
            *(Input(f"images_{k}", "More images, pasted sample by sample.", optional=True)
              for k in range(1, 64))),
    args=(Arg("in_ids", "ints", None, "Which samples of the batch to paste (per output).",
              per_sample=True),
          Arg("in_anchors", "ints", None, "(K, 2) region starts in the sources (H, W).",
              per_sample=True),
          Arg("in_anchors_rel", "floats", None, "Region starts relative to the sources.",
              per_sample=True),
          Arg("shapes", "ints", None, "(K, 2) region shapes.", per_sample=True),
          Arg("shapes_rel", "floats", None, "Region shapes relative to the sources.",
              per_sample=True),
          Arg("out_anchors", "ints", None, "(K, 2) where the regions go on the canvas.",
              per_sample=True),
          Arg("out_anchors_rel", "floats", None, "The same, relative to the canvas.",
              per_sample=True),
          Arg("output_size", "ints", None, "The canvas (H, W).", per_sample=True),
          Arg("dtype", "dtype", None, "Output type (default: the input's).")),
    stage="batch", instance=batch_stage(_run), check=_check,
    layout=lambda layouts, a: layouts[0] or "",
    dtype=lambda d, a: types.to_numpy(a["dtype"]) if a.get("dtype") is not None else d[0],
    examples=(Example(inputs=(_IMG,), args={"in_ids": [0, 1], "output_size": [6, 7]}),
              Example(inputs=(_IMG,), args={"in_ids": [0, 2], "output_size": [6, 7],
                                            "out_anchors": [0, 0, 2, 3],
                                            "shapes": [2, 2, 3, 3], "in_anchors": [1, 1, 0, 0],
                                            "dtype": types.FLOAT}),
              Example(inputs=(_IMG, _IMG), args={"shapes": [2, 2, 2, 2],
                                                 "out_anchors": [0, 0, 1, 1]}),
              Example(inputs=(_IMG,), args={"in_ids": [0], "output_size": [3, 3]},
                      raises=RuntimeError, match="within the output bounds")),
))
