"""Hidden operators that the fusion rules (``fusion.py``) put in place of image chains,
and what they share.

- ``_resize_normalize`` (here): ``resize`` (or ``random_resized_crop``) then
  ``crop_mirror_normalize``, as one resampling pass that writes the normalized, mirrored,
  CHW output (``kernels/cpu/image/resize_normalize.py``). Only the cropped window is computed.
- ``_decode_resize`` (``decode_resize.py``): ``decoders.image`` (or
  ``decoders.image_random_crop``) then ``resize``, or ``decoders.image`` then
  ``random_resized_crop``, optionally then ``crop_mirror_normalize``. Only the source pixels
  the resampling reads are decoded (region-of-interest JPEG decoding: a center crop after
  resize_shorter decodes about half of the image).

Their arguments are the fused operators' own, untouched: one dict per stage ("decode",
"resize", "random_resized_crop", "normalize"; "decode" also names the decoder under
"kind"), and per-sample values as "<stage>:<argument>". Random windows are drawn exactly
as the fused operator draws them, with its seed (the rules name it in "_seed_from"), so
outputs equal the unfused chain's: bit for bit, except that ``decoders -> resize`` decodes
JPEGs at a DCT scale (1/2, 1/4, 1/8) when the resize shrinks the region 2x or more, which
libjpeg-turbo does at a fraction of the cost and which differs from a full decode plus
resize by a few levels (as ``decode.decode_scaled`` documents).

Whatever the fast path does not cover (other layouts or types, windows that leave the
resized image, padded channels) runs the unfused kernels in turn, so results never depend
on whether fusion applied.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import crop as crop_kernels
from stoker.kernels.cpu.image import resize as R
from stoker.kernels.cpu.image import resize_geometry as G
from stoker.kernels.cpu.image.resize_normalize import (
    Normalize,
    normalize_stage,
    resample_normalized,
)
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.image import decoders
from stoker.operators.image import resize as resize_ops
from stoker.operators.image.crop_mirror_normalize import (
    _channels_vector,
    add_channels,
    added_channel_values,
    cmn_batch,
)
from stoker.operators.image.geometry import resolve_windows, sample_kernel
from stoker.operators.machinery.base import SampleOp
from stoker.operators.machinery.registry import REGISTRY, register
from stoker.operators.machinery.schema import COMMON_ARGS, Arg, Example, Input, OpSchema, check_arg

STAGES = ("decode", "resize", "random_resized_crop", "normalize")
_HWC = ("HWC",)
_FAST_TYPES = (np.dtype(np.uint8), np.dtype(np.float32))
_cmn_sample = sample_kernel(cmn_batch)


def resolved_args(name: str, **given: Any) -> dict:
    """The arguments operator ``name`` would hold when called with ``given``: defaults
    filled in, values checked (for building examples and tests of the fused forms)."""
    schema = REGISTRY[name]
    args = {a.name: list(a.default) if isinstance(a.default, list) else a.default
            for a in (*schema.args, *COMMON_ARGS) if a.default is not None and not a.required}
    for key, value in given.items():
        args[key] = check_arg(schema, schema.arg(key), value)
    args["_given"] = frozenset(given)
    return args


_WINDOW_ARGS = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y")
_CACHED = 4096  # resize geometries kept per operator, by input size


class Resampling(NamedTuple):
    geom: G.ResizeGeometry
    taps: R.Taps | None  # of the output window; None: the window leaves the image
    window: tuple[int, int, int, int] | None  # crop_mirror_normalize's, if fused
    mirror: bool


def resampling_taps(in_hw: tuple[int, int], geom: G.ResizeGeometry, resampler: dict,
                    window: tuple[int, int, int, int] | None = None,
                    mirror: bool = False) -> R.Taps:
    """The resize's taps; given a ``window``, that window's alone (``R.window_taps``)."""
    mn, mg = resize_ops.filters(resampler)
    antialias = resampler.get("antialias", True)
    if window is not None:
        return R.window_taps(in_hw, geom, mn, mg, antialias, *window, mirror)
    return R.resize_taps(in_hw, geom, mn, mg, antialias)


class Prepared:
    """What an operator's constant arguments fix, worked out once, not per sample: each
    stage's arguments, crop_mirror_normalize's table and window, and for a resize whose
    size is constant its geometry per input size (datasets repeat sizes)."""

    def __init__(self, args: dict, per_sample: Any = ()):
        self.base = {s: None if args.get(s) is None else {**args[s], "_in_layouts": _HWC}
                     for s in STAGES}
        self.keys = {s: tuple(k[len(s) + 1:] for k in per_sample if k.startswith(s + ":"))
                     for s in STAGES}
        self.resampler = "resize" if self.base["resize"] is not None else "random_resized_crop"
        cmn_keys = set(self.keys["normalize"])
        self.constant_norm = not cmn_keys & {"mean", "std"}
        self.constant_window = not cmn_keys & set(_WINDOW_ARGS)
        self.constant_size = self.resampler == "resize" and not self.keys["resize"]
        self.fixed_size = _fixed_size(self.base["resize"]) if self.constant_size else None
        dec, cmn = self.base["decode"], self.base["normalize"]
        self.decode_options = decoders.decode_options(dec) if dec is not None else None
        self.out_dtype = np.dtype(types.to_numpy(cmn["dtype"])) if cmn is not None else None
        self._norms: dict = {}
        self._windows: dict = {}
        self._geoms: dict = {}
        self._lane: Any = self  # (self: not worked out yet; decode_resize.lane_of)

    def stage(self, args: dict, name: str) -> dict | None:
        """The stage's arguments with this sample's per-sample values."""
        base = self.base[name]
        keys = self.keys[name]
        if base is None or not keys:
            return base
        return {**base, **{k: args[f"{name}:{k}"] for k in keys}}

    def geometry_taps(self, in_hw: tuple[int, int], resampler: dict, cmn: dict | None,
                      ctx: Any) -> Resampling:
        """The resize geometry (drawing random_resized_crop's window) and the taps of the
        output window crop_mirror_normalize keeps, mirrored as it mirrors; None taps
        where that window leaves the resized image (padding: the unfused kernels run)."""
        if self.resampler == "random_resized_crop":
            geom = resize_ops.random_resized_geometry(in_hw, resampler, ctx)
        elif self.fixed_size is not None and in_hw[0] * in_hw[1]:
            geom = G.ResizeGeometry(*self.fixed_size, 0.0, 0.0, float(in_hw[0]),
                                    float(in_hw[1]))
        elif self.constant_size:
            geom = self._geoms.get(in_hw)
            if geom is None:
                if len(self._geoms) >= _CACHED:
                    self._geoms.clear()
                geom = self._geoms[in_hw] = resize_ops.geometry(in_hw, resampler)
        else:
            geom = resize_ops.geometry(in_hw, resampler)
        if cmn is None:
            return Resampling(geom, resampling_taps(in_hw, geom, resampler), None, False)
        mirror = _mirrored(cmn["mirror"])
        window = self._window(geom.out_h, geom.out_w, cmn)
        if window is None:
            return Resampling(geom, None, None, mirror)
        if self.resampler == "random_resized_crop":  # a fractional window: taps rarely repeat
            return Resampling(geom, resampling_taps(in_hw, geom, resampler, window, mirror),
                              window, mirror)
        return Resampling(geom, resampling_taps(in_hw, geom, resampler).window(*window, mirror),
                          window, mirror)

    def _window(self, out_h: int, out_w: int, cmn: dict) -> tuple[int, int, int, int] | None:
        key = (out_h, out_w)
        if self.constant_window and key in self._windows:
            return self._windows[key]
        ay, ax, ch, cw = resolve_windows(1, out_h, out_w, cmn)
        y, x = int(ay[0]), int(ax[0])
        window: tuple[int, int, int, int] | None = (y, x, ch, cw)
        if y < 0 or x < 0 or y + ch > out_h or x + cw > out_w:
            if cmn["out_of_bounds_policy"] == "error":
                crop_kernels.check_inside(ay, ax, ch, cw, out_h, out_w)
            window = None
        if self.constant_window:
            self._windows[key] = window
        return window

    def normalize(self, cmn: dict, channels: int, resized: np.dtype) -> Normalize:
        key = (channels, resized)
        norm = self._norms.get(key) if self.constant_norm else None
        if norm is None:
            norm = normalize_stage(
                _channels_vector(cmn["mean"], channels, "mean"),
                _channels_vector(cmn["std"], channels, "std"), cmn["scale"], cmn["shift"],
                (cmn["output_layout"] or "HWC").replace("F", "") == "CHW", self.out_dtype,
                resized == np.uint8)
            if self.constant_norm:
                self._norms[key] = norm
        return norm


def _fixed_size(resize: dict) -> tuple[int, int] | None:
    """(height, width) when resize's arguments fix the output whatever the input: both
    extents given as positive whole numbers, no limit or ROI. Its geometry is then the
    whole input mapped onto that size (resize_output_size gives exactly that)."""
    if resize.get("mode") not in ("default", "stretch") or resize.get("max_size") is not None \
            or resize.get("roi_start") is not None or resize.get("resize_shorter") or \
            resize.get("resize_longer"):
        return None
    size = resize.get("size")
    if size is not None and len(size) not in (1, 2):
        return None
    hw = (size[0], size[-1]) if size is not None else \
        (resize.get("resize_y", 0.0), resize.get("resize_x", 0.0))
    if all(v > 0 and float(v).is_integer() and float(np.float32(v)) == v for v in hw):
        return int(hw[0]), int(hw[1])
    return None


def _instance(op: Any, pipeline: Any, cls: type[SampleOp] = SampleOp) -> SampleOp:
    inst = cls(op, pipeline)
    inst.args = {**inst.args, "_prepared": Prepared(op.args, op.arg_nodes)}
    return inst


def _normalized(image: np.ndarray, taps: R.Taps, resized: np.dtype, cmn: dict,
                prep: Prepared) -> np.ndarray:
    """crop_mirror_normalize's output computed straight from the resampling of ``image``,
    whose resize gives ``resized`` values (uint8 or float32)."""
    c = image.shape[2]
    norm = prep.normalize(cmn, c, resized)
    out = resample_normalized(image, taps, norm)
    dtype = prep.out_dtype
    if out.dtype != dtype:  # (a table already stores the output type)
        out = crop_kernels.convert(out, dtype)
    return add_channels(out, added_channel_values(cmn, c, dtype),
                        0 if norm.channels_first else 2)


def _unfused(image: np.ndarray, geom: G.ResizeGeometry, resampler: dict, cmn: dict | None,
             ctx: Any) -> np.ndarray:
    """The chain's own kernels in turn: resize, then crop_mirror_normalize."""
    resized = resize_ops.resample_frames(image[None], geom, resampler,
                                         resize_ops.out_dtype(image.dtype, resampler))[0]
    return resized if cmn is None else _cmn_sample([resized], cmn, ctx)


# -- _resize_normalize ----------------------------------------------------------------------


def resize_normalize_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    image = ins[0]
    prep = args["_prepared"]
    resampler = prep.stage(args, prep.resampler)
    cmn = prep.stage(args, "normalize")
    resized = resize_ops.out_dtype(image.dtype, resampler)
    plan = prep.geometry_taps(image.shape[:2], resampler, cmn, ctx)
    if image.ndim == 3 and resized in _FAST_TYPES and image.dtype != np.float16 and \
            plan.taps is not None:  # (numba has no float16: the resize converts it first)
        return _normalized(image, plan.taps, resized, cmn, prep)
    return _unfused(image, plan.geom, resampler, cmn, ctx)


def _mirrored(value: Any) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])


# -- schemas --------------------------------------------------------------------------------


def _dtype(in_dtypes: list, args: dict) -> np.dtype:
    if args.get("normalize") is not None:
        return np.dtype(types.to_numpy(args["normalize"]["dtype"]))
    resampler = args.get("resize") or args.get("random_resized_crop") or {}
    if resampler.get("dtype") is not None:
        return np.dtype(types.to_numpy(resampler["dtype"]))
    if args.get("decode") is not None:
        return np.dtype(types.to_numpy(args["decode"]["dtype"]))
    return in_dtypes[0]


def _layout(in_layouts: list, args: dict) -> str:
    cmn = args.get("normalize")
    return (cmn.get("output_layout") or "HWC") if cmn is not None else "HWC"


def _check(name: str) -> Any:
    def check(args: dict) -> None:
        if (args.get("resize") is None) == (args.get("random_resized_crop") is None):
            raise ArgumentError(f"fn.{name}: give exactly one of 'resize' or "
                                "'random_resized_crop'")
    return check


_STAGE_ARGS = (
    Arg("resize", "any", None, "resize's arguments (as resolved at its call)."),
    Arg("random_resized_crop", "any", None, "random_resized_crop's arguments."),
    Arg("normalize", "any", None, "crop_mirror_normalize's arguments, if it is fused."),
)
_IMG = [np.arange(150, dtype=np.uint8).reshape(5, 10, 3),
        (np.arange(192, dtype=np.uint8) * 7).reshape(8, 8, 3)]
_CMN = resolved_args("crop_mirror_normalize", mean=[10.0, 20.0, 30.0], std=[2.0, 3.0, 4.0],
                     mirror=1)
_RRC = resolved_args("random_resized_crop", size=[4, 5])

register(OpSchema(
    name="_resize_normalize",
    doc="resize or random_resized_crop, then crop_mirror_normalize, fused by the graph "
        "compiler: one resampling pass writes the normalized output window.",
    inputs=(Input("input", "HWC images."),),
    args=_STAGE_ARGS,
    kernel=resize_normalize_kernel, instance=_instance, random=True,
    # (fused on the GPU too: the chain's GPU kernels give its tolerance, so the schema
    # lists the CPU alone and the contract battery does not compare it on its own)
    gpu_kernel=lazy("image.resize_fused", "resize_normalize"),
    check=_check("_resize_normalize"),
    dtype=_dtype, layout=_layout,
    examples=(
        Example(args={"resize": resolved_args("resize", resize_shorter=6.0),
                      "normalize": resolved_args("crop_mirror_normalize", crop=[4, 5],
                                                 dtype=types.FLOAT16)}, inputs=(_IMG,)),
        Example(args={"random_resized_crop": _RRC, "normalize": _CMN}, inputs=(_IMG,)),
        Example(args={"resize": resolved_args("resize", size=[6, 6], dtype=types.FLOAT),
                      "normalize": resolved_args("crop_mirror_normalize", crop=[8, 8],
                                                 out_of_bounds_policy="pad",
                                                 output_layout="HWC")}, inputs=(_IMG,)),
        Example(args={"normalize": _CMN}, inputs=(_IMG,), raises=ArgumentError,
                match="give exactly one of 'resize' or 'random_resized_crop'"),
    ),
))
