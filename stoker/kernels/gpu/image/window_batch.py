"""crop, flip and crop_mirror_normalize of a whole batch with a fixed number of torch
operations (issue 21): one table copy and one gather, whatever the batch size.

Windows are resolved on the host by the CPU operators' functions (``geometry.windows``);
numpy turns them into per-sample row and column indices (columns reversed for a mirror,
clamped inside each image, with inside masks for the pixels a window takes from outside)
and ``batch.upload_tables`` sends those with the normalization table in one copy. The
device gathers every window from the batch tensor at once (``batch.gather_grid``; dense,
or ragged in one tensor, ``common.Ragged``), then looks values up (uint8 with constant
mean/std: the CPU operator's own table, bit-identical) or fills. Batches this does not
take return None and ``geometry.py`` works as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.gpu import batch as B
from stoker.kernels.gpu import common as G

# Table types a float64 table holds exactly (64-bit integers may not be).
_EXACT_TABLES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32,
                                       np.uint32, np.float16, np.float32, np.float64)}


def _first_dtype(x: Any) -> torch.dtype:
    return x[0].dtype if isinstance(x, list | tuple) else x.dtype


def window_grid(src: B.Source, wins: list, mirror: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(rows (N, ch), cols (N, cw), rows inside, cols inside) of windows of one size,
    clamped into each image; None when the windows differ in size or an image is empty."""
    if len({w[2:] for w in wins}) != 1 or (src.heights == 0).any() or \
            (src.widths == 0).any():
        return None
    ch, cw = wins[0][2:]
    ay = np.array([w[0] for w in wins], np.int64)
    ax = np.array([w[1] for w in wins], np.int64)
    rows = ay[:, None] + np.arange(ch)
    cols = np.broadcast_to(np.arange(cw), (len(wins), cw))
    if mirror is not None:
        cols = np.where(np.asarray(mirror, bool)[:, None], cw - 1 - cols, cols)
    cols = ax[:, None] + cols
    h, w = src.heights[:, None], src.widths[:, None]
    rows_in, cols_in = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
    return (np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1), rows_in, cols_in)


def _inside(rows_in: torch.Tensor, cols_in: torch.Tensor) -> torch.Tensor:
    return (rows_in[:, :, None] & cols_in[:, None, :])[..., None]


def _out_layout(out: torch.Tensor, channels_first: bool, layout: str) -> torch.Tensor:
    """(N, h, w, C) as the samples' layout (channels first when asked)."""
    if channels_first:
        out = out.permute(0, 3, 1, 2)
        return (out[:, 0] if layout == "HW" else out).contiguous()
    return (out[..., 0] if layout == "HW" else out).contiguous()


def cmn(x: Any, layout: str, wins: list, mirror: np.ndarray, table: np.ndarray | None,
        out_np: np.dtype, pad_to: int, channels_first: bool, device: Any) -> Any:
    """crop_mirror_normalize of uint8 images through the (C, 257) ``table`` (entry 256:
    the fill); None when the batch is not one this path takes."""
    if table is None or table.dtype not in _EXACT_TABLES:
        return None
    src = B.image_source(x, layout)
    if src is None or src.base.dtype != torch.uint8:
        return None
    grid = window_grid(src, wins, mirror)
    if grid is None:
        return None
    rows, cols, rows_in, cols_in = grid
    c = src.channels
    leaves = not (rows_in.all() and cols_in.all())
    row_off, col_off, chan_off = B.grid_tables(src, rows, cols)
    r, q, k, lut, lanes, r_in, c_in = B.upload_tables(
        device, (row_off, torch.int64), (col_off, torch.int64), (chan_off, torch.int64),
        (table.reshape(-1), G.torch_dtype(table.dtype)),
        (np.arange(c, dtype=np.int64) * 257, torch.int64),
        (rows_in, torch.bool), (cols_in, torch.bool))
    level = B.gather_grid(src, r, q, k).long()
    if leaves:
        level = torch.where(_inside(r_in, c_in), level, 256)
    out = lut[level + lanes].to(G.torch_dtype(out_np))
    if pad_to > c:  # zeros (policy "pad" with padding: the host path)
        out = torch.nn.functional.pad(out, (0, pad_to - c))
    return _out_layout(out, channels_first, layout)


def crop(x: Any, layout: str, wins: list, fill: np.ndarray, device: Any) -> Any:
    """crop of single images with windows of one size; None when not taken."""
    src = B.image_source(x, layout)
    if src is None or _first_dtype(x) in G._BARE_UNSIGNED:  # moved as signed
        return None
    grid = window_grid(src, wins, None)
    if grid is None:
        return None
    rows, cols, rows_in, cols_in = grid
    leaves = not (rows_in.all() and cols_in.all())
    row_off, col_off, chan_off = B.grid_tables(src, rows, cols)
    dtype = src.base.dtype
    r, q, k, fill_t, r_in, c_in = B.upload_tables(
        device, (row_off, torch.int64), (col_off, torch.int64), (chan_off, torch.int64),
        (fill.astype(np.float64), dtype), (rows_in, torch.bool), (cols_in, torch.bool))
    out = B.gather_grid(src, r, q, k)
    if leaves:
        out = torch.where(_inside(r_in, c_in), out, fill_t)
    return _out_layout(out, layout == "CHW", layout)


def flip(x: G.Ragged | list, layout: str, horizontal: np.ndarray, vertical: np.ndarray,
         device: Any) -> Any:
    """flip of a ragged batch of single images (HWC, HW, CHW): one gather into the
    batch's largest size; the result is a Ragged of the same shapes. None when not taken."""
    src = B.image_source(x, layout)
    if src is None or _first_dtype(x) in G._BARE_UNSIGNED or (src.heights == 0).any() or \
            (src.widths == 0).any():
        return None
    hm, wm = int(src.heights.max()), int(src.widths.max())
    h, w = src.heights[:, None], src.widths[:, None]
    ys, xs = np.arange(hm)[None, :], np.arange(wm)[None, :]
    rows = np.where(vertical[:, None], h - 1 - ys, ys)
    cols = np.where(horizontal[:, None], w - 1 - xs, xs)
    rows, cols = np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1)
    row_off, col_off, chan_off = B.grid_tables(src, rows, cols)
    r, q, k = B.upload_tables(device, (row_off, torch.int64), (col_off, torch.int64),
                              (chan_off, torch.int64))
    out = B.gather_grid(src, r, q, k)  # (N, hm, wm, C)
    c = src.channels
    shapes = [(int(a), int(b)) for a, b in zip(src.heights, src.widths, strict=True)]
    if layout == "CHW":
        out, sample = out.permute(0, 3, 1, 2), [(c, a, b) for a, b in shapes]
    elif layout == "HW":
        out, sample = out[..., 0], shapes
    else:
        sample = [(a, b, c) for a, b in shapes]
    return G.Ragged.padded(out, np.asarray(sample, np.int64))
