"""GPU crop, flip and crop_mirror_normalize on torch tensors (CUDA, or CPU in CI).

Windows, anchors and normalization factors are resolved on the host by the CPU operators'
own functions (``operators/image/geometry.py``, ``kernels/cpu/image/crop.py``), so both
devices cut the same pixels; the pixel work is one gather per batch (per sample when the
windows differ in size). crop_mirror_normalize of uint8 images with constant mean/std looks the
values up in the CPU operator's normalization table, so the results are bit-identical; the
other cases compute ``normalize_value``'s arithmetic (float32 difference, float64 multiply-add).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker import types
from stoker.kernels.cpu.image import crop as K
from stoker.kernels.gpu import common as G
from stoker.kernels.gpu.image import window_batch as W
from stoker.operators.image import crop_planes as P
from stoker.operators.image.crop_mirror_normalize import (
    _channels_vector,
    cmn_batch,
    padded_channels,
)
from stoker.operators.image.geometry import crop_batch, resolve_windows, sample_kernel
from stoker.operators.image.resize import DEFAULT_LAYOUT

# The layouts the gathers below cut; volumes, depth windows and type conversions (rare on
# a GPU) run the CPU operator's kernel on the host, sample by sample (``_on_host``).
PLANE_LAYOUTS = ("HW", "HWC", "CHW", "FHWC", "FCHW")


def sample_layout(args: dict, ndim: int) -> str:
    layout = args["_in_layouts"][0] or DEFAULT_LAYOUT.get(ndim, "")
    return layout if layout in PLANE_LAYOUTS else P.sample_layout(layout, ndim)


def _host_only(args: dict, layout: str, dtype: Any) -> bool:
    """Whether the GPU gathers cannot cut this (see PLANE_LAYOUTS)."""
    if layout not in PLANE_LAYOUTS:
        return True
    if "F" in layout:
        try:
            if P.requested_sizes(args)[0] > 0:
                return True  # a depth window over the frames
        except ValueError:  # per-sample sizes that differ
            return True
    if args.get("dtype") is not None and types.to_numpy(args["dtype"]) != dtype:
        return True
    return bool(args.get("pad_output")) and args["out_of_bounds_policy"] == "pad"


def _on_host(x: Any, args: dict, ctx: Any, batch_kernel: Any) -> Any:
    """The CPU operator's kernel on each sample (moved to the host and back)."""
    kernel = sample_kernel(batch_kernel)
    items = G.samples(x)
    out = []
    for s, a in zip(items, G.sample_args(args, len(items)), strict=True):
        res = kernel([G.restore(G.movable(s), s.dtype).cpu().numpy()], a, None)
        out.append(G.upload(np.ascontiguousarray(res), ctx.device))
    return G.as_batch(out)


def as_frames(x: torch.Tensor, layout: str) -> torch.Tensor:
    """A sample as an (F, H, W, C) view (F = 1 for images)."""
    if layout == "HW":
        return x[None, ..., None]
    if layout == "HWC":
        return x[None]
    if layout == "CHW":
        return x.permute(1, 2, 0)[None]
    if layout == "FHWC":
        return x
    return x.permute(0, 2, 3, 1)  # FCHW


def from_frames(frames: torch.Tensor, layout: str, channels_first: bool) -> torch.Tensor:
    """(F, h, w, C) results as a sample of ``layout`` (channels first when asked)."""
    out = frames.permute(0, 3, 1, 2) if channels_first else frames
    if layout == "HW":
        out = out[:, 0] if channels_first else out[..., 0]
    if "F" not in layout:
        out = out[0]
    return out.contiguous()


def _one(args: dict) -> dict:
    """A sample's arguments in the shape of a chunk of one (as ops.geometry.sample_kernel)."""
    return {k: (np.asarray(v)[None] if isinstance(v, np.ndarray | np.generic) else v)
            for k, v in args.items()}


def windows(shapes: list[tuple[int, int]], per: list[dict]) -> list[tuple[int, int, int, int]]:
    """(ay, ax, ch, cw) of each sample, resolved as the CPU operator resolves them."""
    out = []
    for (h, w), a in zip(shapes, per, strict=True):
        ay, ax, ch, cw = resolve_windows(1, h, w, _one(a))
        if a["out_of_bounds_policy"] == "error":
            K.check_inside(ay, ax, ch, cw, h, w)
        out.append((int(ay[0]), int(ax[0]), ch, cw))
    return out


def _gather(x: Any, frames: list[torch.Tensor], layout: str, wins: list,
            mirror: np.ndarray | None = None
            ) -> list[tuple[list[int], torch.Tensor, torch.Tensor | None]]:
    """(sample indices, their windows' frames stacked, inside mask or None) groups: one
    gather for a dense batch whose windows are one size, else one per sample. ``mirror``:
    (n,) bools, or None for no mirroring."""
    if G.is_dense(x) and len({w[2:] for w in wins}) == 1:
        f = frames[0].shape[0]
        ay, ax = _anchors(wins, f)
        out, inside = gather_windows(batch_frames(G.movable(x), layout), ay, ax, *wins[0][2:],
                                     None if mirror is None else np.repeat(mirror, f))
        return [(list(range(len(frames))), out, inside)]
    groups = []
    for j, (fr, (ay, ax, ch, cw)) in enumerate(zip(frames, wins, strict=True)):
        k = fr.shape[0]
        out, inside = gather_windows(fr, np.full(k, ay), np.full(k, ax), ch, cw,
                                     None if mirror is None else np.full(k, mirror[j]))
        groups.append(([j], out, inside))
    return groups


def gather_windows(frames: torch.Tensor, ay: np.ndarray, ax: np.ndarray, ch: int, cw: int,
                   mirror: np.ndarray | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(N, ch, cw, C) windows of (N, H, W, C) frames at per-frame anchors (host arrays),
    columns reversed where ``mirror``; pixels outside the frame repeat the edge. Also
    returns the (N, ch, cw) mask of pixels inside when a window leaves its frame (else
    None; decided on the host, so the device is never waited for)."""
    n, h, w, _ = frames.shape
    dev = frames.device
    leaves = bool(len(ay)) and bool((ay < 0).any() or (ax < 0).any() or
                                    (ay + ch > h).any() or (ax + cw > w).any())
    cols = np.broadcast_to(np.arange(cw), (n, cw))
    if mirror is not None:
        cols = np.where(np.asarray(mirror, bool)[:, None], cw - 1 - cols, cols)
    ys = G.upload(np.asarray(ay, np.int64)[:, None] + np.arange(ch), dev)
    xs = G.upload(np.asarray(ax, np.int64)[:, None] + cols, dev)
    inside = None
    if leaves:
        inside = ((ys >= 0) & (ys < h))[:, :, None] & ((xs >= 0) & (xs < w))[:, None, :]
    if h == 0 or w == 0:
        return frames.new_zeros((n, ch, cw, frames.shape[3])), inside
    rows = torch.arange(n, device=dev)[:, None, None]
    out = frames[rows, ys.clamp(0, h - 1)[:, :, None], xs.clamp(0, w - 1)[:, None, :]]
    return out, inside


def _fill(args: dict, c: int, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """Fill values as the CPU operator casts them (``crop_planes.fill_cast``)."""
    fill = P.fill_or_zero(args["fill_values"], c, args["out_of_bounds_policy"] == "pad")
    return G.movable(G.upload(P.fill_cast(fill, G.numpy_dtype(dtype)), device))


def _anchors(wins: list, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's anchors, repeated for its frames."""
    ay = np.repeat(np.array([w[0] for w in wins], np.int64), frames)
    ax = np.repeat(np.array([w[1] for w in wins], np.int64), frames)
    return ay, ax


def batch_frames(x: torch.Tensor, layout: str) -> torch.Tensor:
    """A dense batch as an (n * F, H, W, C) view (the sample axis merges with frames)."""
    if "F" in layout:
        return (x if layout == "FHWC" else x.permute(0, 1, 3, 4, 2)).flatten(0, 1)
    return {"HW": lambda: x[..., None], "HWC": lambda: x,
            "CHW": lambda: x.permute(0, 2, 3, 1)}[layout]()


# -- crop -----------------------------------------------------------------------------------


def _batch_facts(x: Any) -> tuple[torch.dtype, int, list[tuple[int, ...]]]:
    """(type, sample ndim, sample shapes) of a dense, Ragged or listed batch, read
    without making per-sample views."""
    if isinstance(x, torch.Tensor):
        return x.dtype, x.dim() - 1, [tuple(x.shape[1:])] * len(x)
    if isinstance(x, G.Ragged):
        return x.dtype, x.ndim - 1, [tuple(int(v) for v in s) for s in x.shapes]
    return x[0].dtype, x[0].dim(), [tuple(t.shape) for t in x]


_HW_AXES = {"HW": (0, 1), "HWC": (0, 1), "CHW": (1, 2)}


def _batched_windows(x: Any, args: dict, ctx: Any, name: str) -> Any:
    """(layout, dtype, channels, windows) of a batch of single images that the batched
    gathers (``window_batch``) may take, or None."""
    dtype, ndim, shapes = _batch_facts(x)
    layout = sample_layout(args, ndim)
    if layout not in _HW_AXES or any(len(s) != ndim for s in shapes) or \
            (name == "crop" and _host_only(args, layout, G.numpy_dtype(dtype))):
        return None
    a, b = _HW_AXES[layout]
    c = 1 if layout == "HW" else shapes[0][2 if layout == "HWC" else 0]
    wins = windows([(s[a], s[b]) for s in shapes], G.sample_args(args, len(shapes)))
    return layout, dtype, c, wins


def crop(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    if len(x):
        facts = _batched_windows(x, args, ctx, "crop")
        if facts is not None:  # single images: the whole batch in one gather
            layout, dtype, c, wins = facts
            fill = P.fill_cast(P.fill_or_zero(args["fill_values"], c,
                                              args["out_of_bounds_policy"] == "pad"),
                               G.numpy_dtype(dtype))
            done = W.crop(x, layout, wins, np.broadcast_to(fill, (c,)), ctx.device)
            if done is not None:
                return done
    items = G.samples(x)
    n = len(items)
    if n == 0:
        return x
    dtype = items[0].dtype
    layout = sample_layout(args, items[0].ndim)
    if _host_only(args, layout, G.numpy_dtype(dtype)):
        return _on_host(x, args, ctx, crop_batch)
    frames = [as_frames(G.movable(s), layout) for s in items]
    wins = windows([tuple(f.shape[1:3]) for f in frames], G.sample_args(args, n))
    c = frames[0].shape[3]
    fill = _fill(args, c, dtype, ctx.device)
    parts: list[torch.Tensor] = []
    for idx, out, inside in _gather(x, frames, layout, wins):
        if inside is not None:
            out = torch.where(inside[..., None], out, fill)
        parts.extend(out.split(out.shape[0] // len(idx)))
    return G.as_batch([G.restore(from_frames(p, layout, layout.endswith("CHW")), dtype)
                       for p in parts])


# -- flip -----------------------------------------------------------------------------------


def flip(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    n = len(x)
    if n == 0:
        return x
    _, ndim, _ = _batch_facts(x)
    layout = args["_in_layouts"][0] or DEFAULT_LAYOUT.get(ndim, "")
    flags = {}
    for letter, key in (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise")):
        if letter in layout:
            col = np.broadcast_to(np.asarray(args[key]).reshape(-1), (n,)).astype(bool)
            flags[layout.index(letter)] = col
    if G.is_dense(x):
        dtype = x.dtype
        out = G.movable(x)
        for axis, col in flags.items():
            if col.all():
                out = out.flip(axis + 1)
            elif col.any():
                mask = G.upload(col, ctx.device).view((n,) + (1,) * ndim)
                out = torch.where(mask, out.flip(axis + 1), out)
        return G.restore(out.contiguous(), dtype)
    if layout in _HW_AXES:  # ragged single images: one gather into a Ragged
        done = W.flip(x, layout, flags[layout.index("W")], flags[layout.index("H")],
                      ctx.device)
        if done is not None:
            return done
    results = []
    for j, s in enumerate(x):
        axes = [a for a, col in flags.items() if col[j]]
        moved = G.movable(s)
        results.append(G.restore((moved.flip(axes) if axes else moved).contiguous(), s.dtype))
    return results


# -- crop_mirror_normalize ------------------------------------------------------------------


# Input types whose difference with a float32 mean is float64 in the CPU loop (numpy's
# promotion); the others subtract in float32.
_WIDE = (torch.int32, torch.int64, torch.uint32, torch.uint64, torch.float64)


def crop_mirror_normalize(ins: list, args: dict, ctx: Any) -> Any:
    if args.get("_pre_crop") is not None:
        raise ValueError("the crop -> crop_mirror_normalize fusion is CPU-only")
    x = ins[0]
    done = _cmn_batched(x, args, ctx) if len(x) else None
    if done is not None:
        return done
    items = G.samples(x)
    n = len(items)
    out_np = types.to_numpy(args["dtype"])
    if n == 0:
        return x
    layout = sample_layout(args, items[0].ndim)
    out_layout = P.out_letters(layout, args["output_layout"])
    if _host_only(args, layout, out_np) or out_layout.replace("F", "") not in ("CHW", "HWC",
                                                                               "HW"):
        return _on_host(x, args, ctx, cmn_batch)
    channels_first = out_layout.replace("F", "") == "CHW"
    frames = [as_frames(G.movable(s), layout) for s in items]
    c = frames[0].shape[3]
    per = G.sample_args(args, n)
    wins = windows([tuple(f.shape[1:3]) for f in frames], per)
    constant = not {"mean", "std"} & G.per_sample_names(args)
    table = None
    if items[0].dtype == torch.uint8 and constant:
        mean = _channels_vector(args["mean"], c, "mean")
        std = _channels_vector(args["std"], c, "std")
        fill = _cmn_fill(args, c, out_np)
        host = K.normalize_table(mean, std, args["scale"], args["shift"], fill,
                                 K.table_type(out_np))
        table = G.upload(host, ctx.device).reshape(-1)
    mirror = np.broadcast_to(np.asarray(args["mirror"]).reshape(-1), (n,)).astype(bool)
    results: list[torch.Tensor] = []
    for idx, win, inside in _gather(x, frames, layout, wins, mirror):
        f = win.shape[0] // len(idx)
        if table is not None:
            norm = _lookup(win, inside, table, c).to(G.torch_dtype(out_np))
        else:
            norm = _normalize(G.restore(win, items[0].dtype), inside, [per[j] for j in idx], f,
                              c, args, out_np)
        if args["pad_output"] and padded_channels(c) > c:  # zeros (policy "pad": host)
            norm = torch.nn.functional.pad(norm, (0, padded_channels(c) - c))
        results.extend(from_frames(part, layout, channels_first) for part in norm.split(f))
    return G.as_batch(results)


def _cmn_batched(x: Any, args: dict, ctx: Any) -> Any:
    """uint8 images with constant mean/std, windows of one size: one table copy, one
    gather, one lookup (``window_batch.cmn``); None otherwise."""
    out_np = types.to_numpy(args["dtype"])
    if {"mean", "std"} & G.per_sample_names(args) or args["out_of_bounds_policy"] == "pad" \
            and args["pad_output"]:
        return None
    facts = _batched_windows(x, args, ctx, "cmn")
    if facts is None or facts[1] != torch.uint8:
        return None
    layout, _, c, wins = facts
    out_layout = P.out_letters(layout, args["output_layout"])
    if _host_only(args, layout, out_np) or out_layout not in ("CHW", "HWC", "HW"):
        return None
    mean = _channels_vector(args["mean"], c, "mean")
    std = _channels_vector(args["std"], c, "std")
    table = K.normalize_table(mean, std, args["scale"], args["shift"],
                              _cmn_fill(args, c, out_np), K.table_type(out_np))
    n = len(wins)
    mirror = np.broadcast_to(np.asarray(args["mirror"]).reshape(-1), (n,)).astype(bool)
    pad_to = padded_channels(c) if args["pad_output"] else c
    return W.cmn(x, layout, wins, mirror, table, out_np, pad_to, out_layout == "CHW",
                 ctx.device)


def _lookup(win: torch.Tensor, inside: torch.Tensor | None, table: torch.Tensor,
            c: int) -> torch.Tensor:
    """Table entries: channel k of level v is table[k * 257 + v]; entry 256 is the fill."""
    level = win.long()
    if inside is not None:
        level = torch.where(inside[..., None], level, 256)
    return table[level + torch.arange(c, device=win.device) * 257]


def _normalize(win: torch.Tensor, inside: torch.Tensor | None, per: list[dict], f: int,
               c: int, args: dict, out_np: np.dtype) -> torch.Tensor:
    """``normalize_value`` per pixel: (v - mean) in float32 (float64 for wide types), the
    product and shift in float64, rounded to float32; then ``crop.convert``."""
    dev = win.device
    mean = np.stack([_channels_vector(a["mean"], c, "mean") for a in per])
    std = np.stack([_channels_vector(a["std"], c, "std") for a in per])
    mean32, inv32, shift32 = K.normalize_factors(mean, std, args["scale"], args["shift"])
    shape = (len(per), 1, 1, 1, c)
    mean_t = G.upload(mean32, dev).view(shape)
    inv_t = G.upload(inv32, dev).double().view(shape)
    work = torch.float64 if win.dtype in _WIDE else torch.float32
    v = win.reshape(len(per), f, *win.shape[1:]).to(work)
    diff = (v - mean_t.to(work)).double()
    res = (diff * inv_t + float(shift32)).float().reshape(win.shape)
    if inside is not None:
        fill = _cmn_fill(args, c, out_np).astype(np.float32)
        res = torch.where(inside[..., None], res, G.upload(fill, dev))
    return G.round_half_up_float32(res, G.torch_dtype(out_np))


def _cmn_fill(args: dict, c: int, out_np: np.dtype) -> np.ndarray:
    """crop_mirror_normalize's fill as the CPU operator writes it (cast to the output type
    as DALI casts it; unchecked and 0 unless the policy is "pad")."""
    if args["out_of_bounds_policy"] != "pad":
        return np.zeros(c)
    fill = P.fill_or_zero(args["fill_values"], c, True)
    return P.fill_cast(fill, out_np).astype(np.float64)
