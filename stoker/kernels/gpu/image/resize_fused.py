"""GPU ``_resize_normalize``: resize or random_resized_crop, then crop_mirror_normalize, as
one batched resampling of only the output window, mirrored (issue 21, the fused chain).

The graph compiler fuses the two on the GPU as it does on the CPU
(``operators/image/fusion.py``). Per sample the host works out what the CPU's fused kernel
works out (``operators/image/resize_fused.Prepared``: the geometry, the random window,
crop_mirror_normalize's window and mirror as the output rows and columns to resample),
then one copy sends those with crop_mirror_normalize's table, and the device makes the
taps (``device_taps``), resamples (``resample_batch``), rounds to uint8 as resize does
and looks the normalized values up: the values of resize followed by
crop_mirror_normalize on the GPU. Other cases (non-uint8 resizes, per-sample mean/std,
windows leaving the image, pad_output) run the two GPU kernels in turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.image import crop as K
from stoker.kernels.cpu.image import resize as CK
from stoker.kernels.cpu.image.resize_geometry import ResizeGeometry
from stoker.kernels.gpu import batch as B
from stoker.kernels.gpu import common as G
from stoker.kernels.gpu.image import geometry as GE
from stoker.kernels.gpu.image import resample_batch as RB
from stoker.kernels.gpu.image import resize as RZ
from stoker.kernels.gpu.image.window_batch import _EXACT_TABLES
from stoker.operators.image import resize as R
from stoker.operators.image.crop_mirror_normalize import _channels_vector
from stoker.operators.image.resize_fused import Prepared


def _stage_args(args: dict, prep: Prepared, stage: str) -> dict:
    """One stage's arguments as its own GPU kernel takes them (per-sample values renamed)."""
    keys = prep.keys[stage]
    out = {**prep.base[stage], "_per_sample": keys}
    out.update({k: args[f"{stage}:{k}"] for k in keys})
    return out


def _unfused(x: Any, args: dict, prep: Prepared, ctx: Any) -> Any:
    """resize (or random_resized_crop) then crop_mirror_normalize, each a GPU kernel."""
    kernel = RZ.resize if prep.resampler == "resize" else RZ.random_resized_crop
    resized = kernel([x], _stage_args(args, prep, prep.resampler), ctx)
    return GE.crop_mirror_normalize([resized], _stage_args(args, prep, "normalize"), ctx)


def resize_normalize(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    per_sample = G.per_sample_names(args)
    prep = Prepared(args, tuple(per_sample))
    done = _fused(x, args, prep, ctx) if len(x) else None
    return done if done is not None else _unfused(x, args, prep, ctx)


def _axes(prep: Prepared, hw: tuple[int, int], resampler: dict, cmn: dict, sctx: Any
          ) -> tuple[tuple, tuple] | None:
    """A sample's (rows, columns) for ``resample_batch.resample_axes``: the geometry and
    the window of ``Prepared.geometry_taps`` (the same functions), without the taps
    (the device makes them); None where the window leaves the resized image."""
    if prep.resampler == "random_resized_crop":
        geom = R.random_resized_geometry(hw, resampler, sctx)
    elif prep.fixed_size is not None:
        geom = ResizeGeometry(*prep.fixed_size, 0.0, 0.0, float(hw[0]), float(hw[1]))
    else:
        geom = R.geometry(hw, resampler)
    window = prep._window(geom.out_h, geom.out_w, cmn)
    if window is None:
        return None
    y, x, ch, cw = window
    mirror = bool(np.asarray(cmn["mirror"]).reshape(-1)[0])
    mn, mg = R.filters(resampler)
    fy, fx = CK._filters(geom, mn, mg, resampler.get("antialias", True))
    return ((geom.out_h, geom.lo_y, geom.hi_y, fy, hw[0], y, ch, False),
            (geom.out_w, geom.lo_x, geom.hi_x, fx, hw[1], x, cw, mirror))


def _fused(x: Any, args: dict, prep: Prepared, ctx: Any) -> Any:
    cmn0 = prep.base["normalize"]
    if not prep.constant_norm or cmn0["pad_output"]:
        return None
    src = B.image_source(x, "HWC")
    if src is None or src.base.dtype != torch.uint8:
        return None
    n = len(src.offsets)
    per = G.sample_args(args, n)
    ys, xs = [], []
    for j in range(n):
        hw = (int(src.heights[j]), int(src.widths[j]))
        if hw[0] * hw[1] == 0:
            return None
        resampler = prep.stage(per[j], prep.resampler)
        if R.out_dtype(np.dtype(np.uint8), resampler) != np.uint8:
            return None
        axes = _axes(prep, hw, resampler, prep.stage(per[j], "normalize"), ctx.sample(j))
        if axes is None:  # the window leaves the resized image: padding
            return None
        ys.append(axes[0])
        xs.append(axes[1])
    if len({(a[6], b[6]) for a, b in zip(ys, xs, strict=True)}) != 1:
        return None
    c = src.channels
    out_np = prep.out_dtype
    table = K.normalize_table(_channels_vector(cmn0["mean"], c, "mean"),
                              _channels_vector(cmn0["std"], c, "std"), cmn0["scale"],
                              cmn0["shift"], GE._cmn_fill(cmn0, c, out_np),
                              K.table_type(out_np))
    if table.dtype not in _EXACT_TABLES:
        return None
    resized, (lut, lanes) = RB.resample_axes(
        src, ys, xs, np.dtype(np.uint8), ctx.device,
        ((table.reshape(-1), G.torch_dtype(table.dtype)),
         (np.arange(c, dtype=np.int64) * 257, torch.int64)))
    out = lut[resized.long() + lanes].to(G.torch_dtype(out_np))
    if (cmn0["output_layout"] or "HWC").replace("F", "") == "CHW":
        out = out.permute(0, 3, 1, 2)
    return out.contiguous()
