"""``TensorListGPU`` (one batch made by GPU operators) and ``TensorGPU`` (one sample).

Both hold torch tensors on the pipeline's device (CUDA, or CPU tensors where GPU
pipelines run on the CPU). As in DALI, ``tl[i]``, ``tl.at(i)`` and iteration give
``TensorGPU`` objects and ``as_tensor()`` one ``TensorGPU`` for the whole batch; torch
code takes the tensors themselves with ``as_torch()`` and ``torch_at(i)`` (what the
framework iterators use), or through DLPack.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ShapeError
from stoker.tensors.common import batch_text, check_layout, drop_axes, squeeze_axes, tensor_text
from stoker.tensors.cpu import TensorCPU, TensorListCPU, _uniform


def _numpy_dtype(tensor: Any) -> np.dtype:
    from stoker.kernels.gpu.common import numpy_dtype

    return numpy_dtype(tensor.dtype)


class TensorGPU:
    """One sample (or a dense batch, from ``as_tensor()``) on the device: DALI's
    ``TensorGPU``, around a torch tensor that ``as_torch()`` hands over."""

    __slots__ = ("_tensor", "_layout", "_source_info")

    def __init__(self, data: Any, layout: str | None = None):
        if isinstance(data, TensorGPU):
            data = data._tensor
        elif not hasattr(data, "device"):  # not a torch tensor: a DLPack object
            import torch

            data = torch.from_dlpack(data)
        self._tensor = data
        self._layout = check_layout(layout, data.dim(), "TensorGPU")
        self._source_info = ""

    @classmethod
    def _of(cls, tensor: Any, layout: str, source_info: str = "") -> TensorGPU:
        t = cls.__new__(cls)
        t._tensor, t._layout, t._source_info = tensor, layout, source_info
        return t

    def as_torch(self) -> Any:
        """The torch tensor itself (no copy)."""
        return self._tensor

    def shape(self) -> list[int]:
        return list(self._tensor.shape)

    def ndim(self) -> int:
        return self._tensor.dim()

    @property
    def dtype(self) -> types.DALIDataType:
        return types.to_dali(_numpy_dtype(self._tensor))

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        self._layout = check_layout(layout, self._tensor.dim(), "TensorGPU.set_layout")

    def source_info(self) -> str:
        return self._source_info

    def get_property(self, key: str) -> Any:
        return (self._source_info or None) if key == "source_info" else None

    def device_id(self) -> int:
        return self._tensor.device.index or 0

    def squeeze(self, dim: int | None = None) -> bool:
        axes = squeeze_axes(tuple(self._tensor.shape), dim, "TensorGPU")
        for axis in sorted(axes, reverse=True):
            self._tensor = self._tensor.squeeze(axis)
        self._layout = drop_axes(self._layout, axes)
        return bool(axes)

    def as_cpu(self) -> TensorCPU:
        """A copy in host memory (waits for the device)."""
        return TensorCPU._of(self._tensor.detach().cpu().numpy(), self._layout,
                             self._source_info)

    def data_ptr(self) -> int:
        return int(self._tensor.data_ptr())

    @property
    def __cuda_array_interface__(self) -> dict:
        return self._tensor.__cuda_array_interface__

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._tensor.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._tensor.__dlpack_device__()

    def __repr__(self) -> str:
        return tensor_text("TensorGPU", self.dtype.name, self._layout, "gpu",
                           tuple(self._tensor.shape), None)


class TensorListGPU:
    """One batch made by GPU operators: torch tensors on the pipeline's device (CUDA, or
    CPU tensors where GPU pipelines run on the CPU), held dense (one tensor, sample axis
    first) or as a list of per-sample tensors.

    The pipeline's GPU work runs on its own CUDA stream and ``event`` marks the end of this
    batch on it. Taking tensors out (``[i]``, ``at``, ``as_tensor``, ``as_torch``,
    ``torch_at``) makes torch's current stream wait for that event (no host wait) and
    records the tensors' use on it, so the caching allocator does not hand their memory back
    to the pipeline's stream while the consumer's stream may still read it. ``as_cpu()``
    waits on the host.
    """

    __slots__ = ("_dense", "_samples", "_layout", "_source_info", "_event", "_synced")

    def __init__(self, data: Any, layout: str | None = None,
                 source_info: list[str] | None = None, event: Any = None):
        if isinstance(data, Sequence) and not isinstance(data, list | tuple):
            data = list(data)  # a ragged batch held in one tensor (kernels/gpu/batch.py)
        if isinstance(data, list | tuple):
            self._dense = None
            self._samples: list | None = [s.as_torch() if isinstance(s, TensorGPU) else s
                                          for s in data]
        else:
            self._dense = data
            self._samples = None
        self._source_info = source_info
        self._event = event  # torch.cuda.Event, or None for CPU tensors
        self._synced: set[int] = set()  # streams already made to wait for the event
        first = self._first()
        ndim = None if first is None else first.dim() - (self._dense is not None)
        self._layout = check_layout(layout, ndim, "TensorListGPU")

    # -- synchronization -------------------------------------------------------------------
    def _tensors(self) -> list:
        return [self._dense] if self._dense is not None else list(self._samples)

    def _first(self) -> Any:
        """The dense batch or the first sample (None for an empty batch): what device and
        type questions are answered from, without listing the samples."""
        if self._dense is not None:
            return self._dense
        return self._samples[0] if self._samples else None

    def _ready_on_current_stream(self) -> None:
        if self._event is None:
            return
        import torch

        first = self._first()
        if first is None:
            return
        stream = torch.cuda.current_stream(first.device)
        if stream.cuda_stream in self._synced:
            return
        stream.wait_event(self._event)
        for t in self._tensors():
            t.record_stream(stream)
        self._synced.add(stream.cuda_stream)

    # -- samples ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._dense) if self._dense is not None else len(self._samples)

    def torch_at(self, i: int) -> Any:
        """Sample ``i`` as a torch tensor (a view of the batch when it is dense)."""
        self._ready_on_current_stream()
        if self._dense is not None:
            return self._dense[i]
        return self._samples[i]

    def __getitem__(self, i: int) -> TensorGPU:
        info = self._source_info[i] if self._source_info else ""
        return TensorGPU._of(self.torch_at(i), self._layout, info)

    at = __getitem__  # DALI: "deprecated for __getitem__"; both give a TensorGPU

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def source_info(self, i: int) -> str:
        """Where sample ``i`` came from (a file path for file readers), or ''."""
        return self._source_info[i] if self._source_info else ""

    # -- batch views -----------------------------------------------------------------------
    def is_dense_tensor(self) -> bool:
        return self._dense is not None or _uniform(self._samples)

    def as_torch(self) -> Any:
        """The batch as one torch tensor on the device: the batch itself when it is dense
        (no copy), else the samples stacked; needs uniform sample shapes."""
        self._ready_on_current_stream()
        if self._dense is None:
            if not self._samples:
                raise ShapeError("TensorListGPU.as_tensor: the batch is empty")
            if not self.is_dense_tensor():
                shapes = sorted({tuple(t.shape) for t in self._samples})
                raise ShapeError(
                    "TensorListGPU.as_tensor: samples have different shapes "
                    f"({', '.join(map(str, shapes[:4]))}{', ...' if len(shapes) > 4 else ''}); "
                    "only a batch of uniform shape can be one tensor; use at(i) per sample")
            import torch

            return torch.stack(self._samples)
        return self._dense

    def as_tensor(self) -> TensorGPU:
        """The batch as one ``TensorGPU`` (layout ``N`` + the samples' layout, if any)."""
        return TensorGPU._of(self.as_torch(), "N" + self._layout if self._layout else "")

    def as_cpu(self) -> TensorListCPU:
        """The batch copied to host memory, as a ``TensorListCPU`` of numpy arrays."""
        if self._event is not None:
            self._event.synchronize()
        if self._dense is not None:
            data: Any = self._dense.detach().cpu().numpy()
        else:
            data = [t.detach().cpu().numpy() for t in self._samples]
        return TensorListCPU(data, layout=self._layout, source_info=self._source_info)

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        tensor = self.as_torch() if self._event is None else self._as_tensor_for(stream)
        return tensor.__dlpack__(stream=-1, **kwargs)

    def _as_tensor_for(self, stream: Any) -> Any:
        # The DLPack consumer names its stream: it waits for the batch's event on the GPU;
        # with no stream (or the legacy default one) the host waits.
        import torch

        if isinstance(stream, int) and stream > 2:
            consumer = torch.cuda.ExternalStream(stream)
            consumer.wait_event(self._event)
        elif stream != -1:
            self._event.synchronize()
        if self._dense is not None:
            return self._dense
        return torch.stack(self._samples)

    def __dlpack_device__(self) -> tuple[int, int]:
        first = self._first()
        if first is None:
            return (1, 0)  # kDLCPU
        return first.__dlpack_device__()

    def data_ptr(self) -> int:
        """Address of the dense batch's memory on the device."""
        return int(self.as_torch().data_ptr())

    def layout(self) -> str:
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        first = self._first()
        ndim = None if first is None else first.dim() - (self._dense is not None)
        self._layout = check_layout(layout, ndim, "TensorListGPU.set_layout")

    def shape(self) -> list[tuple[int, ...]]:
        if self._dense is not None:
            return [tuple(self._dense.shape[1:])] * len(self._dense)
        return [tuple(t.shape) for t in self._samples]

    def ndim(self) -> int:
        first = self._first()
        return 0 if first is None else first.dim() - (self._dense is not None)

    @property
    def device(self) -> Any:
        """The torch device the batch is on."""
        first = self._first()
        return None if first is None else first.device

    def device_id(self) -> int:
        first = self._first()
        return 0 if first is None else (first.device.index or 0)

    @property
    def dtype(self) -> types.DALIDataType:
        if self._first() is None:
            return types.DALIDataType.NO_TYPE
        return types.to_dali(self.numpy_dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        first = self._first()
        return np.dtype(np.float32) if first is None else _numpy_dtype(first)

    def __repr__(self) -> str:
        return batch_text("TensorListGPU", self.dtype.name, self._layout, "gpu", self.shape(),
                          None)
