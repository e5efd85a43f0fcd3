"""Whole batches on the device with a fixed number of torch operations: ragged batches held
in one tensor, per-sample descriptor tables sent in one copy, windows gathered in one op.

The GPU path was slow because its operators worked sample by sample: per image, filter
matrices uploaded with blocking copies and ~30 small launches (issue 21). Here a batch's
per-sample facts (where each sample starts, its strides, its window, its taps) are built
on the host with numpy, packed into ONE buffer and copied once (``upload_tables``); the
device then does the same handful of operations whatever the batch size
(``gather_grid``). ``tests/gpu/test_gpu_batch_proxies.py`` counts them.

``common.Ragged`` is a batch of differently shaped samples that live in one tensor (one flat
buffer from an upload, or a padded output): the batched kernels address its samples by
offset and strides; per-sample views are only made when something asks for the samples.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

from stoker.kernels.gpu import common as G


def upload_tables(device: torch.device, *tables: tuple[np.ndarray, torch.dtype]
                  ) -> list[torch.Tensor]:
    """Host tables as device tensors of the given types with ONE host-to-device copy: all
    are packed into one float64 buffer (integers below 2**53 and every float32 are float64
    values exactly) and cut apart on the device."""
    arrays = [np.asarray(a) for a, _ in tables]
    sizes = [a.size for a in arrays]
    host, staging = G.pinned_staging(max(sum(sizes), 1), np.dtype(np.float64), device)
    at = 0
    for a, size in zip(arrays, sizes, strict=True):
        host[at:at + size] = a.reshape(-1)
        at += size
    flat = G.send(staging, device)
    out, at = [], 0
    for a, size, (_, dtype) in zip(arrays, sizes, tables, strict=True):
        out.append(flat[at:at + size].view(a.shape).to(dtype))
        at += size
    return out


class Source(NamedTuple):
    """Where each image of a batch lies in one 1-D tensor, for ``gather_grid``."""

    base: torch.Tensor
    offsets: np.ndarray  # (N,) element offsets
    strides: np.ndarray  # (N, 3) element strides of y, x and channel
    heights: np.ndarray
    widths: np.ndarray
    channels: int


# Element strides of (y, x, c) in a C-ordered sample of each image layout, from its shape.
_STRIDES = {
    "HWC": lambda s: ((s[1] * s[2], s[2], 1), s[0], s[1], s[2]),
    "HW": lambda s: ((s[1], 1, 0), s[0], s[1], 1),
    "CHW": lambda s: ((s[2], 1, s[1] * s[2]), s[1], s[2], s[0]),
}


def image_source(x: Any, layout: str) -> Source | None:
    """The batch ``x`` (dense tensor, Ragged or list of tensors) of single images in
    ``layout`` as a Source, or None when it is not one (other layouts, mixed types or
    channel counts, an empty batch)."""
    if layout not in _STRIDES or len(x) == 0:
        return None
    if isinstance(x, torch.Tensor):
        dense = G.movable(x).contiguous()
        n = dense.shape[0]
        (sy, sx, sc), h, w, c = _STRIDES[layout](tuple(dense.shape[1:]))
        per = dense[0].numel()
        strides = np.tile(np.array([sy, sx, sc], np.int64), (n, 1))
        return Source(dense.view(-1), np.arange(n, dtype=np.int64) * per, strides,
                      np.full(n, h), np.full(n, w), c)
    if not isinstance(x, G.Ragged):
        items = list(x)
        if any(t.dtype != items[0].dtype or t.dim() != items[0].dim() for t in items):
            return None
        flat = torch.cat([G.movable(t).reshape(-1) for t in items])
        x = G.Ragged.packed(flat, [tuple(t.shape) for t in items])
    if x.shapes.shape[1] != len(layout):
        return None
    sh = x.shapes
    order = {"HWC": (0, 1, 2), "HW": (0, 1, None), "CHW": (1, 2, 0)}[layout]
    strides = np.stack([x.strides[:, k] if k is not None else np.zeros(len(sh), np.int64)
                        for k in order], axis=1)
    h, w = sh[:, order[0]], sh[:, order[1]]
    cs = sh[:, order[2]] if order[2] is not None else np.ones(len(sh), np.int64)
    if len(set(cs.tolist())) != 1:
        return None
    return Source(G.movable(x.base), x.offsets, strides, h, w, int(cs[0]))


def pixel_rows(src: Source) -> bool:
    """Whether every sample's channels are adjacent and its pixels whole steps of the
    channel count apart: then windows are gathered by pixel (``gather_grid``), with a
    channel count times fewer indices (ImageNet-size windows of a 256 batch: 0.5 GB of
    int64 indices instead of 1.5)."""
    c = src.channels
    if c == 1 or src.base.numel() % c:
        return False
    st = src.strides
    return bool((st[:, 2] == 1).all() and not (st[:, :2] % c).any() and
                not (src.offsets % c).any())


def grid_tables(src: Source, rows: np.ndarray, cols: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Host tables for ``gather_grid``: offsets of rows (N, R), of columns (N, Q) and of
    channels (N, C) of each sample, in elements (in pixels when ``pixel_rows``);
    ``rows``/``cols`` are pixel indices (already inside each image)."""
    strides = src.strides
    row_off = src.offsets[:, None] + rows.astype(np.int64) * strides[:, 0:1]
    col_off = cols.astype(np.int64) * strides[:, 1:2]
    chan_off = np.arange(src.channels, dtype=np.int64)[None, :] * strides[:, 2:3]
    if pixel_rows(src):
        return row_off // src.channels, col_off // src.channels, chan_off
    return row_off, col_off, chan_off


def gather_grid(src: Source, row_off: torch.Tensor, col_off: torch.Tensor,
                chan_off: torch.Tensor) -> torch.Tensor:
    """(N, R, Q, C): the batch at row_off[n, r] + col_off[n, q] + chan_off[n, c]; a
    fixed number of operations whatever N (``grid_tables`` made the tables)."""
    idx = row_off[:, :, None] + col_off[:, None, :]
    if pixel_rows(src):
        c = src.channels
        n, r, q = idx.shape
        return src.base.view(-1, c).index_select(0, idx.view(-1)).view(n, r, q, c)
    return src.base.take(idx[..., None] + chan_off[:, None, None, :])
