"""GPU color operators on torch tensors: brightness/contrast, hue/saturation/hsv/
color_twist, color_space_conversion.

The per-sample parameters (affine factors, 3x3 matrices) are the CPU operators' own,
computed on the host (``kernels/cpu/image/color.py``); the per-pixel arithmetic repeats the CPU
loops' float32 operations in their order, each one correctly rounded on either device,
so results are bit-identical. RGB <-> GRAY repeats OpenCV's fixed-point formula.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.image import color as K
from stoker.kernels.gpu import common as G
from stoker.operators.image import color as C
from stoker.operators.image.image_args import check_input_type, out_dtype, rgb_images

F32 = torch.float32


def _each(x: Any, fn: Any, same_channels: bool = True) -> Any:
    """``fn(chunk, rows)`` on the dense batch at once, on the pixels of a ragged batch held
    in one tensor at once (``_pixels``), or else on each sample (``rows`` selects the
    samples' parameters: a slice, or each pixel's sample index)."""
    if G.is_dense(x):
        return fn(x, slice(None))
    found = _pixels(x) if same_channels else None
    if found is not None:
        pixels, rows = found
        out = fn(pixels, rows)
        return G.Ragged(out.reshape(-1), x.offsets, x.shapes, x.strides)
    return [fn(s[None], slice(j, j + 1))[0] for j, s in enumerate(x)]


def _pixels(x: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """A Ragged of channel-last samples as (pixels, C) of its whole tensor, with each
    pixel's sample index (made on the device from the samples' spans: a fixed number of
    operations); None for other batches. Pixels between samples (padding) are computed
    too and stay unused."""
    if not isinstance(x, G.Ragged) or len(x) == 0 or x.shapes.shape[1] < 2:
        return None
    c = int(x.shapes[0, -1])
    ends = np.append(x.offsets[1:], x.base.numel())
    spans = ends - x.offsets
    if x.offsets[0] != 0 or (spans < 0).any() or (x.shapes[:, -1] != c).any() or \
            (x.strides[:, -1] != 1).any() or (spans % c).any():
        return None
    counts = G.upload(spans // c, x.device)
    n = len(x)
    rows = torch.repeat_interleave(torch.arange(n, device=x.device), counts,
                                   output_size=int(spans.sum() // c))
    return x.base.view(-1, c), rows


def _per_sample(t: torch.Tensor, ndim: int) -> torch.Tensor:
    """(n, ...) parameters shaped to broadcast against (n, ...) data of ``ndim`` dims."""
    return t.reshape(t.shape[:1] + (1,) * (ndim - 1) + t.shape[1:])


def _shapes(x: Any) -> list[tuple[int, ...]]:
    """The samples' shapes, read without making per-sample views."""
    if G.is_dense(x):
        return [tuple(x.shape[1:])] * len(x)
    if isinstance(x, G.Ragged):
        return [tuple(int(v) for v in s) for s in x.shapes]
    return [tuple(s.shape) for s in x]


def _host_view(x: torch.Tensor) -> np.ndarray:
    """An empty numpy array of the sample's type and shape, for the CPU's checks."""
    dtype = x.dtype if G.is_dense(x) or isinstance(x, G.Ragged) else x[0].dtype
    return np.empty((1, *_shapes(x)[0]), G.numpy_dtype(dtype))


# -- brightness, contrast, brightness_contrast ----------------------------------------------


def brightness_contrast(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    n = len(x)
    if n == 0:
        return x
    mul, add, out_np = C.brightness_contrast_parameters(_host_view(x), args, n)
    mul_t, add_t = G.upload(mul, ctx.device), G.upload(add, ctx.device)
    out_t = G.torch_dtype(out_np)

    def apply(chunk: torch.Tensor, rows: slice) -> torch.Tensor:
        v = chunk.to(F32) * _per_sample(mul_t[rows], chunk.ndim) + \
            _per_sample(add_t[rows], chunk.ndim)
        return G.round_sat(v, out_t)

    return _each(x, apply)


# -- hue, saturation, hsv, color_twist ------------------------------------------------------


def twist(ins: list, args: dict, ctx: Any) -> Any:
    x = ins[0]
    n = len(x)
    if n == 0:
        return x
    probe = _host_view(x)
    mats, offsets = C.twist_parameters(probe, args, n)
    if not G.is_dense(x):  # the probe is sample 0's: every sample must be RGB, as on the CPU
        for shape in _shapes(x)[1:]:
            rgb_images(np.empty((1, *shape), probe.dtype), args)
    offsets = np.broadcast_to(offsets[:, None], (n, 3))
    mats_t = G.upload(mats.astype(np.float32), ctx.device)
    offs_t = G.upload(offsets.astype(np.float32), ctx.device)
    out_np = out_dtype(args, probe.dtype)
    work = F32 if out_np == np.float16 else G.torch_dtype(out_np)

    def apply(chunk: torch.Tensor, rows: slice) -> torch.Tensor:
        nd = chunk.ndim - 1  # the channel axis is last
        m = mats_t[rows].reshape(-1, *(1,) * (nd - 1), 3, 3)
        o = offs_t[rows].reshape(-1, *(1,) * (nd - 1), 3)
        r, g, bl = (chunk[..., k].to(F32) for k in range(3))
        planes = [m[..., k, 0] * r + m[..., k, 1] * g + m[..., k, 2] * bl + o[..., k]
                  for k in range(3)]
        out = G.round_sat(torch.stack(planes, -1), work)
        return out if out_np != np.float16 else out.to(torch.float16)

    return _each(x, apply)


# -- color_space_conversion -----------------------------------------------------------------

# OpenCV's RGB -> GRAY of uint8 is fixed point: (cr R + cg G + cb B + half) >> shift.
# OpenCV 4 uses 14 bits, OpenCV 5 15 bits; the CPU operator calls the installed OpenCV,
# so the GPU takes whichever matches it (checked once on a probe image).
_GRAY_CANDIDATES = ((15, 9798, 19235, 3735), (14, 4899, 9617, 1868))


@functools.cache
def _gray_coefficients() -> tuple[int, int, int, int]:
    import cv2

    levels = np.arange(0, 256, 5, dtype=np.int64)
    r, g, b = (a.reshape(-1) for a in np.meshgrid(levels, levels, levels, indexing="ij"))
    probe = np.stack([r, g, b], -1).astype(np.uint8)[:, None]
    want = cv2.cvtColor(probe, cv2.COLOR_RGB2GRAY).reshape(-1)
    for shift, cr, cg, cb in _GRAY_CANDIDATES:
        if ((r * cr + g * cg + b * cb + (1 << (shift - 1))) >> shift == want).all():
            return shift, cr, cg, cb
    raise RuntimeError(f"OpenCV {cv2.__version__} converts RGB to GRAY with coefficients "
                       "the GPU operator does not know")


def _to_gray(x: torch.Tensor, bgr: bool) -> torch.Tensor:
    shift, cr, cg, cb = _gray_coefficients()
    r, g, b = (x[..., k].to(torch.int32) for k in ((2, 1, 0) if bgr else (0, 1, 2)))
    y = (r * cr + g * cg + b * cb + (1 << (shift - 1))) >> shift
    return y.to(torch.uint8)[..., None]


def _ycbcr(x: torch.Tensor, forward: bool, bgr: bool) -> torch.Tensor:
    """BT.601 as ``pixel_loops.rgb_to_ycbcr`` / ``ycbcr_to_rgb``: values scaled by a
    float32 table of v / 255, the matrix in float32, rounded half away and saturated."""
    dev = x.device
    norm = torch.arange(256, dtype=F32, device=dev) / 255.0
    off = G.upload(K.YCBCR_OFFSET.astype(np.float32), dev)
    coef = G.upload((K.RGB_TO_YCBCR if forward else K.YCBCR_TO_RGB).astype(np.float32), dev)
    v = norm[x.long()]
    if forward:
        chans = (2, 1, 0) if bgr else (0, 1, 2)
        a, b, c = (v[..., k] for k in chans)
    else:
        a, b, c = (v[..., k] - off[k] for k in range(3))
    planes = []
    for k in range(3):
        s = coef[k, 0] * a + coef[k, 1] * b + coef[k, 2] * c
        if forward:
            s = s + off[k]
        planes.append(G.round_sat(s * 255.0, torch.uint8))
    if not forward and bgr:
        planes = planes[::-1]
    return torch.stack(planes, -1)


def _convert(x: torch.Tensor, src: str, dst: str) -> torch.Tensor:
    if "YCbCr" not in (src, dst):
        if dst == "GRAY":
            return _to_gray(x, src == "BGR")
        if src == "GRAY":
            return x.expand(*x.shape[:-1], 3).contiguous()
        return x.flip(-1).contiguous()  # RGB <-> BGR
    dev = x.device
    if src == "GRAY":
        y = G.upload(K._gray_to_y_table(), dev)[x[..., 0].long()]
        out = torch.full((*x.shape[:-1], 3), 128, dtype=torch.uint8, device=dev)
        out[..., 0] = y
        return out
    if dst == "GRAY":
        return G.upload(K._y_to_gray_table(), dev)[x[..., :1].long()]
    return _ycbcr(x, dst == "YCbCr", "BGR" in (src, dst))


def color_space_conversion(ins: list, args: dict, ctx: Any) -> Any:
    from stoker import types

    x = ins[0]
    if len(x) == 0:
        return x
    probe = _host_view(x)
    check_input_type(probe, (np.uint8,))
    src = types.DALIImageType(args["image_type"]).name
    dst = types.DALIImageType(args["output_type"]).name
    want = K.CHANNELS[src]
    for shape in _shapes(x):
        if len(shape) < 2 or shape[-1] != want:
            raise ValueError(f"a {src} image needs {want} channel(s) in its last dimension, "
                             f"got shape {shape}")
    return _each(x, lambda chunk, rows: _convert(chunk, src, dst),
                 same_channels=K.CHANNELS[dst] == want)
