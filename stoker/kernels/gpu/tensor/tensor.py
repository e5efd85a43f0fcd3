"""GPU cast, transpose and pad on torch tensors: the CPU operators' rules, exact results.

Shapes, permutations, padded extents and fill values are worked out on the host by the
CPU operators' functions (``kernels/cpu/tensor/tensor.py``, ``ops/tensor_join.pad_plan``); only
the data moves on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker import types
from stoker.kernels.cpu.tensor.tensor import transpose_axes
from stoker.kernels.gpu import common as G
from stoker.operators.machinery.tensor_util import check_out_layout


def _each(x: Any, fn: Any) -> Any:
    return fn(x) if G.is_dense(x) else [fn(s) for s in x]


# -- cast -----------------------------------------------------------------------------------


def cast_tensor(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``kernels.cpu.tensor.cast_cpu`` on a tensor: floats to integers round half away from
    zero and saturate (NaN: 0), integers saturate, bool is "not zero" after rounding."""
    if x.dtype == dtype:
        return x.clone()
    if dtype.is_floating_point:
        return x.to(dtype)
    if x.dtype.is_floating_point:
        v = G.round_half_away(x)
        return v != 0 if dtype == torch.bool else G.saturate(v, dtype)
    if dtype == torch.bool or x.dtype == torch.bool:
        return x.to(dtype)
    src, info = torch.iinfo(x.dtype), torch.iinfo(dtype)
    lo, hi = max(src.min, info.min), min(src.max, info.max)
    if x.dtype == torch.uint64:
        raise TypeError("fn.cast from uint64 to another integer type is not supported on the "
                        "GPU")
    if x.dtype in (torch.uint16, torch.uint32):  # torch cannot clamp these: go through int64
        x = x.to(torch.int64)
    return x.clamp(lo, hi).to(dtype)


def cast(ins: list, args: dict, ctx: Any) -> Any:
    out = G.torch_dtype(types.to_numpy(args["dtype"]))
    return _each(ins[0], lambda s: cast_tensor(s, out))


def cast_like(ins: list, args: dict, ctx: Any) -> Any:
    ref = ins[1] if G.is_dense(ins[1]) or not len(ins[1]) else ins[1][0]
    out = ref.dtype if isinstance(ref, torch.Tensor) else G.torch_dtype(np.asarray(ref).dtype)
    return _each(ins[0], lambda s: cast_tensor(s, out))


# -- transpose ------------------------------------------------------------------------------


def transpose(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    lead = 1 if G.is_dense(x) else 0

    def one(s: torch.Tensor) -> torch.Tensor:
        out = s.permute(transpose_axes(tuple(s.shape), args.get("perm"), lead))
        check_out_layout(out.ndim - lead, args)
        return G.restore(G.movable(out).contiguous(), s.dtype)

    return _each(x, one)


# -- pad ------------------------------------------------------------------------------------


def pad(ins: list, args: dict, ctx: Any) -> Any:
    from stoker.operators.tensor.join import pad_plan

    x = ins[0]
    n = len(x)
    if n == 0:
        return x
    consts, argv = G.split_args(args)
    items = G.samples(x)
    dtype = items[0].dtype
    shapes = [tuple(s.shape) for s in items]
    targets, fills = pad_plan(shapes, G.numpy_dtype(dtype), consts, argv, n)
    per_fill = np.ndim(fills) > 0
    if G.is_dense(x) and all(t == targets[0] for t in targets):
        if tuple(x.shape[1:]) == targets[0]:
            return x
        out = _filled((n, *targets[0]), fills, dtype, ctx.device)
        G.movable(out)[(slice(None),) + tuple(slice(0, e) for e in x.shape[1:])] = \
            G.movable(x)
        return out
    results = []
    for j, s in enumerate(items):
        if tuple(s.shape) == targets[j]:
            results.append(s)
            continue
        out = _filled(targets[j], fills[j] if per_fill else fills, dtype, ctx.device)
        G.movable(out)[tuple(slice(0, e) for e in s.shape)] = G.movable(s)
        results.append(out)
    return G.as_batch(results)


def _filled(shape: tuple, fill: Any, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """A tensor of ``shape`` holding ``fill``: one value, or one per leading row."""
    out = torch.empty(shape, dtype=dtype, device=device)
    view = G.movable(out)
    values = np.asarray(fill, G.numpy_dtype(dtype)).reshape(-1)
    values = values.view(G.numpy_dtype(view.dtype))  # the same bits, as the movable type
    if values.size == 1:
        view.fill_(values[0].item())
    else:
        rows = G.upload(values, device).view((len(values),) + (1,) * (len(shape) - 1))
        view.copy_(rows.expand(shape))
    return out
