"""Resizing a whole batch of images with a fixed number of torch operations (issue 21).

Per sample, on the host: the CPU operators' geometry (``operators/image/resize.py``: output
size, source window, random window, crop and mirror folded into the window) and the CPU
kernel's taps (``kernels/cpu/image/resize.py``: the same source pixels and float32 weights
per output pixel, remembered per distinct axis). Then numpy packs the batch's taps into
tables padded to the batch's largest window and output, and one copy sends them
(``batch.upload_tables``). On the device, whatever the batch size:

1. one gather cuts every sample's source window (padded, edge rows repeated) out of the
   batch tensor (``batch.gather_grid``; a ragged batch is one tensor too, ``common.Ragged``);
2. two scatters make the per-sample filter matrices (rows x window) from the tap tables;
3. two batched matrix products filter rows, then columns, in float32 (float64 where TF32
   would truncate the products), with a float32 intermediate as on the CPU;
4. the CPU's rounding (half up, saturated) for integer outputs.

Nearest neighbour is the gather alone (exact). Both passes always go rows first; the CPU
picks the cheaper order per sample, so float32 sums are rounded in another order and
results stay within the published tolerance (integers 1 level, floats a few ulps).
Batches this cannot take (sequences, volumes, uint16/32/64, empty outputs, mixed output
types) return None and the caller resizes sample by sample (``resize.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.image import resize as K
from stoker.kernels.cpu.image.resize_geometry import NN
from stoker.kernels.gpu import batch as B
from stoker.kernels.gpu import common as G
from stoker.kernels.gpu.image import device_taps as DT
from stoker.operators.image import resize as R

_TYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.float16, torch.float32,
          torch.float64)


def _ndim(x: Any) -> int | None:
    if isinstance(x, torch.Tensor):
        return x.dim() - 1
    if isinstance(x, G.Ragged):
        return int(x.shapes.shape[1])
    return x[0].dim() if len(x) else None


def _full_float32(device: Any) -> bool:
    if device.type != "cuda":
        return True
    return not torch.backends.cuda.matmul.allow_tf32 and \
        torch.get_float32_matmul_precision() == "highest"


def resize_batch(x: Any, args: dict, ctx: Any, geometry: Any) -> Any:
    """The batch resized (dense, or a Ragged when output sizes differ), or None when the
    batch is not one this path takes. ``geometry(hw, sample_args, j)`` as in resize.py."""
    ndim = _ndim(x)
    if ndim is None:
        return None
    dtypes = {t.dtype for t in x} if isinstance(x, list | tuple) else {x.dtype}
    if len(dtypes) != 1 or dtypes.pop() not in _TYPES:
        return None
    layout = R.frame_layout(args["_in_layouts"][0], ndim)
    src = B.image_source(x, layout)
    if src is None:
        return None
    n = len(src.offsets)
    per = G.sample_args(args, n)
    in_np = G.numpy_dtype(src.base.dtype)
    ys, xs, types_ = [], [], set()
    for j in range(n):
        hw = (int(src.heights[j]), int(src.widths[j]))
        geom = geometry(hw, per[j], j)
        if geom.out_h * geom.out_w == 0 or hw[0] * hw[1] == 0:
            return None
        mn, mg = R.filters(per[j])
        fy, fx = K._filters(geom, mn, mg, per[j].get("antialias", True))
        ys.append((geom.out_h, geom.lo_y, geom.hi_y, fy, hw[0], 0, geom.out_h, False))
        xs.append((geom.out_w, geom.lo_x, geom.hi_x, fx, hw[1], 0, geom.out_w, False))
        types_.add(R.out_dtype(in_np, per[j]))
    if len(types_) != 1:
        return None
    out, _ = resample_axes(src, ys, xs, types_.pop(), ctx.device)
    return _as_layout(out, [(a[6], b[6]) for a, b in zip(ys, xs, strict=True)], layout)


def host_taps(ys: list, xs: list) -> list[K.Taps]:
    """The CPU kernel's taps of each sample (output windows and mirrors included), for
    the nearest-neighbour gather."""
    out = []
    for (oh, lo_y, hi_y, fy, h, y, ch, _), (ow, lo_x, hi_x, fx, w, x, cw, mirror) in \
            zip(ys, xs, strict=True):
        whole = K.Taps(K._axis(oh, lo_y, hi_y, fy.kind, fy.width, h, True),
                       K._axis(ow, lo_x, hi_x, fx.kind, fx.width, w, False),
                       fy.kind == NN and fx.kind == NN, True)  # (the pass order: unused)
        out.append(whole.window(y, x, ch, cw, mirror))
    return out


def resample_axes(src: B.Source, ys: list, xs: list, out_np: np.dtype, device: Any,
                  extra: tuple = ()) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """``_resample`` from each sample's axes, (out_size, lo, hi, filter, extent, first,
    count, reverse) for rows and columns: taps made on the device (``device_taps``) unless
    a filter is nearest neighbour (then the host's, and a gather)."""
    if any(a[3].kind == NN for a in ys + xs):
        return _resample(src, host_taps(ys, xs), out_np, device, extra)
    py, px = DT.plans(ys), DT.plans(xs)
    (sy, ny), (sx, nx) = DT.spans(py), DT.spans(px)
    groups = _groups(ny, nx, src.channels)
    if len(groups) > 1:  # rare (huge images): the host taps' grouped path
        return _resample(src, host_taps(ys, xs), out_np, device, extra)
    n = len(ys)
    oh, ow = int(py.count.max()), int(px.count.max())
    ry, rx = int(ny.max()), int(nx.max())
    rows = sy[:, None] + np.minimum(np.arange(ry)[None, :], ny[:, None] - 1)
    cols = sx[:, None] + np.minimum(np.arange(rx)[None, :], nx[:, None] - 1)
    row_off, col_off, chan_off = B.grid_tables(src, rows, cols)
    work = torch.float32 if _full_float32(device) else torch.float64
    r, c, ch, ycols, ytab, xcols, xtab, *more = B.upload_tables(
        device, (row_off, torch.int64), (col_off, torch.int64), (chan_off, torch.int64),
        *DT.host_tables(py, sy), *DT.host_tables(px, sx), *extra)
    iy_t, wy_t = DT.device_taps(ycols, ytab, py.tables.shape[1], oh,
                                int(py.support.max()), work)
    ix_t, wx_t = DT.device_taps(xcols, xtab, px.tables.shape[1], ow,
                                int(px.support.max()), work)
    return _filter(src, r, c, ch, iy_t, wy_t, ix_t, wx_t, n, oh, ow, ry, rx, out_np,
                   work, device), more


def _pad_rows(taps: list[K.AxisTaps], size: int, nearest: bool) -> np.ndarray:
    """(N, size) source pixel indices: each axis's window [start, start + extent), or its
    nearest pixels, the last one repeated past the sample's own length."""
    out = np.empty((len(taps), size), np.int64)
    for j, t in enumerate(taps):
        picks = t.idx[:, 0] + t.start if nearest else t.start + np.arange(t.extent)
        m = min(len(picks), size)
        out[j, :m] = picks[:m]
        out[j, m:] = picks[m - 1]
    return out


def _tap_tables(taps: list[K.AxisTaps], rows: int, support: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(N, rows, support) indices into the window and float32 weights, zero padded."""
    idx = np.zeros((len(taps), rows, support), np.int64)
    wts = np.zeros((len(taps), rows, support), np.float32)
    for j, t in enumerate(taps):
        o, s = t.idx.shape
        idx[j, :o, :s] = t.idx
        wts[j, :o, :s] = t.weights
    return idx, wts


def _filter(src: B.Source, r: Any, c: Any, ch: Any, iy_t: Any, wy_t: Any, ix_t: Any,
            wx_t: Any, n: int, oh: int, ow: int, ry: int, rx: int, out_np: np.dtype,
            work: torch.dtype, device: Any) -> torch.Tensor:
    """The gather, the filter matrices, the two products and the rounding."""
    out_t = G.torch_dtype(out_np)
    region = B.gather_grid(src, r, c, ch).to(work)  # (N, ry, rx, C)
    k = region.shape[3]
    # Filter matrices: clamped edge taps that hit one pixel twice add up.
    my = torch.zeros((n, oh, ry), dtype=work, device=device).scatter_add_(2, iy_t, wy_t)
    mx = torch.zeros((n, ow, rx), dtype=work, device=device).scatter_add_(2, ix_t, wx_t)
    tmp = torch.bmm(my, region.view(n, ry, rx * k))  # rows: (N, oh, rx * C)
    if work != torch.float32:  # the CPU's intermediate is float32
        tmp = tmp.float().to(work)
    acc = torch.einsum("npw,nowc->nopc", mx, tmp.view(n, oh, rx, k)).float()
    if out_np.kind in "iu":  # _rows_int: floor(x + 0.5), saturated
        info = np.iinfo(out_np)
        return G.saturate(torch.floor((acc + 0.5).clamp(float(info.min), float(info.max))),
                          out_t)
    return acc.to(out_t)


# Elements of the padded source windows one resampling gathers at most (the float32
# windows take 4 bytes each, their int64 indices 8 per 3-channel pixel: 1 GB and 0.7 GB
# at most; 256 ImageNet-size windows fit): a batch whose windows are larger (a few huge
# images in it) is resampled in groups of similar window sizes, with the host's taps.
WINDOW_BUDGET = 1 << 28


def _groups(ry: np.ndarray, rx: np.ndarray, channels: int) -> list[np.ndarray]:
    """Sample indices in groups whose padded windows (ry x rx each) fit WINDOW_BUDGET (one
    group when the batch does), by window area."""
    if len(ry) * int(ry.max()) * int(rx.max()) * channels <= WINDOW_BUDGET:
        return [np.arange(len(ry))]
    order = np.argsort(ry * rx, kind="stable")
    groups, start = [], 0
    for end in range(1, len(order) + 1):
        part = order[start:end]
        if end - start > 1 and \
                len(part) * ry[part].max() * rx[part].max() * channels > WINDOW_BUDGET:
            groups.append(order[start:end - 1])
            start = end - 1
    groups.append(order[start:])
    return groups


def _resample(src: B.Source, taps: list[K.Taps], out_np: np.dtype, device: Any,
              extra: tuple = ()) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """(N, OH, OW, C) of ``out_np``, OH and OW the batch's largest output, and the
    ``extra`` tables (``upload_tables``' pairs) on the device, sent in the same copy."""
    groups = _groups(np.array([t.y.extent for t in taps]), np.array([t.x.extent for t in taps]),
                     src.channels)
    if len(groups) == 1:
        return _resample_group(src, taps, out_np, device, extra)
    oh = max(len(t.y.idx) for t in taps)
    ow = max(len(t.x.idx) for t in taps)
    out = torch.zeros((len(taps), oh, ow, src.channels), dtype=G.torch_dtype(out_np),
                      device=device)
    more: list[torch.Tensor] = []
    for k, idx in enumerate(groups):
        part = B.Source(src.base, src.offsets[idx], src.strides[idx], src.heights[idx],
                        src.widths[idx], src.channels)
        done, got = _resample_group(part, [taps[j] for j in idx], out_np, device,
                                    extra if k == 0 else ())
        more = more or got
        rows = torch.as_tensor(idx, device=device)
        out[rows, :done.shape[1], :done.shape[2]] = done
    return out, more


def _resample_group(src: B.Source, taps: list[K.Taps], out_np: np.dtype, device: Any,
                    extra: tuple = ()) -> tuple[torch.Tensor, list[torch.Tensor]]:
    n = len(taps)
    out_t = G.torch_dtype(out_np)
    ty, tx = [t.y for t in taps], [t.x for t in taps]
    oh = max(len(t.idx) for t in ty)
    ow = max(len(t.idx) for t in tx)
    if all(t.nearest for t in taps):  # a gather: exact
        row_off, col_off, chan_off = B.grid_tables(src, _pad_rows(ty, oh, True),
                                                   _pad_rows(tx, ow, True))
        r, c, ch, *more = B.upload_tables(device, (row_off, torch.int64),
                                          (col_off, torch.int64), (chan_off, torch.int64),
                                          *extra)
        picked = B.gather_grid(src, r, c, ch)
        return (picked if picked.dtype == out_t else picked.to(out_t)), more
    ry = max(t.extent for t in ty)
    rx = max(t.extent for t in tx)
    iy, wy = _tap_tables(ty, oh, max(t.idx.shape[1] for t in ty))
    ix, wx = _tap_tables(tx, ow, max(t.idx.shape[1] for t in tx))
    row_off, col_off, chan_off = B.grid_tables(src, _pad_rows(ty, ry, False),
                                               _pad_rows(tx, rx, False))
    work = torch.float32 if _full_float32(device) else torch.float64
    r, c, ch, iy_t, wy_t, ix_t, wx_t, *more = B.upload_tables(
        device, (row_off, torch.int64), (col_off, torch.int64), (chan_off, torch.int64),
        (iy, torch.int64), (wy, work), (ix, torch.int64), (wx, work), *extra)
    return _filter(src, r, c, ch, iy_t, wy_t, ix_t, wx_t, n, oh, ow, ry, rx, out_np, work,
                   device), more


def _as_layout(out: torch.Tensor, shapes: list[tuple[int, int]], layout: str) -> Any:
    """(N, OH, OW, C) results in the samples' layout: dense when every sample has the
    batch's size, else a Ragged over the padded results."""
    c = out.shape[3]
    if layout == "CHW":
        out = out.permute(0, 3, 1, 2)
        sample = [(c, h, w) for h, w in shapes]
    elif layout == "HW":
        out = out[..., 0]
        sample = [(h, w) for h, w in shapes]
    else:
        sample = [(h, w, c) for h, w in shapes]
    if len(set(shapes)) == 1:
        return out.contiguous()
    return G.Ragged.padded(out, np.asarray(sample, np.int64))
