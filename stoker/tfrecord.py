"""``stoker.tfrecord``: the feature descriptions ``fn.readers.tfrecord`` takes, as
``nvidia.dali.tfrecord`` spells them (``import stoker.tfrecord as tfrec``)::

    features = {"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0)}

Output per feature: ``int64`` -> int64, ``float32`` -> float32, ``string`` -> the bytes of
the feature's first value as a 1-D uint8 array. A ``FixedLenFeature`` has the given shape
(``[]`` is a scalar); a ``VarLenFeature`` is 1-D, or ``[n / prod(partial_shape),
*partial_shape]`` with a partial shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# nvidia.dali.tfrecord's values.
int64 = 0
string = 1
float32 = 2

_NAMES = {int64: "int64", string: "string", float32: "float32"}
NUMPY_TYPES = {int64: np.dtype(np.int64), string: np.dtype(np.uint8),
               float32: np.dtype(np.float32)}


@dataclass(frozen=True)
class Feature:
    """A feature to read: ``fixed`` (FixedLenFeature) or not (VarLenFeature), its shape
    (the partial shape of a VarLenFeature, None without one), type and default value."""

    fixed: bool
    shape: tuple[int, ...] | None
    dtype: int
    default_value: Any

    def __repr__(self) -> str:
        kind = "FixedLenFeature" if self.fixed else "VarLenFeature"
        shape = "" if self.shape is None else f"{list(self.shape)}, "
        return f"{kind}({shape}{_NAMES[self.dtype]}, {self.default_value!r})"

    @property
    def volume(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def numpy_dtype(self) -> np.dtype:
        return NUMPY_TYPES[self.dtype]


def _check_dtype(dtype: Any, what: str) -> int:
    if isinstance(dtype, bool) or dtype not in _NAMES:
        raise TypeError(f"{what}: dtype must be stoker.tfrecord.int64, float32 or string, "
                        f"got {dtype!r}")
    return int(dtype)


def _check_shape(shape: Any, what: str) -> tuple[int, ...]:
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be a list of integers, got {shape!r}") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 0:
            raise TypeError(f"{what}: shape must be a list of non-negative integers, got "
                            f"{shape!r}")
    return tuple(int(d) for d in dims)


def FixedLenFeature(shape: Any, dtype: int, default_value: Any, /) -> Feature:  # noqa: N802
    """A feature with ``prod(shape)`` values in every record (TensorFlow's
    FixedLenFeature); a record without it gives ``default_value`` in that shape."""
    what = "FixedLenFeature"
    return Feature(True, _check_shape(shape, what), _check_dtype(dtype, what), default_value)


def VarLenFeature(*args: Any) -> Feature:  # noqa: N802
    """``VarLenFeature(dtype, default_value)`` or ``VarLenFeature(partial_shape, dtype,
    default_value)``: any number of values per record (TensorFlow's VarLenFeature)."""
    what = "VarLenFeature"
    if len(args) == 2:
        return Feature(False, None, _check_dtype(args[0], what), args[1])
    if len(args) == 3:
        return Feature(False, _check_shape(args[0], what), _check_dtype(args[1], what),
                       args[2])
    raise TypeError(f"{what} takes (dtype, default_value) or (partial_shape, dtype, "
                    f"default_value), got {len(args)} arguments")


__all__ = ["Feature", "FixedLenFeature", "VarLenFeature", "int64", "float32", "string"]
