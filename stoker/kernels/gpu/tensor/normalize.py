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
from stoker.kernels.gpu import batch as B
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


def _dense(x: torch.Tensor, consts: dict, argv: dict, layout: str, dev: Any) -> torch.Tensor:
    """A dense batch at once (a fixed number of operations whatever its size): the
    statistics reduced over the sample axes (and the sample axis with batch=True) in
    float64, given mean/stddev stacked and sent in one copy; the output pass is the
    per-sample one's float32 arithmetic, element for element."""
    check_input_type(np.empty(0, G.numpy_dtype(x.dtype)), N._IN_TYPES)
    n = x.shape[0]
    like = [np.broadcast_to(np.empty((), G.numpy_dtype(x.dtype)), x.shape[1:])] * n
    axes, together = N.reduction(like, consts, argv, layout)
    shapes = [tuple(x.shape[1:])] * n
    dims = tuple(a + 1 for a in axes) + ((0,) if together else ())
    count = int(np.prod([x.shape[d] for d in dims]))
    reduced = (n,) + tuple(1 if a in axes else e for a, e in enumerate(x.shape[1:]))
    if together:
        reduced = (1,) + reduced[1:]
    given = {}
    for key in ("mean", "stddev"):
        rows = N._given(argv.get(key, consts.get(key)), shapes, axes, key)
        if rows is not None:
            stacked = np.stack([np.broadcast_to(r, reduced[1:]) for r in rows])
            given[key] = stacked[:1] if together else stacked
    if given:
        tables = B.upload_tables(dev, *((given[k], torch.float64) for k in given))
        given = dict(zip(given, tables, strict=True))
    v64 = x.double()
    mean = given.get("mean")
    if mean is None:
        mean = v64.sum(dim=dims, keepdim=True) / count
    if "stddev" in given:
        var = given["stddev"] * given["stddev"]
    else:
        dof = count - consts["ddof"]
        sq = ((v64 - mean) ** 2).sum(dim=dims, keepdim=True)
        var = sq / float(dof) if dof > 0 else torch.zeros_like(sq)
    denom = torch.sqrt(var + consts["epsilon"])
    inv = consts["scale"] / denom
    if "stddev" not in given:  # a constant region comes out as 'shift', not NaN
        inv = torch.where(denom == 0, torch.zeros_like(inv), inv)
    v = (x.to(torch.float32) - mean.to(torch.float32)) * inv.to(torch.float32) + \
        np.float32(consts["shift"]).item()
    return G.round_sat(v, G.torch_dtype(types.to_numpy(consts["dtype"])))


def normalize(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    if G.is_dense(x) and len(x):
        consts, argv = G.split_args(args)
        return _dense(x, consts, argv, args["_in_layouts"][0] or "", ctx.device)
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
