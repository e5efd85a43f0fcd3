"""``TensorList``: one batch, as returned by ``Pipeline.run()``.

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
