"""What every GPU operator module shares: batches, argument values, types and rounding.

A GPU operator gets its input as a dense tensor (sample axis first) or a list of tensors
(ragged batch), and per-sample argument values as the CPU batch kernels get them: numpy
stacked on axis 0, or a list of arrays when ragged; ``_per_sample`` names them. The
rounding helpers reproduce the CPU operators' conversions exactly
(``kernels/cpu/saturate.py``, ``kernels/cpu/image/crop.py``).
"""

from __future__ import annotations

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
    """A CPU batch value (dense array or list of arrays) as torch tensors on ``device``."""
    if is_gpu_value(value):
        return value
    if device.type == "cpu":
        if isinstance(value, np.ndarray):
            return torch.from_numpy(_writable(value))
        return [torch.from_numpy(_writable(np.asarray(v))) for v in value]
    if isinstance(value, np.ndarray):
        staging = torch.empty(value.shape, dtype=torch_dtype(value.dtype), pin_memory=True)
        staging.numpy()[...] = value
        return staging.to(device, non_blocking=True)
    samples = [np.asarray(v) for v in value]
    if not samples:
        return []
    dtype = samples[0].dtype
    if any(s.dtype != dtype for s in samples):
        return [upload_batch(s, device) for s in samples]
    # One staging buffer and one copy for the whole ragged batch, then per-sample views.
    sizes = [s.size for s in samples]
    staging = torch.empty(sum(sizes), dtype=torch_dtype(dtype), pin_memory=True)
    flat = staging.numpy()
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    for s, lo, hi in zip(samples, offsets[:-1], offsets[1:], strict=True):
        flat[lo:hi] = s.reshape(-1)
    on_device = staging.to(device, non_blocking=True)
    return [on_device[lo:hi].view(s.shape) for s, lo, hi in
            zip(samples, offsets[:-1], offsets[1:], strict=True)]


def download_batch(value: Any) -> Any:
    """A GPU batch value as numpy (waits for the work on the current stream)."""
    if isinstance(value, list | tuple):
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
