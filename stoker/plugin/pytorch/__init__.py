"""PyTorch iterators with DALI's names, arguments and semantics.

``DALIGenericIterator`` turns one or more pipelines into batches of torch tensors: a list
with one dict per pipeline, keyed by ``output_map``. CPU outputs become tensors without a
copy (``torch.from_numpy`` on the batch's array). GPU outputs (``TensorListGPU``) already
are torch tensors on the pipeline's device (``cuda:device_id``, as in DALI) and are handed
over without a copy, after torch's current stream is made to wait for the pipeline's.
Epochs follow DALI 2.4's measured rules (``stoker/plugin/base.py``), with one deliberate
improvement: with ``reader_name`` and the PARTIAL policy, the reader's epochs are aligned
so that across all shards every epoch delivers every sample exactly once, also when
shards differ in size, where DALI overlaps ranks and loses samples. torch is imported
here only, never by ``import stoker``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from stoker.errors import ArgumentError
from stoker.plugin.base import LastBatchPolicy
from stoker.plugin.iterator import BaseIterator
from stoker.tensors import TensorList, TensorListGPU

__all__ = ["DALIGenericIterator", "DALIClassificationIterator", "DALIRaggedIterator",
           "LastBatchPolicy", "feed_ndarray", "to_torch"]


def to_torch(batch: TensorList | TensorListGPU) -> torch.Tensor:
    """A batch as one tensor, sharing memory with it (no copy when it is dense). A GPU
    batch stays on its device; torch's current stream waits for it to be made."""
    if isinstance(batch, TensorListGPU):
        try:
            return batch.as_torch()
        except ValueError as e:
            raise RuntimeError(f"a batch must be representable as a tensor to go into a "
                               f"dense output: {e}") from None
    try:
        array = batch.as_array()
    except ValueError as e:
        raise RuntimeError(f"a batch must be representable as a tensor to go into a dense "
                           f"output: {e}") from None
    if not array.flags.writeable:
        array = array.copy()  # torch tensors are writable; never alias read-only memory
    return torch.from_numpy(array)


def feed_ndarray(tensor_list: TensorList | TensorListGPU, arr: torch.Tensor,
                 cuda_stream: Any = None) -> torch.Tensor:
    """Copies a batch into an existing tensor of the same shape (DALI's utility)."""
    src = to_torch(tensor_list)
    if tuple(arr.shape) != tuple(src.shape):
        raise ValueError(f"feed_ndarray: the tensor has shape {tuple(arr.shape)}, the batch "
                         f"{tuple(src.shape)}")
    arr.copy_(src, non_blocking=cuda_stream is not None)
    return arr


class DALIGenericIterator(BaseIterator):
    """Batches from stoker pipelines as ``[{name: torch.Tensor}, ...]``, one dict per pipeline."""

    def _output(self, name: str, tl: TensorList | TensorListGPU, keep: int) -> Any:
        tensor = to_torch(tl)
        return tensor if keep == len(tl) else tensor[:keep]


class DALIClassificationIterator(DALIGenericIterator):
    """DALIGenericIterator with ``output_map=["data", "label"]``."""

    def __init__(self, pipelines: Any, size: int = -1, reader_name: str | None = None,
                 auto_reset: bool | str = False, fill_last_batch: bool | None = None,
                 dynamic_shape: bool = False, last_batch_padded: bool = False,
                 last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         dynamic_shape=dynamic_shape, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


class DALIRaggedIterator(DALIGenericIterator):
    """Like DALIGenericIterator, but outputs may stay ragged: per output, ``output_types``
    picks a dense tensor, a list of per-sample tensors, or a sparse COO tensor."""

    DENSE_TAG = "dense"
    SPARSE_LIST_TAG = "sparse_list"
    SPARSE_COO_TAG = "sparse_coo"

    def __init__(self, pipelines: Any, output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, output_types: Sequence[str] | None = None,
                 auto_reset: bool | str = False, fill_last_batch: bool | None = None,
                 dynamic_shape: bool = False, last_batch_padded: bool = False,
                 last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True):
        tags = list(output_types) if output_types is not None else \
            [self.DENSE_TAG] * len(output_map)
        allowed = (self.DENSE_TAG, self.SPARSE_LIST_TAG, self.SPARSE_COO_TAG)
        if len(tags) != len(output_map) or any(t not in allowed for t in tags):
            raise ArgumentError(f"DALIRaggedIterator: output_types must give one of {allowed} "
                                f"for each of the {len(output_map)} outputs, got {tags}")
        self._tags = dict(zip(output_map, tags, strict=True))
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         dynamic_shape=dynamic_shape, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _output(self, name: str, tl: TensorList, keep: int) -> Any:
        tag = self._tags[name]
        if tag == self.DENSE_TAG:
            return super()._output(name, tl, keep)
        # Trimmed before building: torch cannot slice a sparse tensor (DALI 2.4 fails on a
        # PARTIAL last batch with SPARSE_COO for that reason).
        if isinstance(tl, TensorListGPU):
            samples = [tl.torch_at(i) for i in range(keep)]
        else:
            samples = [torch.from_numpy(np.ascontiguousarray(tl.at(i))) for i in range(keep)]
        if tag == self.SPARSE_LIST_TAG:
            return samples
        return _sparse_coo(samples)


def _sparse_coo(samples: list[torch.Tensor]) -> torch.Tensor:
    """Samples of different lengths as a [batch, longest] sparse COO tensor."""
    flat = [s.reshape(-1) for s in samples]
    longest = max((len(s) for s in flat), default=0)
    device = flat[0].device if flat else None  # GPU outputs stay on their device
    rows = [torch.full((len(s),), i, dtype=torch.int64, device=device)
            for i, s in enumerate(flat)]
    cols = [torch.arange(len(s), device=device) for s in flat]
    indices = torch.stack([torch.cat(rows), torch.cat(cols)]) if flat else \
        torch.zeros((2, 0), dtype=torch.int64)
    values = torch.cat(flat) if flat else torch.zeros(0)
    # Valid by construction (one row per sample, columns 0..len-1): no check to run.
    return torch.sparse_coo_tensor(indices, values, (len(flat), longest),
                                   check_invariants=False)
