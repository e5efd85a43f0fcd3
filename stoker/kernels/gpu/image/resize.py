"""GPU resize, resize_crop_mirror and random_resized_crop on torch tensors.

The geometry (output size, source window, the random window) and the filter taps are the
CPU operators' own (``operators/image/resize.py``, ``kernels/cpu/image/resize.py``): per
output pixel the same source pixels with the same float32 weights, for every filter (nearest,
linear, triangular, gaussian, Catmull-Rom cubic, Lanczos-3) with and without antialiasing. The
taps become two dense weight matrices and the two 1-D passes are matrix products, in the
CPU's pass order with a float32 intermediate. Only the order of the float32 sums differs
from the CPU loops, so float outputs agree to a few units in the last place and integer
outputs (rounded half up, saturated, as the CPU rounds) by at most 1 where a value lies
next to a rounding boundary. Nearest neighbour is a gather: exact. Samples that share a
size and geometry are resampled together (one product per pass for the group).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.image import resize as K
from stoker.kernels.gpu import common as G
from stoker.kernels.gpu.image.resample_batch import resize_batch as resample_batch
from stoker.operators.image import resize as R


def as_frames(sample: torch.Tensor, layout: str) -> tuple[torch.Tensor, str]:
    """(F, H, W, C) view of a sample, as ``ops.resize.as_frames``."""
    layout = R.frame_layout(layout, sample.ndim)
    arr = sample.permute(R.TO_FRAMES[layout])
    if layout == "HW":
        arr = arr[..., None]
    return (arr if arr.ndim == 4 else arr[None]), layout


def from_frames(frames: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "HW":
        return frames[0, ..., 0].contiguous()
    if layout == "HWC":
        return frames[0].contiguous()
    if layout == "CHW":
        return frames[0].permute(2, 0, 1).contiguous()
    return frames.permute(R.FROM_FRAMES[layout]).contiguous()


def _matrix(axis: K.AxisTaps, device: Any) -> torch.Tensor:
    """The taps of one axis as an (out, extent) float32 matrix over the source region
    (clamped edge taps that hit one pixel twice add up)."""
    rows, support = axis.idx.shape
    dense = np.zeros((rows, axis.extent), np.float32)
    np.add.at(dense, (np.repeat(np.arange(rows), support), axis.idx.reshape(-1)),
              axis.weights.reshape(-1))
    return G.upload(dense, device)


def _full_float32(device: Any) -> bool:
    """Whether float32 products on ``device`` are full float32: not with TF32 allowed (a
    user's global torch setting), which keeps 10 bits of mantissa; then float64 is used."""
    if device.type != "cuda":
        return True
    return not torch.backends.cuda.matmul.allow_tf32 and \
        torch.get_float32_matmul_precision() == "highest"


def resample(frames: torch.Tensor, taps: K.Taps, out_np: np.dtype) -> torch.Tensor:
    """(N, H, W, C) frames resampled with ``taps`` into (N, oh, ow, C) of ``out_np``."""
    out_t = G.torch_dtype(out_np)
    ty, tx = taps.y, taps.x
    dev = frames.device
    if taps.nearest:  # a gather, as gather_pixels: exact
        rows = torch.as_tensor((ty.idx[:, 0] + ty.start).astype(np.int64), device=dev)
        cols = torch.as_tensor((tx.idx[:, 0] + tx.start).astype(np.int64), device=dev)
        picked = G.movable(frames)[:, rows][:, :, cols]
        picked = G.restore(picked, frames.dtype)
        return picked if picked.dtype == out_t else picked.to(out_t)
    region = frames[:, ty.start:ty.start + ty.extent, tx.start:tx.start + tx.extent]
    work = torch.float32 if _full_float32(dev) else torch.float64
    src = region.to(work)
    wy, wx = _matrix(ty, dev).to(work), _matrix(tx, dev).to(work)
    # Each pass is rounded to float32, as the CPU's passes are.
    if taps.rows_first:
        tmp = torch.einsum("oh,nhwc->nowc", wy, src).float().to(work)
        acc = torch.einsum("pw,nowc->nopc", wx, tmp).float()
    else:
        tmp = torch.einsum("pw,nhwc->nhpc", wx, src).float().to(work)
        acc = torch.einsum("oh,nhpc->nopc", wy, tmp).float()
    if out_np.kind in "iu":  # _rows_int: floor(x + 0.5), saturated
        info = np.iinfo(out_np)
        return G.saturate(torch.floor((acc + 0.5).clamp(float(info.min), float(info.max))),
                          out_t)
    return acc.to(out_t)


def _run(ins: list, args: dict, ctx: Any, geometry: Any) -> list[torch.Tensor]:
    """Resizes each sample with ``geometry(hw, sample_args, j)``; samples with equal
    shapes and geometries go through one resampling."""
    items = G.samples(ins[0])
    per = G.sample_args(args, len(items))
    groups: dict[tuple, list[int]] = {}
    plans = []
    for j, s in enumerate(items):
        frames, layout = as_frames(s, args["_in_layouts"][0])
        out_np = R.out_dtype(G.numpy_dtype(s.dtype), per[j])
        geom = geometry(tuple(frames.shape[1:3]), per[j], j)
        mn, mg = R.filters(per[j])
        key = (tuple(frames.shape), str(s.dtype), out_np, geom, mn, mg)
        groups.setdefault(key, []).append(j)
        plans.append((frames, layout, out_np, geom, mn, mg))
    results: list[Any] = [None] * len(items)
    for members in groups.values():
        frames, layout, out_np, geom, mn, mg = plans[members[0]]
        antialias = per[members[0]].get("antialias", True)
        if geom.out_h * geom.out_w * frames.shape[3] == 0:
            empty = frames.new_empty((frames.shape[0], geom.out_h, geom.out_w,
                                      frames.shape[3]), dtype=G.torch_dtype(out_np))
            for j in members:
                results[j] = from_frames(empty, layout)
            continue
        taps = K.resize_taps(tuple(frames.shape[1:3]), geom, mn, mg, antialias)
        batch = torch.cat([plans[j][0] for j in members]) if len(members) > 1 else frames
        done = resample(batch, taps, out_np)
        for j, part in zip(members, done.split(frames.shape[0]), strict=True):
            results[j] = from_frames(part, layout)
    return results


def _resized(ins: list, args: dict, ctx: Any, geometry: Any) -> Any:
    """The whole batch in a fixed number of operations (``resample_batch``) when it can,
    else sample by sample (groups of equal geometry)."""
    done = resample_batch(ins[0], args, ctx, geometry)
    if done is not None:
        return done
    return G.as_batch(_run(ins, args, ctx, geometry))


def resize(ins: list, args: dict, ctx: Any) -> Any:
    out = _resized(ins, args, ctx, lambda hw, a, j: R.geometry(hw, a))
    if args.get("save_attrs"):
        sizes = []
        for s in G.samples(ins[0]):
            frames, _ = as_frames(s, args["_in_layouts"][0])
            sizes.append(list(frames.shape[1:3]))
        attrs = torch.tensor(sizes, dtype=torch.int32).reshape(-1, 2).to(ctx.device)
        return out, attrs
    return out


def resize_crop_mirror(ins: list, args: dict, ctx: Any) -> Any:
    return _resized(ins, args, ctx, lambda hw, a, j: R.crop_geometry(
        R.geometry(hw, a), a, bool(np.asarray(a.get("mirror", 0)))))


def random_resized_crop(ins: list, args: dict, ctx: Any) -> Any:
    # The same draw as the CPU operator: sample j's stream (operator seed, index in the epoch).
    return _resized(ins, args, ctx, lambda hw, a, j: R.random_resized_geometry(
        hw, a, ctx.sample(j)))
