"""``fn.roi_random_crop``: the start of a fixed-size crop window placed at random so that it
holds as much of a region of interest as it can.

Per axis, as in DALI 2.4: a ROI larger than the window gives a start anywhere that keeps
the window inside the ROI; a smaller one, anywhere that keeps the ROI inside the window;
with the input's shape (``in_shape``, or the data as input) the window also stays inside
the input. The start is drawn uniformly among those integers (int64 output).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema


def _vec(value: Any, ndim: int | None, name: str) -> np.ndarray:
    arr = np.asarray(value, np.int64).reshape(-1)
    if ndim is not None and arr.size == 1:
        return np.repeat(arr, ndim)  # one value for every axis, as DALI reads it
    if ndim is not None and arr.size != ndim:
        raise ValueError(f"'{name}' has {arr.size} values, expected {ndim}")
    return arr


def roi_random_crop_kernel(ins: list, args: dict, sctx: Any) -> np.ndarray:
    crop = _vec(args["crop_shape"], None, "crop_shape")
    nd = crop.size
    start = _vec(args["roi_start"], nd, "roi_start")
    if args.get("roi_end") is not None:
        end = _vec(args["roi_end"], nd, "roi_end")
    else:
        end = start + _vec(args["roi_shape"], nd, "roi_shape")
    shape = None
    if ins:
        shape = np.asarray(np.shape(ins[0]), np.int64)
        if shape.size != nd:
            raise ValueError(f"the input has {shape.size} dimensions, crop_shape {nd}")
    elif args.get("in_shape") is not None:
        shape = _vec(args["in_shape"], nd, "in_shape")
    if shape is not None:
        if (crop > shape).any():
            raise ValueError(f"crop_shape {crop.tolist()} is bigger than the input shape "
                             f"{shape.tolist()}")
        if (start < 0).any() or (end > shape).any():
            raise ValueError(f"the ROI [{start.tolist()}, {end.tolist()}) is out of the "
                             f"input's bounds {shape.tolist()}")
    big = end - start > crop
    lo = np.where(big, start, end - crop)
    hi = np.where(big, end - crop, start)
    if shape is not None:
        lo, hi = np.maximum(lo, 0), np.minimum(hi, shape - crop)
    hi = np.maximum(hi, lo)
    return sctx.generator().integers(lo, hi + 1).astype(np.int64)


def _check(args: dict) -> None:
    if (args.get("roi_end") is None) == (args.get("roi_shape") is None):
        raise ArgumentError("fn.roi_random_crop: give the ROI's end as 'roi_end' or "
                            "'roi_shape', one of them")
    if args.get("in_shape") is not None and args.get("_n_inputs", 0):
        raise ArgumentError("fn.roi_random_crop: 'in_shape' cannot be given with the data as "
                            "input (its shape is used)")


register(OpSchema(
    name="roi_random_crop",
    doc="A random start (int64, one per axis) for a crop_shape window that holds as much of "
        "the region of interest [roi_start, roi_end) as it can, inside in_shape if given.",
    inputs=(Input("input", "Optional: the data to crop (its shape bounds the window).",
                  optional=True),),
    args=(Arg("crop_shape", "ints", REQUIRED, "The window's shape.", per_sample=True),
          Arg("roi_start", "ints", REQUIRED, "The ROI's start.", per_sample=True),
          Arg("roi_end", "ints", None, "The ROI's end (excluded).", per_sample=True),
          Arg("roi_shape", "ints", None, "The ROI's shape.", per_sample=True),
          Arg("in_shape", "ints", None, "The input's shape.", per_sample=True)),
    kernel=roi_random_crop_kernel, random=True, check=_check,
    layout=lambda layouts, a: "", dtype=lambda d, a: np.dtype(np.int64),
    examples=(Example(args={"crop_shape": [4, 4], "roi_start": [2, 2], "roi_end": [10, 10],
                            "in_shape": [20, 20]}),
              Example(args={"crop_shape": [10, 10], "roi_start": [5, 5], "roi_shape": [3, 3]}),
              Example(inputs=([np.zeros((20, 16, 3), np.uint8)] * 3,),
                      args={"crop_shape": [4, 4, 3], "roi_start": [2, 2, 0],
                            "roi_end": [10, 10, 3]}),
              Example(args={"crop_shape": [4, 4], "roi_start": [2, 2]}, raises=ArgumentError,
                      match="one of them")),
))
