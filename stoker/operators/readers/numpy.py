"""``fn.readers.numpy``: arrays from ``.npy`` files, whole or a region of interest, as
DALI 2.4 reads them.

The files come from ``file_root`` (its ``file_filter`` matches in the root and one level
of sub-folders, DALI's listing), ``file_list`` (one path per line) or ``files``. Each
sample is the stored array (its dtype and shape, C order); ``readers/base.py`` shards,
shuffles and checkpoints the list. Reading is ``stoker/readers/npy.py``.

A region of interest (``roi_start``/``roi_end``/``roi_shape``, their ``rel_`` forms,
``roi_axes``, ``out_of_bounds_policy``, ``fill_value``; constants or per-sample DataNodes)
is cut by a second, per-sample operator that the call adds after the reader
(``_readers.numpy_roi``): the reader hands over mapped arrays without copying, and the
workers copy only the region's pages, in parallel (a reader runs on one thread).

Where stoker differs from DALI 2.4 on purpose: big-endian files are read (DALI refuses
them), 0-d arrays too (DALI fails to map them).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import window as k
from stoker.operators.machinery.registry import call_op, register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.listed import ListedFilesReader, check_dataset, dataset_args
from stoker.readers.npy import NpyError, read
from stoker.readers.samples import path as _sample

_FN = "fn.readers.numpy"
_STARTS = ("roi_start", "rel_roi_start")
_ENDS = ("roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")
ROI_ARGS = (*_STARTS, *_ENDS)
POLICIES = ("error", "pad", "trim_to_shape")


class NumpyReader(ListedFilesReader):
    POOL_NAME = "stoker-npy"
    ERRORS = (OSError, NpyError)

    def read_file(self, path: str) -> list[np.ndarray]:
        return [read(path, not self.args["dont_use_mmap"])[0]]


def _roi_call(out: Any) -> Any:
    """What ``fn.readers.numpy`` returns: the reader's output, or, when a region of
    interest is asked for, the region-cutting operator's output after it."""
    op = out.op
    given = [key for key in ROI_ARGS if key in op.args or key in op.arg_nodes]
    if not given:
        return out
    roi = {key: op.arg_nodes.pop(key) if key in op.arg_nodes else op.args.pop(key)
           for key in given}
    for key in ("roi_axes", "out_of_bounds_policy", "fill_value"):
        roi[key] = op.args[key]
    region = call_op("_readers.numpy_roi", [out], roi)
    # Errors name the user's operator.
    region.op.args["_describe"] = f"{_FN} (its region of interest)"
    return region


def roi_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    axes = [int(a) for a in args["roi_axes"]] or list(range(x.ndim))
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"roi_axes {list(args['roi_axes'])} names axis {a} of a "
                             f"{x.ndim}-D array")
    axes = [a % x.ndim for a in axes] if x.ndim else []
    values = {key.replace("roi_", ""): (None if args.get(key) is None else np.ravel(args[key]))
              for key in ROI_ARGS}
    for key in ROI_ARGS:
        v = values[key.replace("roi_", "")]
        if v is not None and len(v) == 1 and len(axes) > 1:  # one value for every axis (DALI)
            values[key.replace("roi_", "")] = v = np.repeat(v, len(axes))
        if v is not None and len(v) != len(axes):
            raise ValueError(f"argument '{key}' has {len(v)} values for {len(axes)} axes "
                             f"(DALI: Argument \"{key}\" expected shape {len(axes)} but got "
                             f"{len(v)} values)")
    lo, hi = k.slice_window(x.shape, axes, **values)
    policy = args["out_of_bounds_policy"]
    lo, hi = k.check_window(x.shape, lo, hi, policy)
    return k.slice_cpu(x, lo, hi, policy, [args["fill_value"]], max(x.ndim - 1, 0), x.dtype)


def _check_roi(args: dict) -> None:
    starts = [key for key in _STARTS if args.get(key) is not None]
    ends = [key for key in _ENDS if args.get(key) is not None]
    if len(starts) > 1:
        raise ArgumentError(f'{_FN}: "roi_start" and "rel_roi_start" arguments are mutually '
                            "exclusive")
    if len(ends) > 1:
        raise ArgumentError(f'{_FN}: arguments {ends} given: "roi_end", "rel_roi_end", '
                            '"roi_shape", and "rel_roi_shape" arguments are mutually '
                            "exclusive")
    if args["out_of_bounds_policy"] not in POLICIES:
        raise ArgumentError(f"{_FN}: argument 'out_of_bounds_policy' must be one of "
                            f"{', '.join(repr(p) for p in POLICIES)}, got "
                            f"{args['out_of_bounds_policy']!r}")


def _check(args: dict) -> None:
    check_dataset(_FN, args)
    _check_roi(args)
    check_reader_args(_FN, args, random_with_epoch_shuffle=False)


def _roi_args() -> tuple[Arg, ...]:
    return (
        Arg("roi_start", "ints", None, "Region start, per axis of roi_axes.",
            per_sample=True),
        Arg("rel_roi_start", "floats", None, "Region start, relative to the extents.",
            per_sample=True),
        Arg("roi_end", "ints", None, "Region end (exclusive).", per_sample=True),
        Arg("rel_roi_end", "floats", None, "Region end, relative to the extents.",
            per_sample=True),
        Arg("roi_shape", "ints", None, "Region shape.", per_sample=True),
        Arg("rel_roi_shape", "floats", None, "Region shape, relative to the extents.",
            per_sample=True),
        Arg("roi_axes", "ints", [], "The axes the region arguments list, in order (empty: "
            "every axis)."),
        Arg("out_of_bounds_policy", "str", "error", "A region leaving the array: 'error', "
            "'pad' (with fill_value) or 'trim_to_shape'."),
        Arg("fill_value", "float", 0.0, "The value of padded elements."),
    )


SCHEMA = register(OpSchema(
    name="readers.numpy",
    doc="Reads arrays from .npy files (their stored dtype and shape, C order), whole or a "
        "region of interest.",
    args=(
        *dataset_args(".npy files", "*.npy"),
        *_roi_args(),
        Arg("cache_header_information", "bool", False, "Accepted for portability."),
        Arg("use_o_direct", "bool", False, "Accepted for portability (needs "
            "dont_use_mmap=True, as in DALI)."),
        Arg("register_buffers", "bool", True, "Accepted for portability (GPU only in DALI)."),
        *reader_args(containers=False),
    ),
    num_outputs=1,
    stage="source",
    instance=NumpyReader,
    random=False,
    layout=lambda in_layouts, args: "",
    check=_check,
    result=_roi_call,
    examples=(
        Example(args={"files": [_sample("mini.npy"), _sample("mini_f.npy")]}),
        Example(args={"file_root": os.path.dirname(_sample("mini.npy")),
                      "random_shuffle": True, "seed": 5}),
        Example(args={"files": [_sample("mini.npy")], "roi_end": [2],
                      "rel_roi_shape": [0.5]}, raises=ArgumentError,
                match="are mutually exclusive"),
    ),
))

_ARRAYS = [np.arange(24, dtype=np.int16).reshape(4, 6), np.arange(10, dtype=np.int16)
           .reshape(2, 5)]

register(OpSchema(
    name="_readers.numpy_roi",
    doc="The region of interest of fn.readers.numpy's arrays (added by the reader's call).",
    inputs=(Input("data", "The arrays the reader read."),),
    args=_roi_args(),
    kernel=roi_kernel,
    layout=lambda layouts, args: "",
    check=_check_roi,
    examples=(
        Example(args={"roi_start": [1, 2], "roi_end": [2, 4]}, inputs=(_ARRAYS,)),
        Example(args={"rel_roi_start": [0.25], "rel_roi_shape": [0.5], "roi_axes": [1]},
                inputs=(_ARRAYS,)),
        Example(args={"roi_start": [-1, 2], "roi_shape": [3, 8],
                      "out_of_bounds_policy": "pad", "fill_value": -5.0}, inputs=(_ARRAYS,)),
        Example(args={"roi_start": [3, 4], "roi_end": [9, 9]}, inputs=(_ARRAYS,),
                raises=RuntimeError, match="Slice can't be placed out of bounds"),
    ),
))
