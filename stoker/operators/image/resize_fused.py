"""Hidden operators that the fusion rules (``graph/fuse.py``) put in place of image chains.

- ``_resize_normalize``: ``resize`` (or ``random_resized_crop``) then
  ``crop_mirror_normalize``, as one resampling pass that writes the normalized, mirrored,
  CHW output (``kernels/cpu/image/resize_normalize.py``). Only the cropped window is computed.
- ``_decode_resize``: ``decoders.image`` (or ``decoders.image_random_crop``) then ``resize``,
  or ``decoders.image`` then ``random_resized_crop``, optionally then
  ``crop_mirror_normalize``. Only the source pixels the resampling reads are decoded
  (region-of-interest JPEG decoding: a center crop after resize_shorter decodes about
  half of the image).

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

import functools
import threading
from typing import Any, NamedTuple

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.executor.context import ChunkContext
from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.image import crop as crop_kernels
from stoker.kernels.cpu.image import decode as D
from stoker.kernels.cpu.image import resize as R
from stoker.kernels.cpu.image import turbojpeg
from stoker.kernels.cpu.image.crop_window import window_stream
from stoker.kernels.cpu.image.resize_normalize import (
    Normalize,
    normalize_stage,
    resample_normalized,
)
from stoker.operators.image import decoders
from stoker.operators.image import resize as resize_ops
from stoker.operators.image.crop_mirror_normalize import (
    _channels_vector,
    add_channels,
    added_channel_values,
    cmn_batch,
)
from stoker.operators.image.geometry import resolve_windows, sample_kernel, window_size
from stoker.operators.machinery.base import SampleOp
from stoker.operators.machinery.registry import REGISTRY, register
from stoker.operators.machinery.schema import COMMON_ARGS, Arg, Example, Input, OpSchema, check_arg

STAGES = ("decode", "resize", "random_resized_crop", "normalize")
_HWC = ("HWC",)
_FAST_TYPES = (np.dtype(np.uint8), np.dtype(np.float32))
_LANE_TYPES = (np.dtype(np.float32), np.dtype(np.float16))  # the compiled call's outputs
_cmn_sample = sample_kernel(cmn_batch)
# Decode JPEGs at a DCT scale where decode -> resize shrinks the region 2x or more (the
# only inexact part of these operators; tests switch it off to compare bit for bit).
DCT_SCALING = True
# Run the ResNet-50 train and val chains' JPEGs through one compiled call (``_Lane``); tests
# switch it off to compare it with the Python driver.
LANE = True


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
    geom: R.ResizeGeometry
    taps: R.Taps | None  # of the output window; None: the window leaves the image
    window: tuple[int, int, int, int] | None  # crop_mirror_normalize's, if fused
    mirror: bool


def resampling_taps(in_hw: tuple[int, int], geom: R.ResizeGeometry, resampler: dict,
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
        self._lane: Any = self  # (self: not worked out yet)

    def lane(self) -> _Lane | None:
        """The compiled call that does this operator's JPEGs, where it covers them."""
        if self._lane is self:
            self._lane = _Lane.make(self) if LANE else None
        return self._lane

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
            geom = R.ResizeGeometry(*self.fixed_size, 0.0, 0.0, float(in_hw[0]),
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


def _unfused(image: np.ndarray, geom: R.ResizeGeometry, resampler: dict, cmn: dict | None,
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


# -- _decode_resize -------------------------------------------------------------------------


class _Lane:
    """``decode_resize_loop.decode_resize_chunk`` for one operator: the train and val
    chains (decoders.image or image_random_crop -> resize to a fixed size or with
    resize_shorter alone, or decoders.image -> random_resized_crop; then
    crop_mirror_normalize of a constant window size to float32 or float16, CHW or HWC)
    with their constant arguments packed once. What the driver below would do in about
    200 us of Python under the GIL per JPEG, one call does for a chunk of them; it hands
    back (None) the samples it does not cover."""

    def __init__(self, ints: np.ndarray, floats: np.ndarray, tables: tuple, norm: Any,
                 out_shape: tuple[int, int, int], out_dtype: np.dtype, mirror_key: str | None,
                 mirror: bool):
        self.ints, self.floats, self.tables, self.norm = ints, floats, tables, norm
        self.out_shape, self.out_dtype = out_shape, out_dtype
        self.mirror_key, self.mirror = mirror_key, mirror
        L = loops("image.decode_resize_loop")
        self.call = L.decode_resize_chunk
        # float16 or (h, w, C) outputs: each image's float32 (C, h, w) first, on a stage
        self.stage_size = int(np.prod(out_shape)) if ints[L.I_HALF] or ints[L.I_HWC] else 0
        self.fns = turbojpeg._fns
        self.scratch = threading.local()  # (u8, f32): grown as images need; stage

    @staticmethod
    def make(prep: Prepared) -> _Lane | None:
        L = loops("image.decode_resize_loop")
        dec, cmn = prep.base["decode"], prep.base["normalize"]
        if dec is None or cmn is None or prep.keys["decode"] or prep.keys[prep.resampler] or \
                not prep.constant_norm or not prep.constant_window or \
                set(prep.keys["normalize"]) - {"mirror"} or cmn["pad_output"] or \
                prep.out_dtype not in _LANE_TYPES or \
                prep.decode_options["output_type"] != "RGB" or \
                np.dtype(prep.decode_options["dtype"]) != np.uint8 or \
                turbojpeg.COMPILED is False:
            return None
        resampler = prep.base[prep.resampler]
        draw = {"decoders.image": L.DRAW_NONE,
                "decoders.image_random_crop": L.DRAW_DECODER}.get(dec["kind"])
        rand, shorter = dec, _shorter(resampler)
        if draw is None:
            return None
        if prep.resampler == "random_resized_crop":
            if draw != L.DRAW_NONE:
                return None
            size = resampler["size"]
            draw, (oh, ow), rand = L.DRAW_RESIZE, (int(size[0]), int(size[-1])), resampler
        elif prep.fixed_size is not None:
            oh, ow = prep.fixed_size
        elif shorter is None:
            return None
        resized = resize_ops.out_dtype(np.dtype(np.uint8), resampler)
        mn, mg = resize_ops.filters(resampler)
        if shorter is None:
            window = prep._window(oh, ow, cmn)
        else:  # (the anchor is the image's; a window leaving it is handed back)
            oh = ow = 0
            window = (0, 0, *window_size(cmn, 1, -1, -1))
        if resized not in _FAST_TYPES or not {mn, mg} <= R.BASE_WIDTH.keys() or \
                window is None or min(window[2:]) < 1:
            return None  # (nearest neighbour, or a kind pick_filter refuses, is the driver's)
        norm = prep.normalize(cmn, 3, resized)
        half = prep.out_dtype == np.float16
        if norm.table is not None or norm.dtype != np.float32 or (half and not L.HALF):
            return None
        try:
            turbojpeg._compiled()  # (the addresses of the functions the call makes)
        except ImportError:
            return None
        ints = np.zeros(L.N_INTS, np.int64)
        ints[[L.I_SCAN_LIMIT, L.I_MAX_PIXELS, L.I_ORIENT, L.I_DRAW]] = (
            turbojpeg.SCAN_LIMIT, D.MAX_PIXELS, prep.decode_options["adjust_orientation"],
            draw)
        ints[[L.I_OUT_H, L.I_OUT_W, L.I_CROP_Y, L.I_CROP_X, L.I_CROP_H, L.I_CROP_W]] = (
            oh, ow, *window)
        ints[[L.I_FAST_IDCT, L.I_DCT_SCALING, L.I_ANTIALIAS, L.I_QUANTIZE, L.I_HALF,
              L.I_HWC]] = (dec["use_fast_idct"], DCT_SCALING and draw != L.DRAW_RESIZE,
                           resampler.get("antialias", True), resized == np.uint8, half,
                           not norm.channels_first)
        floats = np.zeros(L.N_FLOATS, np.float64)
        if draw != L.DRAW_NONE:
            ints[L.I_ATTEMPTS] = rand["num_attempts"]
            floats[[L.F_AREA_LO, L.F_AREA_HI, L.F_RATIO_LO, L.F_RATIO_HI]] = (
                *rand["random_area"], *rand["random_aspect_ratio"])
        if shorter is not None:
            ints[[L.I_SIZE, L.I_TRUNCATE]] = L.SIZE_SHORTER, cmn.get("rounding") == "truncate"
            # The positions as the float32 arguments they are (crop.window_anchor).
            floats[[L.F_SHORTER, L.F_POS_Y, L.F_POS_X]] = (
                shorter, np.float32(decoders._scalar(cmn["crop_pos_y"])),
                np.float32(decoders._scalar(cmn["crop_pos_x"])))
        kinds = [R.TRIANGULAR if k == R.LINEAR else k for k in (mn, mg)]
        floats[[L.F_MIN_WIDTH, L.F_MAG_WIDTH, L.F_SHIFT]] = (
            R.BASE_WIDTH[mn], R.BASE_WIDTH[mg], norm.shift)
        mirror_key = "normalize:mirror" if "mirror" in prep.keys["normalize"] else None
        shape = (3, *window[2:]) if norm.channels_first else (*window[2:], 3)
        return _Lane(ints, floats, tuple(R.filter_table(k) for k in kinds), norm,
                     shape, prep.out_dtype, mirror_key,
                     mirror_key is None and _mirrored(cmn.get("mirror", False)))

    def run(self, datas: list, argv: dict, ctx: Any) -> list[np.ndarray | None]:
        """The outputs of a chunk's samples; None for each one the call hands back (the
        driver does it: it raises the errors, and passes on on_error="skip"'s stand-ins).

        Each output is its own recycled array, so outputs of one size recycle exactly: one
        block per chunk (of the guided chunks' ten sizes) or per batch raised train's peak
        RSS by 50 and 33 MB."""
        k = len(datas)
        addresses, sizes = np.zeros(k, np.int64), np.zeros(k, np.int64)  # (0: handed back)
        for j, data in enumerate(datas):
            if type(data) is np.ndarray and data.dtype == np.uint8 and data.ndim == 1 and \
                    data.flags.c_contiguous:
                addresses[j], sizes[j] = data.ctypes.data, data.size
        outs = [buffers.empty(self.out_shape, self.out_dtype) for _ in range(k)]
        places = np.array([out.ctypes.data for out in outs], np.int64)
        if self.mirror_key is None:
            mirrors = np.full(k, self.mirror)
        else:
            try:
                mirrors = np.array([_mirrored(v) for v in argv[self.mirror_key]], bool)
            except (IndexError, TypeError, ValueError):  # (the driver's error names the sample)
                return [None] * k
        status = np.empty(k, np.int64)
        norm = self.norm
        try:
            u8, f32 = self.scratch.arrays
        except AttributeError:
            u8, f32 = np.empty(0, np.uint8), np.empty(0, np.float32)
            self.scratch.stage = np.empty(self.stage_size, np.float32)
        seed, first = window_stream(ctx.seed, ctx.batch.first_index + ctx.lo)
        start = 0
        while True:
            start, need_u8, need_f32 = self.call(
                addresses, sizes, places, start, self.fns, self.ints, self.floats,
                *self.tables, seed, first, mirrors, norm.mean, norm.inv_std, status, u8, f32,
                self.scratch.stage)
            if start == k:
                return [None if status[j] else outs[j] for j in range(k)]
            u8 = u8 if need_u8 <= u8.size else np.empty(need_u8 * 5 // 4, np.uint8)
            f32 = f32 if need_f32 <= f32.size else np.empty(need_f32 * 5 // 4, np.float32)
            self.scratch.arrays = u8, f32


class _DecodeResizeOp(SampleOp):
    """``_decode_resize``: a chunk through the compiled call where it covers the operator,
    the samples it hands back through the per-sample driver."""

    def run_chunk(self, ins: list, argv: dict, ctx: Any) -> tuple:
        lane = self.args["_prepared"].lane()
        if lane is None:
            return self._per_sample(ins, argv, ctx)
        outs = lane.run(ins[0], argv, ctx)
        for j, out in enumerate(outs):
            if out is None:
                one = ChunkContext(ctx.batch, ctx.seed, ctx.lo + j, ctx.lo + j + 1,
                                   None if ctx.source_info is None else ctx.source_info[j:j + 1])
                outs[j] = self._per_sample([x[j:j + 1] for x in ins],
                                           {key: v[j:j + 1] for key, v in argv.items()}, one)[0][0]
        return (outs,)


def _shorter(resize: dict | None) -> float | None:
    """resize_shorter's value where it alone gives a resize's size (the compiled call's:
    a positive one; a negative one flips the image, which the driver does)."""
    if resize is None or not resize.get("resize_shorter") or \
            resize.get("max_size") is not None or resize.get("roi_start") is not None or \
            not resize.get("subpixel_scale", True):
        return None
    shorter = float(resize["resize_shorter"])
    return shorter if 0 < shorter < float("inf") else None


def _mirrored(value: Any) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])


def decode_resize_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    data = ins[0]
    prep = args["_prepared"]
    dec = prep.base["decode"]
    opts = prep.decode_options
    info = D.probe(data)
    h, w = info.shape(opts["adjust_orientation"])
    window = (0, 0, h, w)
    if dec["kind"] == "decoders.image_random_crop":  # drawn as that decoder draws it
        window = decoders._random_roi([data], dec, ctx, h, w)
    resampler = prep.stage(args, prep.resampler)
    cmn = prep.stage(args, "normalize")
    resized = resize_ops.out_dtype(np.dtype(opts["dtype"]), resampler)
    plan = prep.geometry_taps(window[2:], resampler, cmn, ctx)
    taps = plan.taps
    if taps is None or resized not in _FAST_TYPES:
        image = D.decode(data, **opts, roi=window, info=info, fast_idct=dec["use_fast_idct"])
        return _unfused(image, plan.geom, resampler, cmn, ctx)
    y, x, rh, rw = taps.source_region()
    roi = (window[0] + y, window[1] + x, rh, rw)
    if DCT_SCALING and prep.resampler == "resize" and info.format == "jpeg" and \
            D.dct_scale(rh, rw, *taps.shape) > 1:
        image, taps = _decode_scaled(data, opts, dec, info, roi, (y, x), plan, resampler)
    else:
        image = D.decode(data, **opts, roi=roi, info=info, fast_idct=dec["use_fast_idct"],
                         contiguous=False, transient=True)
        taps = taps.shifted(y, x)
    if cmn is None:
        return R.resample_taps(image, taps, resized)
    return _normalized(image, taps, resized, cmn, prep)


def _decode_scaled(data: np.ndarray, opts: dict, dec: dict, info: D.ImageInfo,
                   roi: tuple[int, int, int, int], offset: tuple[int, int], plan: Resampling,
                   resampler: dict) -> tuple[np.ndarray, R.Taps]:
    """The region decoded at a DCT scale, and the taps of the same output window on it:
    the resize's source window mapped into the scaled pixels, the filters as the resize
    picks them at that scale, the same output rows and columns (mirrored) kept."""
    assert plan.taps is not None
    out_hw = plan.taps.shape
    image, (y0, x0, y1, x1) = D.decode_scaled(data, out_hw, **opts, roi=roi, info=info,
                                              fast_idct=dec["use_fast_idct"], transient=True)
    sy, sx = (y1 - y0) / roi[2], (x1 - x0) / roi[3]
    dy, dx = offset
    g = plan.geom
    scaled = R.ResizeGeometry(g.out_h, g.out_w, y0 + (g.lo_y - dy) * sy, x0 + (g.lo_x - dx) * sx,
                              y0 + (g.hi_y - dy) * sy, x0 + (g.hi_x - dx) * sx)
    # (The remembered taps, though a scaled geometry rarely repeats: few windows come here,
    # 3-4% of train's where the compiled call (``_Lane``, which does the same) does not
    # take the chain, and window_taps would compile for them on a first run: 1.4 s.)
    taps = resampling_taps(image.shape[:2], scaled, resampler)
    if plan.window is not None:
        taps = taps.window(*plan.window, plan.mirror)
    return image, taps


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

register(OpSchema(
    name="_decode_resize",
    doc="decoders.image (or image_random_crop) then resize, or decoders.image then "
        "random_resized_crop, optionally then crop_mirror_normalize, fused by the graph "
        "compiler: only the source region the resampling reads is decoded.",
    inputs=(decoders.ENCODED,),
    args=(Arg("decode", "any", None, "The decoder's arguments; 'kind' names it."),
          *_STAGE_ARGS),
    kernel=decode_resize_kernel, instance=functools.partial(_instance, cls=_DecodeResizeOp),
    random=True,
    check=_check("_decode_resize"),
    dtype=_dtype, layout=_layout,
    examples=(
        Example(args={"decode": {**resolved_args("decoders.image"), "kind": "decoders.image"},
                      "resize": resolved_args("resize", resize_shorter=8.0),
                      "normalize": resolved_args("crop_mirror_normalize", crop=[6, 6])},
                inputs=decoders._SAMPLES),
        Example(args={"decode": {**resolved_args("decoders.image_random_crop"),
                                 "kind": "decoders.image_random_crop"},
                      "resize": resolved_args("resize", size=[5, 5])},
                inputs=decoders._SAMPLES),
        Example(args={"decode": {**resolved_args("decoders.image"), "kind": "decoders.image"},
                      "random_resized_crop": _RRC, "normalize": _CMN},
                inputs=decoders._SAMPLES),
        Example(args={"decode": {**resolved_args("decoders.image"), "kind": "decoders.image"}},
                inputs=decoders._SAMPLES, raises=ArgumentError,
                match="give exactly one of 'resize' or 'random_resized_crop'"),
    ),
))
