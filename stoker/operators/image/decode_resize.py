"""``_decode_resize``: the decoders.image -> resize chains as one operator (``resize_fused.py``
holds what it shares with ``_resize_normalize``).

``decoders.image`` (or ``decoders.image_random_crop``) then ``resize``, or ``decoders.image``
then ``random_resized_crop``, optionally then ``crop_mirror_normalize``: only the source
pixels the resampling reads are decoded (region-of-interest JPEG decoding: a center crop
after resize_shorter decodes about half of the image), at a DCT scale (1/2, 1/4, 1/8)
where the resize shrinks the region 2x or more. The ResNet-50 train and val chains' JPEGs
go through one compiled call per thread and batch (``_Lane``,
``kernels/cpu/image/decode_resize_loop.py``; the threads take the batch's samples one at
a time), the rest through the Python driver (``decode_resize_kernel``), with the same
results.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.executor.context import ChunkContext
from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.image import decode as D
from stoker.kernels.cpu.image import resize as R
from stoker.kernels.cpu.image import resize_geometry as G
from stoker.kernels.cpu.image import turbojpeg
from stoker.kernels.cpu.image.crop_window import window_stream
from stoker.operators.image import decoders
from stoker.operators.image import resize as resize_ops
from stoker.operators.image.geometry import window_size
from stoker.operators.image.resize_fused import (
    _CMN,
    _FAST_TYPES,
    _RRC,
    _STAGE_ARGS,
    Prepared,
    Resampling,
    _check,
    _dtype,
    _instance,
    _layout,
    _mirrored,
    _normalized,
    _unfused,
    resampling_taps,
    resolved_args,
)
from stoker.operators.machinery.base import SampleOp
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, OpSchema

# Decode JPEGs at a DCT scale where decode -> resize shrinks the region 2x or more (the
# only inexact part of these operators; tests switch it off to compare bit for bit).
DCT_SCALING = True
# Run the ResNet-50 train and val chains' JPEGs through one compiled call (``_Lane``); tests
# switch it off to compare it with the Python driver.
LANE = True
_LANE_TYPES = (np.dtype(np.float32), np.dtype(np.float16))  # the compiled call's outputs

_U8 = np.dtype(np.uint8)


def _address(array: np.ndarray) -> int:
    """Where a C-contiguous array's data starts: 0.4 us through ctypes.addressof, where
    ``array.ctypes.data`` takes 1.7-7 us, under the GIL, on every image of a chunk."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only or empty
        return array.ctypes.data


def _located(datas: list, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(addresses, sizes) of a chunk's encoded images; 0 for one that is not a C-contiguous
    1-D uint8 array (the call hands it back, as it does an empty one). Where numpy's array
    layout is known the lane uses the compiled ``decode_resize_loop.locate`` instead."""
    addresses, sizes = np.zeros(k, np.int64), np.zeros(k, np.int64)
    for j, data in enumerate(datas):
        if type(data) is np.ndarray and data.dtype is _U8 and data.ndim == 1 and \
                data.flags.c_contiguous:
            addresses[j], sizes[j] = _address(data), data.size
    return addresses, sizes


def _array_layout() -> np.ndarray | None:
    """What ``decode_resize_loop.locate`` reads numpy arrays with (see there), or None
    where numpy's array object is not laid out as it expects. numpy's C API has the object
    as its header, then the data pointer, the dimension count, the shape and strides
    pointers, the base and the dtype, in that order; the type word and the data pointer are
    found on probe arrays, the rest checked on them."""
    probes = [np.arange(40, dtype=np.uint8), np.arange(77, dtype=np.uint8),
              np.arange(60, dtype=np.uint8)[::3], np.zeros((3, 5), np.uint8)]
    count = np.ndarray.__basicsize__ // 8  # (the object's own words, no further)
    words = [(ctypes.c_int64 * count).from_address(id(a)) for a in probes]
    kind, dtype = id(np.ndarray), id(np.dtype(np.uint8))

    def where(value_of) -> int | None:
        hits = [i for i in range(count) if all(w[i] == value_of(a) for w, a in zip(
            words, probes, strict=True))]
        return hits[0] if len(hits) == 1 else None

    at_type, at_data = where(lambda a: kind), where(lambda a: a.ctypes.data)
    if at_type is None or at_data is None or at_data + 5 >= count:
        return None
    nd, shape, strides, descr = at_data + 1, at_data + 2, at_data + 3, at_data + 5
    for w, a in zip(words, probes, strict=True):
        if w[nd] & 0xFFFFFFFF != a.ndim or w[descr] != dtype or \
                ctypes.c_int64.from_address(w[shape]).value != a.shape[0] or \
                ctypes.c_int64.from_address(w[strides]).value != a.strides[0]:
            return None
    return np.array([kind, dtype, *(8 * i for i in (at_type, at_data, nd, shape, strides,
                                                     descr))], np.int64)


try:
    _LAYOUT = _array_layout()
except (ValueError, OverflowError):  # (an unreadable word)
    _LAYOUT = None


class _Lane:
    """``decode_resize_loop.decode_resize_claimed`` for one operator: the train and val
    chains (decoders.image or image_random_crop -> resize to a fixed size or with
    resize_shorter alone, or decoders.image -> random_resized_crop; then
    crop_mirror_normalize of a constant window size to float32 or float16, CHW or HWC)
    with their constant arguments packed once. What the driver below would do in about
    200 us of Python under the GIL per JPEG, one call per thread does for a batch (or a
    chunk) of them; it hands back the samples it does not cover."""

    def __init__(self, ints: np.ndarray, floats: np.ndarray, tables: tuple, norm: Any,
                 out_shape: tuple[int, int, int], out_dtype: np.dtype, mirror_key: str | None,
                 mirror: bool):
        self.ints, self.floats, self.tables, self.norm = ints, floats, tables, norm
        self.out_shape, self.out_dtype = out_shape, out_dtype
        self.mirror_key, self.mirror = mirror_key, mirror
        L = loops("image.decode_resize_loop")
        self.call, self.locate = L.decode_resize_claimed, L.locate
        # float16 or (h, w, C) outputs: each image's float32 (C, h, w) first, on a stage
        self.stage_size = int(np.prod(out_shape)) if ints[L.I_HALF] or ints[L.I_HWC] else 0
        self.fns = turbojpeg._fns
        self.scratch = threading.local()  # (u8, f32): grown as images need; stage
        self.most = (0, 0)  # the largest scratch any thread has needed

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
        if resized not in _FAST_TYPES or not {mn, mg} <= G.BASE_WIDTH.keys() or \
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
        kinds = [G.TRIANGULAR if k == G.LINEAR else k for k in (mn, mg)]
        floats[[L.F_MIN_WIDTH, L.F_MAG_WIDTH, L.F_SHIFT]] = (
            G.BASE_WIDTH[mn], G.BASE_WIDTH[mg], norm.shift)
        mirror_key = "normalize:mirror" if "mirror" in prep.keys["normalize"] else None
        shape = (3, *window[2:]) if norm.channels_first else (*window[2:], 3)
        return _Lane(ints, floats, tuple(G.filter_table(k) for k in kinds), norm,
                     shape, prep.out_dtype, mirror_key,
                     mirror_key is None and _mirrored(cmn.get("mirror", False)))

    def start(self, datas: list, argv: dict, ctx: Any) -> _Claims:
        """A chunk's (or a stage's whole batch's) samples for ``work``: the outputs are the
        chunk's rows of the batch's output block (``ctx.rows``: the batch is then one
        array, made without a copy)."""
        k = len(datas)
        if _LAYOUT is not None and type(datas) is list:  # (one C-level map under the GIL,
            # the rest compiled; the rows of a 2-D array would be views gone by then)
            addresses, sizes = np.empty(k, np.int64), np.empty(k, np.int64)
            self.locate(np.fromiter(map(id, datas), np.int64, k), _LAYOUT, addresses, sizes)
        else:
            addresses, sizes = _located(datas, k)
        outs = ctx.rows(self.out_shape, self.out_dtype)
        out0 = _address(outs) if k else 0
        out_step = outs.nbytes // k if k else 0
        status, counter, failed = np.empty(k, np.int64), np.zeros(1, np.int64), False
        if self.mirror_key is None:
            mirrors = np.full(k, self.mirror)
        else:
            flags = argv[self.mirror_key]
            try:
                if type(flags) is np.ndarray and flags.dtype.kind in "biu" and flags.size == k:
                    mirrors = flags.reshape(k) != 0  # (coin_flip's dense batch: no loop)
                else:
                    mirrors = np.array([_mirrored(v) for v in flags], bool)
            except (IndexError, TypeError, ValueError):  # (the driver's error names the sample)
                mirrors, failed, counter[0] = np.zeros(k, bool), True, k
                status.fill(1)  # (every sample handed back, none taken)
        norm = self.norm
        seed, first = window_stream(ctx.seed, ctx.batch.first_index + ctx.lo)
        return _Claims(ctx, k, outs, status, failed, (addresses, sizes, out0, out_step, counter),
                       (self.fns, self.ints, self.floats, *self.tables, seed, first, mirrors,
                        norm.mean, norm.inv_std, status))

    def work(self, claims: _Claims, leave: int = 0) -> None:
        """Does samples of ``claims``, taken one at a time, until none is left to take (or,
        with ``leave``, at most that many: other threads take them); any number of
        threads may work on the same claims at once."""
        try:
            u8, f32 = self.scratch.arrays
        except AttributeError:
            u8, f32 = np.empty(0, np.uint8), np.empty(0, np.float32)
            self.scratch.stage = np.empty(self.stage_size, np.float32)
        stage, j = self.scratch.stage, -1
        while True:
            j, need_u8, need_f32, failed = self.call(*claims.head, j, leave, *claims.tail,
                                                     u8, f32, stage)
            if failed:
                claims.failed = True
            if j == claims.n:
                return
            # Grown to the most any thread has needed: at 16 threads each thread grew at
            # every larger image it met, and RSS rose 4-6% over 20 epochs as they did.
            most = self.most = (max(self.most[0], need_u8), max(self.most[1], need_f32))
            u8 = u8 if need_u8 <= u8.size else np.empty(most[0] * 5 // 4, np.uint8)
            f32 = f32 if need_f32 <= f32.size else np.empty(most[1] * 5 // 4, np.float32)
            self.scratch.arrays = u8, f32

    def done(self, claims: _Claims) -> tuple[np.ndarray, list[int]]:
        """The outputs of worked claims, and the samples the call handed back (their rows
        unwritten: the driver makes them, raising the errors and passing on
        on_error="skip"'s stand-ins)."""
        return claims.outs, np.flatnonzero(claims.status).tolist() if claims.failed else []

    def run(self, datas: list, argv: dict, ctx: Any) -> tuple[np.ndarray, list[int]]:
        """``start``, ``work`` and ``done`` on this thread."""
        claims = self.start(datas, argv, ctx)
        self.work(claims)
        return self.done(claims)


class _Claims:
    """Samples for ``_Lane.work``: the call's arguments before and after the thread's own
    (``head``, ``tail``), the outputs and each sample's status (``failed``: some not
    done)."""

    __slots__ = ("ctx", "n", "outs", "status", "failed", "head", "tail")

    def __init__(self, ctx: Any, n: int, outs: np.ndarray, status: np.ndarray, failed: bool,
                 head: tuple, tail: tuple):
        self.ctx, self.n, self.outs, self.status, self.failed = ctx, n, outs, status, failed
        self.head, self.tail = head, tail


def _serial(fn: Any, n: int) -> list:
    return [fn(i) for i in range(n)]


class _DecodeResizeOp(SampleOp):
    """``_decode_resize``: a chunk through the compiled call where it covers the operator,
    the samples it hands back through the per-sample driver."""

    def run_chunk(self, ins: list, argv: dict, ctx: Any) -> tuple:
        lane = lane_of(self.args["_prepared"])
        if lane is None:
            return self._per_sample(ins, argv, ctx)
        outs, handed_back = lane.run(ins[0], argv, ctx)
        return self.redone(outs, handed_back, ins, argv, ctx, _serial)

    def shared(self, ins: list, argv: dict, ctx: Any) -> _Shared | None:
        """The whole batch (``ctx``) as work that the stage's threads share (the
        executor's ``_run_shared``), or None where the compiled call does not cover this
        operator."""
        lane = lane_of(self.args["_prepared"])
        if lane is None:
            return None
        return _Shared(self, lane, lane.start(ins[0], argv, ctx), ins, argv)

    def redone(self, outs: np.ndarray, handed_back: list[int], ins: list, argv: dict,
               ctx: Any, spread: Any) -> tuple:
        """The outputs with the samples the call handed back made by the driver,
        ``spread(fn, count)`` running ``fn(0)``, ... (on the pool's threads, or here)."""
        if not handed_back:
            return (outs,)

        def one(i: int) -> Any:
            j = handed_back[i]
            sample = ChunkContext(ctx.batch, ctx.seed, ctx.lo + j, ctx.lo + j + 1,
                                  None if ctx.source_info is None else ctx.source_info[j:j + 1])
            return self._per_sample([x[j:j + 1] for x in ins],
                                    {key: v[j:j + 1] for key, v in argv.items()}, sample)[0][0]

        samples, dense = list(outs), True
        for j, out in zip(handed_back, spread(one, len(handed_back)), strict=True):
            if type(out) is np.ndarray and out.shape == outs.shape[1:] and \
                    out.dtype == outs.dtype:
                outs[j] = out  # (the batch stays one block)
            else:  # a failed sample's stand-in, or another shape: a list of samples
                samples[j], dense = out, False
        return (outs if dense else samples,)


class _Shared:
    """A batch of ``_decode_resize`` that the stage's threads work on together: each
    calls ``work`` once (the compiled call takes samples one at a time), then one thread
    calls ``outputs``."""

    def __init__(self, op: _DecodeResizeOp, lane: _Lane, claims: _Claims, ins: list,
                 argv: dict):
        self.op, self.lane, self.claims, self.ins, self.argv = op, lane, claims, ins, argv

    def work(self, leave: int = 0) -> None:
        self.lane.work(self.claims, leave)

    def outputs(self, spread: Any) -> tuple:
        outs, handed_back = self.lane.done(self.claims)
        return self.op.redone(outs, handed_back, self.ins, self.argv, self.claims.ctx, spread)


def lane_of(prep: Prepared) -> _Lane | None:
    """The compiled call that does this operator's JPEGs, where it covers them (worked out
    once per operator)."""
    if prep._lane is prep:
        prep._lane = _Lane.make(prep) if LANE else None
    return prep._lane


def _shorter(resize: dict | None) -> float | None:
    """resize_shorter's value where it alone gives a resize's size (the compiled call's:
    a positive one; a negative one flips the image, which the driver does)."""
    if resize is None or not resize.get("resize_shorter") or \
            resize.get("max_size") is not None or resize.get("roi_start") is not None or \
            not resize.get("subpixel_scale", True):
        return None
    shorter = float(resize["resize_shorter"])
    return shorter if 0 < shorter < float("inf") else None


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
    scaled = G.ResizeGeometry(g.out_h, g.out_w, y0 + (g.lo_y - dy) * sy, x0 + (g.lo_x - dx) * sx,
                              y0 + (g.hi_y - dy) * sy, x0 + (g.hi_x - dx) * sx)
    # (The remembered taps, though a scaled geometry rarely repeats: few windows come here,
    # 3-4% of train's where the compiled call (``_Lane``, which does the same) does not
    # take the chain, and window_taps would compile for them on a first run: 1.4 s.)
    taps = resampling_taps(image.shape[:2], scaled, resampler)
    if plan.window is not None:
        taps = taps.window(*plan.window, plan.mirror)
    return image, taps


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
