"""DALI's type vocabulary: data types, image types, interpolation types, layouts, constants.

Names and members follow ``nvidia.dali.types`` so that ``from stoker import types`` ports
pipelines unchanged. Each data type maps to one numpy dtype (``to_numpy``).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np


class DALIDataType(enum.IntEnum):
    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11
    STRING = 12

    def __str__(self) -> str:
        return self.name


class DALIImageType(enum.IntEnum):
    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4


class DALIInterpType(enum.IntEnum):
    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


class TensorLayout(enum.StrEnum):
    """Sample layouts behind DALI's ``types.NHWC`` etc.; the batch dimension is implicit."""

    NCHW = "CHW"
    NHWC = "HWC"
    NFHWC = "FHWC"
    NFCHW = "FCHW"
    SAME = ""

    def __str__(self) -> str:
        return self.value


globals().update(DALIDataType.__members__)
globals().update(DALIImageType.__members__)
globals().update(DALIInterpType.__members__)
NCHW, NHWC, NFHWC, NFCHW, SAME = (
    TensorLayout.NCHW,
    TensorLayout.NHWC,
    TensorLayout.NFHWC,
    TensorLayout.NFCHW,
    TensorLayout.SAME,
)
# DALI spells the 32-bit float FLOAT; FLOAT32 is accepted as an alias for numpy users.
FLOAT32 = DALIDataType.FLOAT

_TO_NUMPY = {
    DALIDataType.BOOL: np.dtype(np.bool_),
    DALIDataType.INT8: np.dtype(np.int8),
    DALIDataType.INT16: np.dtype(np.int16),
    DALIDataType.INT32: np.dtype(np.int32),
    DALIDataType.INT64: np.dtype(np.int64),
    DALIDataType.UINT8: np.dtype(np.uint8),
    DALIDataType.UINT16: np.dtype(np.uint16),
    DALIDataType.UINT32: np.dtype(np.uint32),
    DALIDataType.UINT64: np.dtype(np.uint64),
    DALIDataType.FLOAT16: np.dtype(np.float16),
    DALIDataType.FLOAT: np.dtype(np.float32),
    DALIDataType.FLOAT64: np.dtype(np.float64),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}


def to_numpy(dtype: Any) -> np.dtype:
    """numpy dtype for a DALI data type, a numpy dtype or a type name."""
    if isinstance(dtype, DALIDataType):
        if dtype not in _TO_NUMPY:
            raise TypeError(f"data type {dtype.name} has no numpy equivalent")
        return _TO_NUMPY[dtype]
    return np.dtype(dtype)


def to_dali(dtype: Any) -> DALIDataType:
    """DALI data type for a numpy dtype (object and string arrays map to STRING)."""
    if isinstance(dtype, DALIDataType):
        return dtype
    dt = np.dtype(dtype)
    if dt.kind in "OUS":
        return DALIDataType.STRING
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise TypeError(f"numpy dtype {dt} has no DALI equivalent") from None


def to_numpy_type(dali_type: DALIDataType) -> type:
    """DALI's name: the numpy scalar type (``np.float32``) for a DALI data type."""
    return to_numpy(dali_type).type


to_dali_type = to_dali  # DALI's name


class ScalarConstant:
    """A scalar that takes part in arithmetic with a declared type (``types.Constant(1.5)``).

    As in DALI, a numpy scalar or 0-d array brings its own type (``np.float64(1)`` is
    FLOAT64); Python bools, ints and floats are BOOL, INT32 and FLOAT. ``value`` is a numpy
    scalar of the declared type. As an operator argument it stands for its value; as an
    operator input, for a constant node of that type.
    """

    def __init__(self, value: Any, dtype: Any = None):
        if isinstance(value, np.ndarray | np.generic):
            if value.size != 1 or value.dtype.kind not in "biuf":
                raise TypeError(f"types.Constant: cannot infer a type for {value!r}")
            if dtype is None:
                dtype = to_dali(value.dtype)
            value = value.item()
        if dtype is None:
            if isinstance(value, bool):
                dtype = DALIDataType.BOOL
            elif isinstance(value, int):
                dtype = DALIDataType.INT32
            elif isinstance(value, float):
                dtype = DALIDataType.FLOAT
            else:
                raise TypeError(f"types.Constant: cannot infer a type for {value!r}")
        elif not isinstance(value, bool | int | float):
            raise TypeError(f"types.Constant: expected a bool, int or float, got {value!r}")
        self.dtype = to_dali(dtype)
        self.value = to_numpy(self.dtype).type(value)
        self.shape: list[int] = []

    def __repr__(self) -> str:
        return f"ScalarConstant({self.value!r}, dtype={self.dtype.name})"


_ENUM_TYPES = (DALIDataType, DALIImageType, DALIInterpType)


def Constant(value: Any, dtype: Any = None, shape: Any = None, layout: Any = None,
             device: Any = None, **kwargs: Any) -> Any:
    """A constant: a typed scalar for arithmetic, or an ``fn.constant`` node for tensors.

    As in DALI, an enum member (``types.FLOAT``) always makes a node: enums take no part in
    arithmetic.
    """
    is_scalar = (np.ndim(value) == 0 and shape is None and layout is None and device is None
                 and not isinstance(value, _ENUM_TYPES))
    if is_scalar and not kwargs:
        return ScalarConstant(value, dtype)
    from stoker.operators.tensor.tensor import constant_node

    return constant_node(value, dtype=dtype, shape=shape, layout=layout, device=device, **kwargs)


class SampleInfo:
    """What a per-sample ``external_source`` callback is told about the sample it must make."""

    __slots__ = ("idx_in_epoch", "idx_in_batch", "iteration", "epoch_idx")

    def __init__(self, idx_in_epoch: int, idx_in_batch: int, iteration: int, epoch_idx: int):
        self.idx_in_epoch = idx_in_epoch
        self.idx_in_batch = idx_in_batch
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self) -> str:
        return (f"SampleInfo(idx_in_epoch={self.idx_in_epoch}, idx_in_batch={self.idx_in_batch}, "
                f"iteration={self.iteration}, epoch_idx={self.epoch_idx})")


class BatchInfo:
    """What a batch ``external_source`` callback with ``batch_info=True`` is told."""

    __slots__ = ("iteration", "epoch_idx")

    def __init__(self, iteration: int, epoch_idx: int):
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self) -> str:
        return f"BatchInfo(iteration={self.iteration}, epoch_idx={self.epoch_idx})"
