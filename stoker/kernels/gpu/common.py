"""What every GPU operator module shares: batches, argument values, types and rounding.

A GPU operator gets its input as a dense tensor (sample axis first) or a list of tensors
(ragged batch), and per-sample argument values as the CPU batch kernels get them: numpy
stacked on axis 0, or a list of arrays when ragged; ``_per_sample`` names them. The
rounding helpers reproduce the CPU operators' conversions exactly
(``kernels/cpu/saturate.py``, ``kernels/cpu/image/crop.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

_NP_TO_TORCH = {
    np.dtype(np.bool_): torch.bool, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64,
    np.dtype(np.uint16): torch.uint16, np.dtype(np.uint32): torch.uint32,
    np.dtype(np.uint64): torch.uint64, np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
}
_TORCH_TO_NP = {v: k for k, v in _NP_TO_TORCH.items()}
# torch implements only copies and conversions for these; data movement goes through the
# signed type of the same size (a bit-exact view), arithmetic through float or int64.
_BARE_UNSIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32,
                  torch.uint64: torch.int64}


def torch_dtype(dtype: Any) -> torch.dtype:
    return _NP_TO_TORCH[np.dtype(dtype)]


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    return _TORCH_TO_NP[dtype]


def movable(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a type torch can index, flip and pad (uint16/32/64 viewed as signed)."""
    signed = _BARE_UNSIGNED.get(x.dtype)
    return x if signed is None else x.view(signed)


def restore(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Undoes ``movable``."""
    return x if x.dtype == dtype else x.view(dtype)


# -- batches -------------------------------------------------------------------------------


def is_dense(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def samples(x: Any) -> list[torch.Tensor]:
    """The batch as a list of per-sample tensors (views of a dense batch)."""
    return list(x.unbind(0)) if is_dense(x) else list(x)


def as_batch(results: list[torch.Tensor]) -> Any:
    """Per-sample results as a batch: one dense tensor when shapes and types agree."""
    if results and all(r.shape == results[0].shape and r.dtype == results[0].dtype
                       for r in results):
        first = results[0]
        if first.dtype in _BARE_UNSIGNED:
            return restore(torch.stack([movable(r) for r in results]), first.dtype)
        return torch.stack(results)
    return results


def per_sample_names(args: dict) -> set[str]:
    """The arguments given as per-sample values, as the executor names them
    (``_per_sample``; ``GpuOp`` always passes it)."""
    return set(args.get("_per_sample", ()))


def sample_args(args: dict, n: int) -> list[dict]:
    """One argument dict per sample: each per-sample value replaced by the sample's."""
    varying = per_sample_names(args)
    if not varying:
        return [args] * n
    return [{**args, **{k: args[k][j] for k in varying}} for j in range(n)]


def split_args(args: dict) -> tuple[dict, dict]:
    """(constants, per-sample values): the batch stages' (args, argv) split."""
    varying = per_sample_names(args)
    return ({k: v for k, v in args.items() if k not in varying},
            {k: args[k] for k in varying})


def upload(values: Any, device: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Host values (numpy) on the device."""
    arr = np.ascontiguousarray(values)
    if not arr.flags.writeable:  # torch wants writable memory (cached tables are not)
        arr = arr.copy()
    t = torch.from_numpy(arr) if arr.dtype in _NP_TO_TORCH else torch.as_tensor(arr)
    return t.to(device=device, dtype=dtype or t.dtype)


# -- batches between host and device --------------------------------------------------


def is_gpu_value(value: Any) -> bool:
    """True for a torch tensor or a list of them (a GPU operator's output)."""
    if isinstance(value, np.ndarray):
        return False
    if isinstance(value, list | tuple):
        return bool(value) and not isinstance(value[0], np.ndarray) and \
            hasattr(value[0], "device")
    return hasattr(value, "device") and hasattr(value, "dtype")


def upload_batch(value: Any, device: Any) -> Any:
    """A CPU batch value (dense array or list of arrays) as torch tensors on ``device``:
    one copy per batch, from page-locked memory on CUDA. A ragged batch becomes one
    ``Ragged`` (the samples one after another in one tensor, so the batched kernels
    take the whole batch at once); on CPU tensors it is made the same way (one buffer, one
    tensor), so the CPU-tensor path does what the GPU path does."""
    if is_gpu_value(value):
        return value
    if isinstance(value, np.ndarray):
        if device.type == "cpu":
            return torch.from_numpy(_writable(value))
        staging = torch.empty(value.shape, dtype=torch_dtype(value.dtype), pin_memory=True)
        staging.numpy()[...] = value
        return staging.to(device, non_blocking=True)
    samples = [np.asarray(v) for v in value]
    if not samples:
        return []
    dtype = samples[0].dtype
    if any(s.dtype != dtype for s in samples) or dtype not in _NP_TO_TORCH:
        return [upload_batch(s, device) for s in samples]
    sizes = [s.size for s in samples]
    host, staging = pinned_staging(max(sum(sizes), 1), dtype, device)
    at = 0
    for s, size in zip(samples, sizes, strict=True):
        host[at:at + size] = s.reshape(-1)
        at += size
    return Ragged.packed(send(staging, device)[:sum(sizes)],
                           [s.shape for s in samples])


class Ragged(Sequence):
    """Samples of different shapes inside one 1-D tensor ``base``: sample j has shape
    ``shapes[j]`` and element strides ``strides[j]`` and starts at element
    ``offsets[j]`` of ``base``. A sequence of per-sample tensors (views, made on first use)."""

    def __init__(self, base: torch.Tensor, offsets: np.ndarray, shapes: np.ndarray,
                 strides: np.ndarray):
        self.base = base
        self.offsets = np.asarray(offsets, np.int64)
        self.shapes = np.asarray(shapes, np.int64)
        self.strides = np.asarray(strides, np.int64)
        self._items: list[torch.Tensor] | None = None

    @classmethod
    def packed(cls, base: torch.Tensor, shapes: list[tuple[int, ...]]) -> Ragged:
        """C-ordered samples one after another in ``base``."""
        ndim = len(shapes[0]) if shapes else 0
        sh = np.asarray(shapes, np.int64).reshape(len(shapes), ndim)
        sizes = sh.prod(axis=1) if ndim else np.ones(len(shapes), np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        strides = np.ones_like(sh)
        for k in range(ndim - 2, -1, -1):
            strides[:, k] = strides[:, k + 1] * sh[:, k + 1]
        return cls(base, offsets, sh, strides)

    @classmethod
    def padded(cls, dense: torch.Tensor, shapes: np.ndarray) -> Ragged:
        """Sample j is the leading ``shapes[j]`` corner of ``dense[j]`` (contiguous)."""
        dense = dense.contiguous()
        n = dense.shape[0]
        per = dense[0].numel() if n else 0
        strides = np.broadcast_to(np.asarray(dense.stride()[1:], np.int64),
                                  (n, dense.dim() - 1))
        return cls(dense.view(-1), np.arange(n, dtype=np.int64) * per, shapes, strides)

    @property
    def device(self) -> torch.device:
        return self.base.device

    @property
    def dtype(self) -> torch.dtype:
        return self.base.dtype

    @property
    def ndim(self) -> int:
        """As a dense batch's: the samples' number of dimensions plus one."""
        return int(self.shapes.shape[1]) + 1

    def __len__(self) -> int:
        return len(self.offsets)

    def _views(self) -> list[torch.Tensor]:
        if self._items is None:
            start = self.base.storage_offset()
            self._items = [self.base.as_strided(tuple(int(v) for v in s),
                                                tuple(int(v) for v in st), start + int(o))
                           for o, s, st in zip(self.offsets, self.shapes, self.strides,
                                               strict=True)]
        return self._items

    def __getitem__(self, i: Any) -> Any:
        return self._views()[i]

    def __iter__(self):
        return iter(self._views())

    def tolist(self) -> list[torch.Tensor]:
        return list(self._views())


def pinned_staging(n: int, dtype: np.dtype, device: torch.device) -> tuple[np.ndarray, Any]:
    """A host buffer of n elements to fill, and the tensor over it that goes to ``device``
    (page-locked memory on CUDA, so the copy does not block the host)."""
    if device.type == "cuda":
        staging = torch.empty(n, dtype=torch_dtype(dtype), pin_memory=True)
        return staging.numpy(), staging
    host = np.empty(n, dtype)
    return host, host


def send(staging: Any, device: torch.device) -> torch.Tensor:
    """The staging buffer on the device: one copy (none on CPU tensors)."""
    if isinstance(staging, np.ndarray):
        return torch.from_numpy(staging)
    return staging.to(device, non_blocking=True)


def download_batch(value: Any) -> Any:
    """A GPU batch value as numpy (waits for the work on the current stream)."""
    if isinstance(value, list | tuple) or not hasattr(value, "detach"):  # or a Ragged
        return [t.detach().cpu().numpy() for t in value]
    return value.detach().cpu().numpy()


def _writable(arr: np.ndarray) -> np.ndarray:
    # torch warns on (and would let kernels write into) read-only numpy memory.
    return arr if arr.flags.writeable else arr.copy()


# -- conversions ----------------------------------------------------------------------------


def round_half_away(v: torch.Tensor) -> torch.Tensor:
    """Nearest integer, halves away from zero, exact in v's own float type: the fraction
    is computed exactly, so 0.49999997 stays 0 (a float32 ``v + 0.5`` would make it 1)."""
    whole = torch.trunc(v)
    frac = v - whole
    return whole + torch.where(frac.abs() >= 0.5, torch.sign(v), torch.zeros_like(v))


def round_sat(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Float values as ``dtype``: integers rounded half away from zero and saturated (NaN
    becomes 0); floats converted; bool is "not zero" (as ``saturate.round_sat``)."""
    if dtype.is_floating_point:
        return v.to(dtype)
    if dtype == torch.bool:
        return v != 0
    return saturate(round_half_away(v), dtype)


def saturate(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Integral float values clamped to an integer type's range and converted (NaN: 0)."""
    info = torch.iinfo(dtype)
    lo, hi = float(info.min), float(info.max)
    if v.dtype != torch.float64 and (abs(lo) > 2**24 or hi > 2**24):
        v = v.double()  # int32/int64 limits are not float32 values: clamp exactly
    v = torch.nan_to_num(v.clamp(lo, hi), nan=0.0)
    if hi < 2**53:
        return v.to(dtype)
    top = v >= hi  # 2**63 (2**64) itself does not convert: the maximum is set by its bits
    out = torch.where(top, torch.zeros_like(v), v).to(dtype)
    bits = out.view(torch.int64)
    bits.masked_fill_(top, -1 if dtype == torch.uint64 else info.max)
    return out


def round_half_up_float32(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``crop.convert`` on float32 values: floor(|v| + 0.5) in float32 with the sign, then
    saturated (crop_mirror_normalize's conversion of its float32 results)."""
    if dtype.is_floating_point:
        return v.to(dtype)
    r = torch.copysign(torch.floor(v.abs() + 0.5), v)
    return saturate(r, dtype)
