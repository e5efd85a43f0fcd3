"""GPU ``fn.normalize`` on torch tensors: ``(x - mean) * scale / sqrt(var + eps) + shift``.

The argument rules (axes, given mean/stddev, batch-wide statistics) are the CPU operator's
(``operators/tensor/normalize.py``). Statistics are reduced in float64 as on the CPU, in another
order, so a mean or variance may differ in its last float64 bits; the output pass repeats
the CPU's float32 arithmetic and its rounding (half away from zero, saturated).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker import types
from stoker.kernels.gpu import common as G
from stoker.operators.image.image_args import check_input_type
from stoker.operators.tensor import normalize as N


def _moments(xs: list[torch.Tensor], axes: tuple, mean: list | None, ddof: int,
             together: bool) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """As ``kernels.cpu.stats.moments``, in float64 on the device."""
    def count(x: torch.Tensor) -> int:
        return int(np.prod([x.shape[a] for a in axes]))

    def sums(x: torch.Tensor, center: torch.Tensor | None) -> torch.Tensor:
        v = x.double()
        if center is not None:
            v = (v - center) ** 2
        return v.sum(dim=axes, keepdim=True)

    if not together:
        means, variances = [], []
        for j, x in enumerate(xs):
            m = sums(x, None) / count(x) if mean is None else mean[j]
            means.append(m)
            variances.append(_variance(sums(x, m), count(x) - ddof))
        return means, variances
    total = sum(count(x) for x in xs)
    m = sum(sums(x, None) for x in xs) / total if mean is None else mean[0]
    var = _variance(sum(sums(x, m) for x in xs), total - ddof)
    return [m] * len(xs), [var] * len(xs)


def _variance(sq: torch.Tensor, dof: int) -> torch.Tensor:
    """As ``kernels.cpu.stats.variance``: 0 when ddof leaves no degree of freedom."""
    return sq / float(dof) if dof > 0 else torch.zeros_like(sq)


def normalize(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    items = G.samples(x)
    n = len(items)
    if n == 0:
        return x
    consts, argv = G.split_args(args)
    for s in items:
        check_input_type(np.empty(0, G.numpy_dtype(s.dtype)), N._IN_TYPES)
    layout = args["_in_layouts"][0] or ""
    axes, together = N.reduction(items, consts, argv, layout)
    shapes = [tuple(s.shape) for s in items]
    dev = ctx.device
    mean = N._given(argv.get("mean", consts.get("mean")), shapes, axes, "mean")
    stddev = N._given(argv.get("stddev", consts.get("stddev")), shapes, axes, "stddev")
    mean_t = None if mean is None else [G.upload(m, dev, torch.float64) for m in mean]
    if stddev is None:
        means, variances = _moments(items, axes, mean_t, consts["ddof"], together)
    else:
        means = mean_t if mean_t is not None else \
            _moments(items, axes, None, 0, together)[0]
        variances = [G.upload(s * s, dev, torch.float64) for s in stddev]
    out_t = G.torch_dtype(types.to_numpy(consts["dtype"]))
    results = []
    for s, m, var in zip(items, means, variances, strict=True):
        denom = torch.sqrt(var + consts["epsilon"])
        inv = consts["scale"] / denom
        if stddev is None:  # a constant region comes out as 'shift', not NaN
            inv = torch.where(denom == 0, torch.zeros_like(inv), inv)
        v = (s.to(torch.float32) - m.to(torch.float32)) * inv.to(torch.float32) + \
            np.float32(consts["shift"]).item()
        results.append(G.round_sat(v, out_t))
    return G.as_batch(results)  # dense input: same shapes and type, so stacked
