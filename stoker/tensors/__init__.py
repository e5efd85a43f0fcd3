"""``TensorList`` (CPU) and ``TensorListGPU``: one batch, as returned by ``Pipeline.run()``.

A batch is held either as one dense array whose first axis is the sample (uniform shapes,
no copy to hand out) or as a list of per-sample arrays (ragged shapes). Samples come out
as numpy views; ``as_array()`` stacks only when the batch is not dense already.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types


class TensorList:
    __slots__ = ("_dense", "_samples", "_layout", "_source_info")

    def __init__(self, data: np.ndarray | list[np.ndarray], layout: str = "",
                 source_info: list[str] | None = None):
        if isinstance(data, np.ndarray):
            self._dense: np.ndarray | None = data
            self._samples: list[np.ndarray] | None = None
        else:
            self._dense = None
            self._samples = list(data)
        self._layout = layout or ""
        self._source_info = source_info

    # -- samples ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._dense) if self._dense is not None else len(self._samples)

    def at(self, i: int) -> np.ndarray:
        if self._dense is not None:
            return self._dense[i]
        return self._samples[i]

    def __getitem__(self, i: int) -> np.ndarray:
        return self.at(i)

    def __iter__(self):
        return (self.at(i) for i in range(len(self)))

    def samples(self) -> list[np.ndarray]:
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
                raise ValueError(
                    "TensorList.as_array: samples have different shapes "
                    f"({', '.join(map(str, shapes[:4]))}{', ...' if len(shapes) > 4 else ''}); "
                    "only a batch of uniform shape can be one array; use at(i) per sample"
                )
            if not self._samples:
                raise ValueError("TensorList.as_array: the batch is empty")
            self._dense = np.stack(self._samples)
            self._samples = None
        return self._dense

    as_tensor = as_array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # numpy 2 passes copy=True for np.array(tl) and trusts us to copy: the batch is
        # ours, and the caller's array must not alias it.
        arr = self.as_array()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.as_array().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.as_array().__dlpack_device__()

    def layout(self) -> str:
        return self._layout

    def shape(self) -> list[tuple[int, ...]]:
        if self._dense is not None:
            return [self._dense.shape[1:]] * len(self._dense)
        return [s.shape for s in self._samples]

    @property
    def dtype(self) -> types.DALIDataType:
        return types.to_dali(self.numpy_dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        if self._dense is not None:
            return self._dense.dtype
        return self._samples[0].dtype if self._samples else np.dtype(np.float32)

    def __repr__(self) -> str:
        shapes = self.shape()
        head = ", ".join(map(str, shapes[:3])) + (", ..." if len(shapes) > 3 else "")
        return (f"TensorList(len={len(self)}, dtype={self.dtype.name}, layout={self._layout!r}, "
                f"shapes=[{head}])")


def _uniform(samples: list[np.ndarray]) -> bool:
    if not samples:
        return True
    s0, d0 = samples[0].shape, samples[0].dtype
    return all(s.shape == s0 and s.dtype == d0 for s in samples)


class TensorListGPU:
    """One batch made by GPU operators: torch tensors on the pipeline's device (CUDA, or
    CPU tensors under ``STOKER_GPU_ON_CPU=1``), held dense (one tensor, sample axis first)
    or as a list of per-sample tensors.

    The pipeline's GPU work runs on its own CUDA stream and ``event`` marks the end of this
    batch on it. Taking tensors out (``at``, ``[i]``, ``as_tensor``) makes torch's current
    stream wait for that event (no host wait) and records the tensors' use on it, so the
    caching allocator does not hand their memory back to the pipeline's stream while the
    consumer's stream may still read it. ``as_cpu()`` waits on the host.
    """

    __slots__ = ("_dense", "_samples", "_layout", "_source_info", "_event", "_synced")

    def __init__(self, data: Any, layout: str = "", source_info: list[str] | None = None,
                 event: Any = None):
        if isinstance(data, list | tuple):
            self._dense = None
            self._samples: list | None = list(data)
        else:
            self._dense = data
            self._samples = None
        self._layout = layout or ""
        self._source_info = source_info
        self._event = event  # torch.cuda.Event, or None for CPU tensors
        self._synced: set[int] = set()  # streams already made to wait for the event

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

    def at(self, i: int) -> Any:
        """Sample ``i`` as a torch tensor (a view of the batch when it is dense)."""
        self._ready_on_current_stream()
        if self._dense is not None:
            return self._dense[i]
        return self._samples[i]

    def __getitem__(self, i: int) -> Any:
        return self.at(i)

    def __iter__(self):
        return (self.at(i) for i in range(len(self)))

    def source_info(self, i: int) -> str:
        """Where sample ``i`` came from (a file path for file readers), or ''."""
        return self._source_info[i] if self._source_info else ""

    # -- batch views -----------------------------------------------------------------------
    def is_dense_tensor(self) -> bool:
        return self._dense is not None or _uniform(self._samples)

    def as_tensor(self) -> Any:
        """The batch as one torch tensor on the device: the batch itself when it is dense
        (no copy), else the samples stacked; needs uniform sample shapes."""
        self._ready_on_current_stream()
        if self._dense is None:
            if not self._samples:
                raise ValueError("TensorListGPU.as_tensor: the batch is empty")
            if not self.is_dense_tensor():
                shapes = sorted({tuple(t.shape) for t in self._samples})
                raise ValueError(
                    "TensorListGPU.as_tensor: samples have different shapes "
                    f"({', '.join(map(str, shapes[:4]))}{', ...' if len(shapes) > 4 else ''}); "
                    "only a batch of uniform shape can be one tensor; use at(i) per sample")
            import torch

            return torch.stack(self._samples)
        return self._dense

    def as_cpu(self) -> TensorList:
        """The batch copied to host memory, as a ``TensorList`` of numpy arrays."""
        if self._event is not None:
            self._event.synchronize()
        if self._dense is not None:
            data: Any = self._dense.detach().cpu().numpy()
        else:
            data = [t.detach().cpu().numpy() for t in self._samples]
        return TensorList(data, layout=self._layout, source_info=self._source_info)

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        tensor = self.as_tensor() if self._event is None else self._as_tensor_for(stream)
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
        return int(self.as_tensor().data_ptr())

    def layout(self) -> str:
        return self._layout

    def shape(self) -> list[tuple[int, ...]]:
        if self._dense is not None:
            return [tuple(self._dense.shape[1:])] * len(self._dense)
        return [tuple(t.shape) for t in self._samples]

    @property
    def device(self) -> Any:
        """The torch device the batch is on."""
        first = self._first()
        return None if first is None else first.device

    @property
    def dtype(self) -> types.DALIDataType:
        return types.to_dali(self.numpy_dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        first = self._first()
        if first is None:
            return np.dtype(np.float32)
        from stoker.kernels.gpu.common import numpy_dtype

        return numpy_dtype(first.dtype)

    def __repr__(self) -> str:
        shapes = self.shape()
        head = ", ".join(map(str, shapes[:3])) + (", ..." if len(shapes) > 3 else "")
        return (f"TensorListGPU(len={len(self)}, dtype={self.dtype.name}, "
                f"layout={self._layout!r}, device={self.device}, shapes=[{head}])")
