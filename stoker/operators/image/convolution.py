"""``fn.filter`` and ``fn.laplacian``: convolutions of images, sequences and volumes.

``fn.filter``: 2-D correlation of images, sequences and planes with a per-sample kernel.

The spatial axes are the layout's H and W (without a layout, a 2-D sample is HW and
more dimensions are refused, as in DALI, whose CPU filter handles 2-D only); channels and
frames are filtered independently. The kernel is the second input (one 2-D float array per
sample, not flipped: out(y, x) = sum f(i, j) * in(y - anchor_y + i, x - anchor_x + j));
the optional third input is the per-sample fill value of border='constant'. 'anchor' -1
puts the kernel's center (extent // 2) over the pixel; mode 'valid' keeps only pixels
where the kernel fits. The output has the input's type (rounded, saturated) or FLOAT.
DALI 2.4 facts, measured: reflect_101 mirrors without repeating the edge, reflect_1001
with it; 'dtype' other than the input's or FLOAT is an error.

``fn.laplacian`` sums the second derivatives along the spatial axes (D, H, W of the layout;
every axis without one). The partial derivative along axis i correlates with a derivative
window of window_size[i] taps ([1, -2, 1], widened by binomial smoothing) along i and
binomial windows along each other spatial axis j: of smoothing_size[j] taps when given,
else of window_size[i] taps (DALI 2.4, measured); times scale[i]. 'normalized_kernel'
scales it by 2^-(window - 3 + the sum of (smoothing - 1)) instead, so the weights'
magnitudes sum to about 1. Borders are reflect_101; the output is the input's type
(rounded, saturated) or FLOAT.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image.convolve import PAD_MODES, correlate2d, laplacian
from stoker.operators.image.filters import spatial_axes
from stoker.operators.image.image_args import check_input_type, given, out_dtype
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_IN_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.float16, np.float32)


def hw_axes(layout: str, ndim: int) -> tuple[int, int]:
    """(H, W) axes of a sample: named by the layout, or a 2-D sample without one."""
    if not layout:
        if ndim != 2:
            raise ValueError(f"a {ndim}-D sample without a layout has {ndim} spatial "
                             "dimensions; only 2-D filtering is supported: give a layout "
                             "(HWC, CHW, FHWC, ...)")
        return 0, 1
    if len(layout) != ndim:
        raise ValueError(f"layout {layout!r} does not fit {ndim}-D samples")
    if "D" in layout:
        raise ValueError(f"layout {layout!r} has 3 spatial dimensions; only 2-D filtering "
                         "is supported")
    if "H" not in layout or "W" not in layout:
        raise ValueError(f"layout {layout!r} does not name the spatial axes H and W")
    return layout.index("H"), layout.index("W")


def _anchor(args: dict, shape: tuple[int, int]) -> tuple[int, int]:
    anchor = np.ravel(np.asarray(args["anchor"], np.int64)).tolist()
    if len(anchor) == 1:
        anchor = anchor * 2
    if len(anchor) != 2:
        raise ValueError(f"'anchor' must hold 1 or 2 values, got {anchor}")
    out = []
    for a, extent in zip(anchor, shape, strict=True):
        if a == -1:
            a = extent // 2
        if not 0 <= a < extent:
            raise ValueError(f"'anchor' {anchor} lies outside the {shape[0]}x{shape[1]} "
                             "filter (use -1 for its center)")
        out.append(int(a))
    return out[0], out[1]


def filter_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x, taps = np.asarray(ins[0]), np.asarray(ins[1])
    check_input_type(x, _IN_TYPES)
    want = out_dtype(args, x.dtype)
    if want not in (x.dtype, np.dtype(np.float32)):
        raise ValueError(f"'dtype' must be the input type ({x.dtype.name}) or FLOAT, got "
                         f"{want.name}")
    if taps.ndim != 2 or taps.dtype.kind not in "iuf":
        raise ValueError(f"the filter (input 1) must be a 2-D numeric array, got shape "
                         f"{taps.shape} of {taps.dtype.name}")
    fill = 0.0
    if len(ins) > 2 and ins[2] is not None:
        fill_arr = np.asarray(ins[2])
        if fill_arr.size != 1:
            raise ValueError(f"the fill value (input 2) must be a scalar, got shape "
                             f"{fill_arr.shape}")
        fill = float(fill_arr.reshape(()))
    h, w = hw_axes(args["_in_layouts"][0], x.ndim)
    return correlate2d(x, h, w, taps, _anchor(args, taps.shape), args["border"], fill,
                       args["mode"] == "valid", want)


def _check(args: dict) -> None:
    if args.get("border") not in PAD_MODES:
        raise ArgumentError(f"fn.filter: argument 'border' must be one of "
                            f"{', '.join(repr(m) for m in PAD_MODES)}, got {args.get('border')!r}")


_RNG = np.random.default_rng(11)
_HW = [_RNG.integers(0, 256, (6, 7), dtype=np.uint8),
       _RNG.integers(0, 256, (5, 9), dtype=np.uint8)]
_K = [np.array([[0, 1, 0], [0, 0, 2], [0, 0, 0]], np.float32),
      np.full((2, 4), 0.125, np.float32)]

register(OpSchema(
    name="filter",
    doc="Correlates each sample's spatial axes (H, W) with the sample's 2-D filter "
        "(not flipped); channels and frames are filtered one by one.",
    inputs=(Input("data", "Images (HW, HWC, CHW), sequences (FHWC, ...) of integers or "
                          "floats."),
            Input("filter", "A 2-D float kernel per sample."),
            Input("fill_value", "Per-sample scalar for border='constant' (default 0).",
                  optional=True)),
    args=(Arg("anchor", "ints", [-1], "Kernel cell placed over the output pixel, one "
              "value or (y, x); -1 is the center (extent // 2).", per_sample=True),
          Arg("border", "str", "reflect_101", "How pixels outside the image are read: "
              "reflect_101, reflect_1001, wrap, clamp or constant."),
          Arg("mode", "str", "same", "'same': the output has the input's size; 'valid': "
              "only where the filter fits inside.", choices=("same", "valid")),
          Arg("dtype", "dtype", None, "Output type: the input's (default) or FLOAT.")),
    kernel=filter_sample, check=_check,
    dtype=lambda d, a: out_dtype(a, d[0]),
    examples=(
        Example(inputs=(_HW, _K)),
        Example(args={"border": "constant", "dtype": types.FLOAT},
                inputs=(_HW, _K, [np.float32(9), np.float32(-3)])),
        Example(args={"mode": "valid", "anchor": [0, 0]}, inputs=(_HW, _K)),
        Example(args={"border": "wrap"}, inputs=([x.astype(np.float32) for x in _HW], _K)),
        Example(args={"border": "mirror"}, inputs=(_HW, _K), raises=ArgumentError,
                match="'border' must be one of"),
        Example(args={"dtype": types.INT16}, inputs=(_HW, _K), raises=RuntimeError,
                match="must be the input type (uint8) or FLOAT"),
        Example(inputs=([np.zeros((2, 3, 4), np.uint8)] * 2, _K), raises=RuntimeError,
                match="only 2-D filtering is supported"),
    ),
))


# -- laplacian ------------------------------------------------------------------------------

def _per_axis(value: Any, count: int, name: str) -> list:
    arr = np.ravel(np.asarray(value, np.float64)).tolist()
    if len(arr) == 1:
        arr = arr * count
    if len(arr) != count:
        raise ValueError(f"'{name}' has {len(arr)} values for {count} spatial axes; give one "
                         f"value or {count}")
    return arr


def laplacian_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    check_input_type(x, _IN_TYPES + (np.int32,))
    want = out_dtype(args, x.dtype)
    if want not in (x.dtype, np.dtype(np.float32)):
        raise ValueError(f"'dtype' must be the input type ({x.dtype.name}) or FLOAT, got "
                         f"{want.name}")
    axes = spatial_axes(args["_in_layouts"][0], x.ndim)
    nd = len(axes)
    windows = [int(w) for w in _per_axis(args["window_size"], nd, "window_size")]
    smooth_arg = args.get("smoothing_size")
    for w in windows:
        if w < 3 or w % 2 == 0:
            raise ValueError(f"'window_size' must be odd and at least 3, got {w}")
    # DALI 2.4, measured: without smoothing_size, partial i smooths the other axes with
    # window_size[i] taps; with it, the axis j is smoothed with smoothing_size[j] taps.
    if smooth_arg is None:
        smoothing = [[w] * nd for w in windows]
    else:
        sizes = [int(w) for w in _per_axis(smooth_arg, nd, "smoothing_size")]
        for w in sizes:
            if w < 1 or w % 2 == 0:
                raise ValueError(f"'smoothing_size' must be odd and at least 1, got {w}")
        smoothing = [sizes] * nd
    if args["normalized_kernel"]:
        scales = [2.0 ** -((windows[i] - 3) + sum(smoothing[i][j] - 1 for j in range(nd)
                                                  if j != i)) for i in range(nd)]
    else:
        scales = _per_axis(args["scale"], nd, "scale")
    return laplacian(x, axes, windows, smoothing, scales, want)


def _laplacian_check(args: dict) -> None:
    if args.get("normalized_kernel") and given(args, "scale"):
        raise ArgumentError("fn.laplacian: arguments 'normalized_kernel' and 'scale' exclude "
                            "each other; normalized_kernel=True computes the scale")


register(OpSchema(
    name="laplacian",
    doc="The Laplacian: the sum of second derivatives along the spatial axes (D, H, W), "
        "each a separable convolution with binomial smoothing along the other axes.",
    inputs=(Input("input", "Images, sequences or volumes with a layout naming their "
                           "spatial axes (without one, every axis is spatial)."),),
    args=(Arg("window_size", "ints", [3], "Derivative window, odd, >= 3; one or one per "
              "spatial axis.", per_sample=True),
          Arg("smoothing_size", "ints", None, "Smoothing window, odd, >= 1; one or one per "
              "spatial axis (default: window_size).", per_sample=True),
          Arg("scale", "floats", [1.0], "Factor of each partial derivative.",
              per_sample=True),
          Arg("normalized_kernel", "bool", False, "Scale each partial derivative so its "
              "weights sum to about 1 in magnitude (excludes 'scale')."),
          Arg("dtype", "dtype", None, "Output type: the input's (default) or FLOAT.")),
    kernel=laplacian_sample, check=_laplacian_check,
    dtype=lambda d, a: out_dtype(a, d[0]),
    examples=(
        Example(inputs=(_HW,)),
        Example(args={"window_size": [3, 5], "dtype": types.FLOAT}, inputs=(_HW,)),
        Example(args={"window_size": 5, "smoothing_size": 1, "normalized_kernel": True},
                inputs=([x.astype(np.float32) for x in _HW],)),
        Example(args={"window_size": 4}, inputs=(_HW,), raises=RuntimeError,
                match="'window_size' must be odd"),
        Example(args={"normalized_kernel": True, "scale": [2.0]}, inputs=(_HW,),
                raises=ArgumentError, match="exclude each other"),
    ),
))
