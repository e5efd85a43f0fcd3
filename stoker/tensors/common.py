"""What the CPU and GPU batch and sample classes share: layout checks, squeeze, the text
DALI prints for a tensor or a batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, ShapeError


def check_layout(layout: Any, ndim: int | None, what: str) -> str:
    """``layout`` as a string; a non-empty one must name every dimension of a sample
    (DALI raises ValueError for a mismatch)."""
    text = "" if layout is None else str(layout)
    if text and ndim is not None and len(text) != ndim:
        raise ArgumentError(f"{what}: layout {text!r} has {len(text)} dimension(s), the "
                            f"samples have {ndim}; a non-empty layout names every dimension")
    return text


def squeeze_axes(shape: Sequence[int], dim: Any, what: str) -> tuple[int, ...]:
    """The axes ``squeeze(dim)`` removes: every extent-1 axis, or ``dim`` when its extent
    is 1 (nothing otherwise, as in DALI)."""
    if dim is None:
        return tuple(i for i, extent in enumerate(shape) if extent == 1)
    ndim = len(shape)
    axis = int(dim)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{what}.squeeze: axis {axis} is out of range for a tensor with "
                            f"{ndim} dimension(s)")
    axis %= ndim
    return (axis,) if shape[axis] == 1 else ()


def drop_axes(layout: str, axes: tuple[int, ...]) -> str:
    return "".join(c for i, c in enumerate(layout) if i not in axes) if layout else ""


def tensor_text(kind: str, dtype_name: str, layout: str, device: str, shape: tuple,
                data: np.ndarray | None) -> str:
    """DALI's ``repr`` (``data`` None) and ``str`` of one tensor."""
    lines = [] if data is None else [_array_text(data) + ","]
    lines += [f"dtype=DALIDataType.{dtype_name},"]
    if layout:
        lines.append(f'layout="{layout}",')
    lines += [f'device="{device}",', f"shape={tuple(shape)})"]
    return _indented(kind, lines)


def batch_text(kind: str, dtype_name: str, layout: str, device: str, shapes: list,
               samples: list[np.ndarray] | None) -> str:
    """DALI's ``repr`` (``samples`` None) and ``str`` of a batch."""
    lines = []
    if samples is not None:
        body = ",\n\n".join(_array_text(s) for s in samples)
        lines.append("[" + body.replace("\n", "\n ") + "],")
    lines.append(f"dtype=DALIDataType.{dtype_name},")
    if layout:
        lines.append(f'layout="{layout}",')
    lines += [f'device="{device}",', f"num_samples={len(shapes)},",
              f"shape={[tuple(s) for s in shapes]})"]
    return _indented(kind, lines)


def _indented(kind: str, lines: list[str]) -> str:
    text = "\n".join("    " + line.replace("\n", "\n    ") for line in lines)
    return f"{kind}(\n" + "\n".join(row.rstrip() for row in text.split("\n"))


def _array_text(array: np.ndarray) -> str:
    return np.array2string(np.asarray(array), separator=" ")
