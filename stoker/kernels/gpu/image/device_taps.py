"""Resampling taps computed on the device from a few numbers per sample (issue 21: the
host cost of a batch must not grow with it as taps built sample by sample on the host do).

Per sample and axis the host sends the filter's float32 parameters as the CPU kernel
derives them (``resize_geometry.filter_args``: source position, scale, table step, anchor,
support) with the output rows wanted (first, count, reversed); the device repeats
``resample_loops._filter_row``'s float32 operations one by one (each its own rounding), so
the source indices are the CPU's and the weights too but for the total they are divided
by, summed in one operation (another order: at most an ulp or so apart). The
span each sample reads is worked out on the host from the two corner rows, as
``resize._span`` reads it. Nearest neighbour stays with the host taps (a gather).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from stoker.kernels.cpu.image.resize_geometry import NN, Filter

F32 = np.float32


class AxisPlans(NamedTuple):
    """One axis of every sample, as numpy columns (see ``plans``)."""

    lo: np.ndarray  # float32 source position of output 0's left edge
    scale: np.ndarray  # float32 source pixels per output pixel (negative: flipped)
    start: np.ndarray  # float32 lo + scale / 2 - 1/2 - anchor, as _filter_row's start
    step: np.ndarray  # float32 table samples per source pixel
    support: np.ndarray  # taps per output pixel
    extent: np.ndarray  # source pixels on this axis
    first: np.ndarray  # first output pixel wanted
    count: np.ndarray  # output pixels wanted
    reverse: np.ndarray  # in reverse order (a mirror)
    row: np.ndarray  # the sample's filter table in ``tables``
    table_len: np.ndarray
    tables: np.ndarray  # (kinds, longest) float32 filter tables, zero padded


def plans(axes: list[tuple[int, float, float, Filter, int, int, int, bool]]) -> AxisPlans:
    """Columns for (out_size, lo, hi, filter, extent, first, count, reverse) per sample;
    no nearest-neighbour filter (see the module docstring)."""
    kinds = sorted({a[3].kind for a in axes})
    if NN in kinds:
        raise ValueError("nearest neighbour taps are made on the host")
    table_list = [next(a[3].table for a in axes if a[3].kind == k) for k in kinds]
    tables = np.zeros((len(kinds), max(len(t) for t in table_list)), F32)
    for r, t in enumerate(table_list):
        tables[r, :len(t)] = t
    out = np.array([a[0] for a in axes], np.int64)
    lo = np.array([a[1] for a in axes], np.float64)
    hi = np.array([a[2] for a in axes], np.float64)
    width = np.array([a[3].width for a in axes], np.float64)
    lens = np.array([len(a[3].table) for a in axes], np.int64)
    lo32 = lo.astype(F32)
    scale = ((hi - lo) / out).astype(F32)
    step = ((lens - 1) / width).astype(F32)
    anchor = (width * 0.5).astype(F32)
    start = lo32 + F32(0.5) * scale - F32(0.5) - anchor  # float32 throughout, in order
    return AxisPlans(lo32, scale, start, step,
                     np.array([a[3].support for a in axes], np.int64),
                     np.array([a[4] for a in axes], np.int64),
                     np.array([a[5] for a in axes], np.int64),
                     np.array([a[6] for a in axes], np.int64),
                     np.array([a[7] for a in axes], np.bool_),
                     np.array([kinds.index(a[3].kind) for a in axes], np.int64), lens, tables)


def spans(p: AxisPlans) -> tuple[np.ndarray, np.ndarray]:
    """(start, span): the lowest source index each sample's taps read and how many from
    there, from the taps of its first and last wanted rows (``resize._span``)."""
    last = p.first + p.count - 1
    a = np.where(p.reverse, last, p.first)
    b = np.where(p.reverse, p.first, last)
    lows, highs = [], []
    for i in (a, b):
        pos = i.astype(F32) * p.scale + p.start
        first = np.ceil(pos).astype(np.int64)
        lows.append(np.clip(first, 0, p.extent - 1))
        highs.append(np.clip(first + p.support - 1, 0, p.extent - 1))
    lo = np.minimum(lows[0], lows[1])
    return lo, np.maximum(highs[0], highs[1]) + 1 - lo


def host_tables(p: AxisPlans, start: np.ndarray) -> list[tuple[np.ndarray, torch.dtype]]:
    """What the device needs, for ``batch.upload_tables``: (N, 9) float32-exact columns
    and the filter tables."""
    cols = np.stack([p.scale.astype(np.float64), p.start, p.step, p.support, p.extent,
                     p.first, p.count, p.reverse, p.row * p.tables.shape[1],
                     p.table_len, start], axis=1)
    return [(cols, torch.float64), (p.tables.reshape(-1), torch.float32)]


def device_taps(cols: torch.Tensor, tables: torch.Tensor, table_width: int, rows: int,
                support: int, work: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, rows, support) source indices relative to each sample's start (int64) and
    weights (``work``), zero weights past a sample's own rows and support."""
    dev = cols.device
    scale, st, step = (cols[:, k:k + 1].float() for k in range(3))
    sup, extent, first, count, reverse, base, n_table, start = (
        cols[:, k:k + 1].long() for k in range(3, 11))
    r = torch.arange(rows, device=dev)[None, :]
    wanted = r < count
    i = first + torch.where(reverse.bool(), count - 1 - r, r)
    i = torch.where(wanted, i, first)  # padding rows: any valid row, weights zeroed
    pos = i.float() * scale + st
    ceil = torch.ceil(pos)
    frac = (ceil - pos)[..., None]
    k = torch.arange(support, device=dev)
    x = (frac + k.float()) * step[..., None]
    n = n_table[..., None]
    inside = (x > -1) & (x < n)
    x0f = torch.floor(x)
    d = x - x0f
    x0 = x0f.long()
    flat = base[..., None]
    f0 = torch.where(x0 >= 0, tables[(flat + x0.clamp(0, table_width - 1))], 0.0)
    f1 = torch.where(x0 + 1 < n, tables[(flat + (x0 + 1).clamp(0, table_width - 1))], 0.0)
    v = f0 + d * (f1 - f0)
    own = (k < sup[..., None]) & wanted[..., None]
    v = torch.where(inside & own, v, 0.0)
    # One sum (a fixed number of operations): the CPU adds the taps in order, so a total
    # may differ in its last bit and a weight by an ulp (within the published tolerance).
    total = v.sum(-1)
    w = torch.where(total[..., None] != 0, v / total[..., None], v)
    idx = (ceil.long()[..., None] + k).clamp(min=0)
    idx = torch.minimum(idx, extent[..., None] - 1) - start[..., None]
    idx = torch.where(own, idx, 0)
    return idx, w.to(work)
