"""What ``fn.external_source`` takes as a batch, and the layout each batch comes with.

A batch may be a list or tuple of samples (numpy arrays, torch tensors, ``TensorCPU``,
numbers), one array with the sample axis first (numpy, torch), or a ``TensorList`` (dense
or ragged: another pipeline's output), as DALI 2.4 takes them; ``convert`` turns it into
what the executor carries (a dense array or a list of arrays) and checks what DALI checks
when data arrives. ``OutputLayout`` applies DALI's rules for the layout: a declared
``layout=`` must match what is fed; without one, the first non-empty layout fed (by
``feed_input(..., layout=)`` or with a ``TensorList``) becomes the source's for good.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from stoker.errors import ArgumentTypeError
from stoker.executor.context import FAILED
from stoker.kernels.cpu import buffers


class Converted(NamedTuple):
    value: Any  # a dense array (sample axis first) or a list of arrays
    dtype: np.dtype | None  # the samples' type; None for an empty batch
    ndim: int | None  # the samples' number of dimensions; None for an empty batch
    layout: str  # the layout the data carried (a TensorList's), else ""


def copied(arr: np.ndarray) -> np.ndarray:
    """A copy of ``arr``; a large C-ordered one on recycled memory
    (``kernels/cpu/buffers.py``): a fresh allocation faults its pages in, zeroed, for every
    batch, which cost more than the copy itself (16 samples of 3.7 MB: 50 ms against 14)."""
    if arr.nbytes >= buffers.MIN_BYTES and arr.flags.c_contiguous and arr.dtype.kind in "biufc":
        out = buffers.empty(arr.shape, arr.dtype)
        np.copyto(out, arr)
        return out
    return np.array(arr, copy=True)


def to_array(x: Any, copy: bool) -> np.ndarray:
    if hasattr(x, "numpy") and hasattr(x, "detach"):  # torch tensors
        x = x.detach().cpu().numpy()
    if not copy:
        arr = np.asarray(x)
    else:
        arr = copied(x) if isinstance(x, np.ndarray) else np.array(x, copy=True)
    if arr.dtype.kind in "OUS":
        raise TypeError(f"cannot convert {type(x).__name__} to a numeric array")
    return arr


def is_tensor_list(x: Any) -> bool:
    """A batch object such as stoker's or DALI's TensorListCPU (samples, a layout)."""
    return callable(getattr(x, "layout", None)) and hasattr(x, "at") and hasattr(x, "__len__") \
        and not isinstance(x, np.ndarray)


def sample_layout(x: Any) -> str:
    layout = getattr(x, "layout", None)
    return (layout() or "") if callable(layout) else ""


def convert(raw: Any, copy: bool) -> Converted:
    """The batch as the executor carries it; TypeError says what is wrong with it."""
    if is_tensor_list(raw):
        layout = raw.layout() or ""
        if raw.is_dense_tensor() and len(raw):
            value: Any = to_array(raw.as_array(), copy)
        else:
            value = [to_array(raw.at(i), copy) for i in range(len(raw))]
            if not value:
                return Converted(value, None, None, layout)
        return _checked(value, layout)
    if isinstance(raw, np.ndarray) or (hasattr(raw, "__array__") and
                                       not isinstance(raw, list | tuple)):
        value = to_array(raw, copy)
        if value.ndim == 0:
            raise TypeError("a batch must have a leading sample axis, got a scalar")
        return Converted(value, value.dtype, value.ndim - 1, "")
    if not isinstance(raw, list | tuple):
        raise TypeError(f"a batch must be a list of samples, an array or a TensorList, got "
                        f"{type(raw).__name__}")
    value = []
    layouts = set()  # of samples that carry one (TensorCPU); numpy arrays carry none
    for sample in raw:
        if type(sample) is np.ndarray:  # the common case: no more Python than the copy
            value.append(copied(sample) if copy else sample)
        elif sample is FAILED:
            value.append(sample)
        else:
            layouts.add(sample_layout(sample))
            value.append(to_array(sample, copy))
    layouts.discard("")
    if len(layouts) > 1:
        raise TypeError(f"samples of one batch have different layouts ({sorted(layouts)})")
    return _checked(value, layouts.pop() if layouts else "")


def _checked(value: Any, layout: str) -> Converted:
    if isinstance(value, np.ndarray):
        return Converted(value, value.dtype, value.ndim - 1, layout)
    present = [s for s in value if s is not FAILED]  # on_error="skip"
    if not present:
        return Converted(value, None, None, layout)
    dtype, ndim = present[0].dtype, present[0].ndim
    if dtype.kind in "OUS":  # every sample has this type, or is refused below
        raise TypeError(f"samples must be numeric arrays, got {dtype} data")
    for s in present:
        if s.dtype != dtype:
            raise TypeError(f"samples of one batch have different types ({dtype} and "
                            f"{s.dtype})")
        if s.ndim != ndim:
            raise TypeError(f"samples of one batch have different dimensions ({ndim} and "
                            f"{s.ndim})")
    return Converted(value, dtype, ndim, layout)


def first_values(x: Any, n: int) -> list | None:
    """The first ``n`` values of what a source returned, one per output: the items of a
    tuple or list, or an array's first axis; DALI takes the first ``num_outputs`` of a
    longer one. None when ``x`` holds fewer (or is a scalar)."""
    if isinstance(x, tuple | list) or (hasattr(x, "__len__") and getattr(x, "ndim", 1) != 0):
        if len(x) >= n:
            return [x[k] for k in range(n)]
    return None


def per_output(samples: list, n: int) -> list[list]:
    """Per-sample mode with ``num_outputs=n``: each call gave one sample per output (a
    tuple, a list, or an array whose first axis is the output), as in DALI; regrouped
    into one batch per output. TypeError names a sample that holds fewer."""
    outs: list[list] = [[] for _ in range(n)]
    for i, sample in enumerate(samples):
        values = [FAILED] * n if sample is FAILED else first_values(sample, n)
        if values is None:
            raise TypeError(f"num_outputs={n}, so each sample the source returns must hold "
                            f"{n} values (one per output), got {holds(sample)} for sample "
                            f"{i} of the batch")
        for out, value in zip(outs, values, strict=True):
            out.append(value)
    return outs


def holds(x: Any) -> str:
    """What a value holds, for messages: "3 values", or its type when it is a scalar."""
    if isinstance(x, tuple | list) or (hasattr(x, "__len__") and getattr(x, "ndim", 1) != 0):
        return f"{len(x)} value{'' if len(x) == 1 else 's'}"
    return type(x).__name__


def check_layout_arg(layout: Any, what: str) -> str:
    """``feed_input``'s ``layout``: a string or None (DALI raises TypeError otherwise)."""
    if layout is None:
        return ""
    if not isinstance(layout, str):
        raise ArgumentTypeError(f"{what}: argument 'layout' must be a string such as 'HWC', "
                                f"got {layout!r} of type {type(layout).__name__}")
    return layout


def layout_fits(layout: str, ndim: int | None) -> str | None:
    """Why ``layout`` cannot describe samples of ``ndim`` dimensions (None when it can)."""
    if layout and ndim is not None and len(layout) != ndim:
        return f"the layout {layout!r} cannot describe {ndim}-dimensional samples"
    return None


class OutputLayout:
    """The layout of one output of a source, batch by batch, by DALI 2.4's rules (measured):
    a declared layout is every batch's, and data fed with another is an error; without
    one, a batch has the layout it came with, and once a non-empty layout came, every
    later batch must come with that same one."""

    __slots__ = ("declared", "locked")

    def __init__(self, declared: str | None):
        self.declared = declared or ""
        self.locked = ""

    def of_batch(self, given: str) -> tuple[str, str | None]:
        """(the batch's layout, why it is refused or None)."""
        if self.declared:
            if given and given != self.declared:
                return "", (f"the source was declared with layout={self.declared!r}, but "
                            f"the data came with layout {given!r}")
            return self.declared, None
        if self.locked and given != self.locked:
            return "", (f"the layout of the data changed from {self.locked!r} to {given!r}; "
                        "once a source's data came with a layout, every batch must come with "
                        "it (as in DALI)")
        if given:
            self.locked = given
        return given, None
