"""GPU ``_resize_normalize``: resize or random_resized_crop, then crop_mirror_normalize, as
one batched resampling of only the output window, mirrored (issue 21, the fused chain).

The graph compiler fuses the two on the GPU as it does on the CPU
(``operators/image/fusion.py``). Per sample the host works out what the CPU's fused kernel
works out (``operators/image/resize_fused.Prepared``: the geometry, the random window,
crop_mirror_normalize's window and mirror folded into the resize's taps), then one copy
sends the batch's taps together with crop_mirror_normalize's table, and the device
resamples (``resample_batch``), rounds to uint8 as resize does and looks the normalized
values up: the values of resize followed by crop_mirror_normalize on the GPU. Other cases
(non-uint8 resizes, per-sample mean/std, windows leaving the image, pad_output) run the two
GPU kernels in turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.image import crop as K
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


def _fused(x: Any, args: dict, prep: Prepared, ctx: Any) -> Any:
    cmn0 = prep.base["normalize"]
    if not prep.constant_norm or cmn0["pad_output"]:
        return None
    src = B.image_source(x, "HWC")
    if src is None or src.base.dtype != torch.uint8:
        return None
    n = len(src.offsets)
    per = G.sample_args(args, n)
    taps = []
    for j in range(n):
        hw = (int(src.heights[j]), int(src.widths[j]))
        if hw[0] * hw[1] == 0:
            return None
        resampler = prep.stage(per[j], prep.resampler)
        if R.out_dtype(np.dtype(np.uint8), resampler) != np.uint8:
            return None
        plan = prep.geometry_taps(hw, resampler, prep.stage(per[j], "normalize"),
                                  ctx.sample(j))
        if plan.taps is None:  # the window leaves the resized image: padding
            return None
        taps.append(plan.taps)
    if len({t.shape for t in taps}) != 1:
        return None
    c = src.channels
    out_np = prep.out_dtype
    table = K.normalize_table(_channels_vector(cmn0["mean"], c, "mean"),
                              _channels_vector(cmn0["std"], c, "std"), cmn0["scale"],
                              cmn0["shift"], GE._cmn_fill(cmn0, c, out_np),
                              K.table_type(out_np))
    if table.dtype not in _EXACT_TABLES:
        return None
    resized, (lut, lanes) = RB._resample(
        src, taps, np.dtype(np.uint8), ctx.device,
        ((table.reshape(-1), G.torch_dtype(table.dtype)),
         (np.arange(c, dtype=np.int64) * 257, torch.int64)))
    out = lut[resized.long() + lanes].to(G.torch_dtype(out_np))
    if (cmn0["output_layout"] or "HWC").replace("F", "") == "CHW":
        out = out.permute(0, 3, 1, 2)
    return out.contiguous()
