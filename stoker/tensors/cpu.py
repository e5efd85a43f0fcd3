"""``TensorListCPU`` (one batch from ``Pipeline.run()``) and ``TensorCPU`` (one sample).

A batch is held either as one dense array whose first axis is the sample (uniform shapes,
no copy to hand out) or as a list of per-sample arrays (ragged shapes). As in DALI,
``tl.at(i)`` gives sample ``i`` as a numpy array (here a view, not a copy), ``tl[i]`` and
iteration give ``TensorCPU`` objects (``.shape()``, ``.dtype`` as a ``DALIDataType``,
``.layout()``...), ``as_array()`` the batch as one numpy array and ``as_tensor()`` as one
``TensorCPU``. Framework iterators take ``as_array()`` or ``at(i)``: no wrapper per sample.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentTypeError, ShapeError
from stoker.kernels.cpu import buffers
from stoker.tensors.common import batch_text, check_layout, drop_axes, squeeze_axes, tensor_text


class TensorCPU:
    """One sample (or a whole dense batch, from ``as_tensor()``) in host memory: DALI's
    ``TensorCPU``. Wraps a numpy array without copying it; ``np.asarray(t)`` gives it back."""

    __slots__ = ("_array", "_layout", "_source_info")

    def __init__(self, data: Any, layout: str | None = None, is_pinned: bool = False):
        array = data._array if isinstance(data, TensorCPU) else _host_array(data)
        self._array = array
        self._layout = check_layout(layout, array.ndim, "TensorCPU")
        self._source_info = data._source_info if isinstance(data, TensorCPU) else ""

    @classmethod
    def _of(cls, array: np.ndarray, layout: str, source_info: str = "") -> TensorCPU:
        # A batch's own sample: shape and layout already agree, nothing to check.
        t = cls.__new__(cls)
        t._array, t._layout, t._source_info = array, layout, source_info
        return t

    def shape(self) -> list[int]:
        return list(self._array.shape)

    def ndim(self) -> int:
        return self._array.ndim

    @property
    def dtype(self) -> types.DALIDataType:
        return types.to_dali(self._array.dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        return self._array.dtype

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        self._layout = check_layout(layout, self._array.ndim, "TensorCPU.set_layout")

    def source_info(self) -> str:
        """Where the sample came from (a file path for file readers), or ''."""
        return self._source_info

    def get_property(self, key: str) -> Any:
        return (self._source_info or None) if key == "source_info" else None

    def as_cpu(self) -> TensorCPU:
        return self

    def squeeze(self, dim: int | None = None) -> bool:
        """Drops extent-1 axes (all, or ``dim``) in place; True if the shape changed."""
        axes = squeeze_axes(self._array.shape, dim, "TensorCPU")
        if axes:
            self._array = self._array.squeeze(axis=axes)
            self._layout = drop_axes(self._layout, axes)
        return bool(axes)

    def reinterpret(self, new_type: Any) -> None:
        """Views the same bytes as another type of the same size, in place."""
        self._array = _reinterpret(self._array, new_type, "TensorCPU")

    # -- memory ----------------------------------------------------------------------------
    def data_ptr(self) -> int:
        return int(self._array.ctypes.data)

    def copy_to_external(self, ptr: Any, non_blocking: bool = False) -> None:
        _copy_out([self._array], ptr)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return _as_numpy(self._array, dtype, copy)

    @property
    def __array_interface__(self) -> dict:
        if self._array.dtype.hasobject:  # numpy cannot rebuild object arrays from it
            raise AttributeError("__array_interface__")
        return self._array.__array_interface__

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()

    def __repr__(self) -> str:
        return tensor_text("TensorCPU", self.dtype.name, self._layout, "cpu",
                           self._array.shape, None)

    def __str__(self) -> str:
        return tensor_text("TensorCPU", self.dtype.name, self._layout, "cpu",
                           self._array.shape, self._array)


class TensorListCPU:
    """One batch in host memory: DALI's ``TensorListCPU``.

    Made from one array (sample axis first), a list of arrays or ``TensorCPU`` objects, or
    another batch (``layout`` then replaces its layout)."""

    __slots__ = ("_dense", "_samples", "_layout", "_source_info")

    def __init__(self, data: Any, layout: str | None = None,
                 source_info: list[str] | None = None, *, is_pinned: bool = False,
                 contiguous: bool = True):
        if isinstance(data, TensorListCPU):
            self._dense, self._samples = data._dense, data._samples
            self._source_info = source_info if source_info is not None else data._source_info
            layout = data._layout if layout is None else layout
        elif isinstance(data, list | tuple):
            self._dense = None
            self._samples = [s if type(s) is np.ndarray else np.asarray(s) for s in data]
            self._source_info = source_info
            _check_samples(self._samples)
        else:
            self._dense = _host_array(data)
            self._samples = None
            self._source_info = source_info
            if self._dense.ndim == 0:
                raise ArgumentTypeError("TensorListCPU: a batch from one array needs a leading "
                                        "sample axis, got a 0-d array")
        self._layout = check_layout(layout, self._sample_ndim(), "TensorListCPU")

    @classmethod
    def wrap(cls, data: np.ndarray | list[np.ndarray], layout: str = "",
             source_info: list[str] | None = None) -> TensorListCPU:
        """A batch the pipeline made, taken as it is: one array or a list of arrays whose
        types, ranks and layout already agree (no per-sample checks on the hot path)."""
        tl = cls.__new__(cls)
        if isinstance(data, np.ndarray):
            tl._dense, tl._samples = data, None
        else:
            tl._dense, tl._samples = None, data
        tl._layout, tl._source_info = layout or "", source_info
        return tl

    def _sample_ndim(self) -> int | None:
        if self._dense is not None:
            return self._dense.ndim - 1
        return self._samples[0].ndim if self._samples else None

    @staticmethod
    def broadcast(tensor: Any, num_samples: int) -> TensorListCPU:
        """A batch of ``num_samples`` copies of one sample."""
        t = tensor if isinstance(tensor, TensorCPU) else TensorCPU(tensor)
        dense = np.broadcast_to(t._array, (int(num_samples), *t._array.shape)).copy()
        return TensorListCPU(dense, t._layout)

    # -- samples ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._dense) if self._dense is not None else len(self._samples)

    def at(self, i: int) -> np.ndarray:
        """Sample ``i`` as a numpy array (a view of the batch when it is dense)."""
        if self._dense is not None:
            return self._dense[i, ...]  # `...`: a 0-d view, not a numpy scalar, for scalars
        return self._samples[i]

    def __getitem__(self, i: int) -> TensorCPU:
        """Sample ``i`` as a ``TensorCPU`` carrying the batch's layout and its source."""
        if self._dense is not None:
            array = self._dense[i, ...]
        else:
            array = self._samples[i]
            if type(array) is not np.ndarray:  # a numpy scalar would lend a dangling buffer
                array = np.asarray(array)
        info = self._source_info[i] if self._source_info else ""
        return TensorCPU._of(array, self._layout, info)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def samples(self) -> list[np.ndarray]:
        """Every sample as a numpy array."""
        if self._samples is None:
            return list(self._dense)
        return self._samples

    def source_info(self, i: int) -> str:
        """Where sample ``i`` came from (a file path for file readers), or ''."""
        return self._source_info[i] if self._source_info else ""

    # -- batch views -----------------------------------------------------------------------
    def is_dense_tensor(self) -> bool:
        if self._dense is not None:
            return True
        return _uniform(self._samples)

    def as_array(self) -> np.ndarray:
        """The batch as one array with a leading sample axis; needs uniform sample shapes."""
        if self._dense is None:
            if not _uniform(self._samples):
                shapes = sorted({s.shape for s in self._samples})
                raise ShapeError(
                    "TensorList.as_array: samples have different shapes "
                    f"({', '.join(map(str, shapes[:4]))}{', ...' if len(shapes) > 4 else ''}); "
                    "only a batch of uniform shape can be one array; use at(i) per sample"
                )
            if not self._samples:
                raise ShapeError("TensorList.as_array: the batch is empty")
            self._dense = _stack(self._samples)
            self._samples = None
        return self._dense

    def as_tensor(self) -> TensorCPU:
        """The batch as one ``TensorCPU`` (layout ``N`` + the samples' layout, if any)."""
        array = self.as_array()
        return TensorCPU._of(array, "N" + self._layout if self._layout else "")

    def as_reshaped_tensor(self, shape: Any) -> TensorCPU:
        return TensorCPU._of(self.as_array().reshape(tuple(int(d) for d in shape)), "")

    def as_cpu(self) -> TensorListCPU:
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return _as_numpy(self.as_array(), dtype, copy)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.as_array().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.as_array().__dlpack_device__()

    def data_ptr(self) -> int:
        """Address of the dense batch (or of the first sample of a ragged one)."""
        first = self._dense if self._dense is not None else \
            (self._samples[0] if self._samples else np.empty(0))
        return int(first.ctypes.data)

    def copy_to_external(self, ptr: Any, non_blocking: bool = False) -> None:
        """Copies the samples, one after the other, to host memory at ``ptr``."""
        _copy_out([self._dense] if self._dense is not None else self._samples, ptr)

    def reinterpret(self, new_type: Any) -> None:
        if self._dense is not None:
            self._dense = _reinterpret(self._dense, new_type, "TensorListCPU")
        else:
            self._samples = [_reinterpret(s, new_type, "TensorListCPU") for s in self._samples]

    def reset(self) -> None:
        """Empties the batch."""
        self._dense, self._samples, self._source_info = None, [], None

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        self._layout = check_layout(layout, self._sample_ndim(), "TensorListCPU.set_layout")

    def shape(self) -> list[tuple[int, ...]]:
        if self._dense is not None:
            return [self._dense.shape[1:]] * len(self._dense)
        return [s.shape for s in self._samples]

    def ndim(self) -> int:
        return self._sample_ndim() or 0

    @property
    def dtype(self) -> types.DALIDataType:
        if self._dense is None and not self._samples:
            return types.DALIDataType.NO_TYPE
        return types.to_dali(self.numpy_dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        if self._dense is not None:
            return self._dense.dtype
        return self._samples[0].dtype if self._samples else np.dtype(np.float32)

    def __repr__(self) -> str:
        return batch_text("TensorListCPU", self.dtype.name, self._layout, "cpu", self.shape(),
                          None)

    def __str__(self) -> str:
        return batch_text("TensorListCPU", self.dtype.name, self._layout, "cpu", self.shape(),
                          self.samples())


def _host_array(data: Any) -> np.ndarray:
    """``data`` as a numpy array without a copy: anything numpy takes, or a DLPack capsule
    (DALI's constructors take one)."""
    if type(data).__name__ == "PyCapsule":
        return np.from_dlpack(_Capsule(data))
    return np.asarray(data)


class _Capsule:
    """What ``np.from_dlpack`` asks of a producer, around a bare DLPack capsule."""

    def __init__(self, capsule: Any):
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: a TensorCPU is host memory


def _check_samples(samples: list[np.ndarray]) -> None:
    # DALI refuses a batch whose samples differ in type or in number of dimensions.
    if not samples:
        return
    d0, n0 = samples[0].dtype, samples[0].ndim
    for k, s in enumerate(samples):
        if s.dtype != d0:
            raise ArgumentTypeError(f"TensorListCPU: sample {k} has type {s.dtype}, sample 0 "
                                    f"has {d0}; the samples of a batch share one type")
        if s.ndim != n0:
            raise ArgumentTypeError(f"TensorListCPU: sample {k} has {s.ndim} dimension(s), "
                                    f"sample 0 has {n0}; the samples of a batch share them")


def _stack(samples: list[np.ndarray]) -> np.ndarray:
    """The samples as one array, on recycled 64-byte-aligned memory (kernels/cpu/buffers.py):
    a framework plugin then hands the batch to JAX or TF without a second copy."""
    out = buffers.empty((len(samples), *samples[0].shape), samples[0].dtype)
    return np.stack(samples, out=out)


def _uniform(samples: list[Any]) -> bool:
    if not samples:
        return True
    s0, d0 = samples[0].shape, samples[0].dtype
    return all(s.shape == s0 and s.dtype == d0 for s in samples)


def _as_numpy(array: np.ndarray, dtype: Any, copy: Any) -> np.ndarray:
    # numpy 2 passes copy=True for np.array(x) and trusts us to copy: the batch is ours,
    # and the caller's array must not alias it.
    if dtype is not None and np.dtype(dtype) != array.dtype:
        return array.astype(dtype)
    return array.copy() if copy else array


def _reinterpret(array: np.ndarray, new_type: Any, what: str) -> np.ndarray:
    target = types.to_numpy(new_type)
    if target.itemsize != array.dtype.itemsize:
        raise ArgumentTypeError(f"{what}.reinterpret: {array.dtype} and {target} differ in "
                                "size; only a type of the same size can view the same bytes")
    return array.view(target)


def _copy_out(arrays: list[np.ndarray], ptr: Any) -> None:
    address = ptr.value if isinstance(ptr, ctypes.c_void_p) else int(ptr)
    for array in arrays:
        src = np.ascontiguousarray(array)
        ctypes.memmove(address, src.ctypes.data, src.nbytes)
        address += src.nbytes


# stoker's first name for the CPU batch; DALI code names it TensorListCPU.
TensorList = TensorListCPU
