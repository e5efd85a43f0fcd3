"""Image decoders: decoders.image, image_crop, image_random_crop, image_slice, peek_image_shape.

Inputs are encoded images (1-D uint8 samples, as readers.file makes them). The decoders
that take a window read the image's header first, resolve the window against the
(oriented) image size, then decode only that window (``kernels/cpu/image/decode.py``). The
graph compiler turns decoders.image followed by ``crop``, ``slice`` or a cropping
``crop_mirror_normalize`` into these window decoders (``fusion.py``).

``device="mixed"`` runs in the batch's GPU part (``mixed_kernel``): JPEGs are decoded in
one batch on the GPU (``kernels/gpu/image/jpeg.py``: nvImageCodec or torchvision's nvJPEG), each
cut to the window the CPU decoder would cut (the same header read, the same random draws);
other formats, images the GPU path does not cover, and CPU tensors
(``STOKER_GPU_ON_CPU=1``) are decoded by the CPU kernels on the pipeline's threads and
uploaded. Outputs are HWC uint8 tensors on the device, like the CPU decoder's arrays.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import decode as K
from stoker.kernels.cpu.image.crop_window import random_crop_window
from stoker.kernels.cpu.tensor import tensor as T
from stoker.kernels.cpu.tensor import window as W
from stoker.operators.image.decoders_mixed import mixed_kernel
from stoker.operators.image.geometry import resolve_windows
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

ENCODED = Input("input", "Encoded images: 1-D uint8 samples (JPEG, PNG, BMP, TIFF, WebP, PNM, "
                         "JPEG 2000).")
_DTYPES = (types.UINT8, types.UINT16, types.UINT32, types.INT8, types.INT16, types.INT32,
           types.FLOAT)
_IGNORED = "Accepted for portability; it tunes DALI's GPU decoder and has no effect here."

DECODE_ARGS = (
    Arg("output_type", "image_type", types.RGB, "Colour space of the output: RGB, BGR, GRAY "
        "(1 channel), YCbCr (BT.601 studio range) or ANY_DATA (the stored channels)."),
    Arg("dtype", "dtype", types.UINT8, "Output type; values are rescaled to its range (floats "
        "to [0, 1]).", choices=_DTYPES),
    Arg("adjust_orientation", "bool", True, "Apply the EXIF orientation (JPEG, PNG, WebP, "
        "TIFF)."),
    Arg("use_fast_idct", "bool", False, "Use libjpeg-turbo's fast integer IDCT for JPEGs "
        "instead of the accurate one (faster, up to a few levels different)."),
    Arg("jpeg_fancy_upsampling", "bool", False, "Smooth chroma upsampling for the GPU decoder "
        "(device='mixed' with nvImageCodec); the CPU decoder always upsamples smoothly."),
    Arg("affine", "bool", True, _IGNORED),
    Arg("device_memory_padding", "int", 16777216, _IGNORED),
    Arg("device_memory_padding_jpeg2k", "int", 0, _IGNORED),
    Arg("host_memory_padding", "int", 8388608, _IGNORED),
    Arg("host_memory_padding_jpeg2k", "int", 0, _IGNORED),
    Arg("hw_decoder_load", "float", 0.65, "Share of a batch's JPEGs given to the hardware "
        "JPEG decoder (A100, H100) with device='mixed' and nvImageCodec; no effect "
        "otherwise."),
    Arg("hybrid_huffman_threshold", "int", 1000000, _IGNORED),
    Arg("preallocate_height_hint", "int", 0, _IGNORED),
    Arg("preallocate_width_hint", "int", 0, _IGNORED),
)
CACHE_ARGS = (
    Arg("cache_size", "int", 0, _IGNORED), Arg("cache_threshold", "int", 0, _IGNORED),
    Arg("cache_type", "str", "", _IGNORED), Arg("cache_batch_copy", "bool", True, _IGNORED),
    Arg("cache_debug", "bool", False, _IGNORED),
)
# DALI's deprecated names, accepted and ignored.
RENAMED: dict[str, str | None] = {"memory_stats": None, "split_stages": None,
                                  "use_chunk_allocator": None}
DEVICES = ("cpu", "mixed")

# Tiny test images for the contract battery: a 12x20 JPEG and a PNG made here.
_JPEG = np.frombuffer(base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsj"
    "HBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgo"
    "KCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAAMABQDASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAA"
    "BwAG/8QAHhAAAQMFAQEAAAAAAAAAAAAAAAQFIwEGISKhMRP/xAAWAQEBAQAAAAAAAAAAAAAAAAAFAgf/xAAdEQAB"
    "BAIDAAAAAAAAAAAAAAAAAQIDBAUGERIh/9oADAMBAAIRAxEAPwAka7R8j4bBrtHyPghNTYmxobBqbE2NCKttwPg9"
    "lm8DZPaMVI+EOSdsTfKmhDKW3cGiM2Wbqh//2Q=="), np.uint8)


def _png(h: int, w: int) -> np.ndarray:
    import struct
    import zlib

    rows = b"".join(b"\x00" + bytes((x * 9 + y * 5 + c * 40) % 256 for x in range(w)
                                    for c in range(3)) for y in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return np.frombuffer(png, np.uint8)


_PNG = _png(9, 7)
_SAMPLES = ([_JPEG, _PNG],)


# -- shared glue --------------------------------------------------------------------------------

def decode_options(args: dict) -> dict:
    return {"output_type": types.DALIImageType(args["output_type"]).name,
            "dtype": types.to_numpy(args["dtype"]),
            "adjust_orientation": args["adjust_orientation"]}


def _out_dtype(in_dtypes: list, args: dict) -> np.dtype:
    return types.to_numpy(args["dtype"])


def _hwc(in_layouts: list, args: dict) -> str:
    return "HWC"


def _scalar(value: Any) -> float:
    return float(np.asarray(value, np.float64).reshape(-1)[0])


def crop_window(args: dict, h: int, w: int) -> tuple[int, int, int, int]:
    """(y, x, h, w) of fn.crop's window arguments in an h x w image, placed as fn.crop
    places it (``geometry.resolve_windows``); per-sample values are this sample's."""
    crop = args.get("crop")
    one = {"crop": None if crop is None else np.asarray(crop, np.float64).reshape(-1),
           "crop_h": _scalar(args.get("crop_h", 0.0)), "crop_w": _scalar(args.get("crop_w", 0.0)),
           "crop_pos_x": _scalar(args.get("crop_pos_x", 0.5)),
           "crop_pos_y": _scalar(args.get("crop_pos_y", 0.5)),
           "rounding": args.get("rounding", "round"), "out_of_bounds_policy": "error"}
    ay, ax, ch, cw = resolve_windows(1, h, w, one)
    y, x = int(ay[0]), int(ax[0])
    if y < 0 or x < 0 or y + ch > h or x + cw > w:  # in fn.crop's words (a fused crop)
        from stoker.kernels.cpu.image.crop import out_of_bounds

        raise out_of_bounds((h, w), (y, x), (ch, cw))
    return y, x, ch, cw


_NAMED = ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")


def slice_window(args: dict, h: int, w: int, anchor: Any = None, shape: Any = None
                 ) -> tuple[int, int, int, int]:
    """(y, x, h, w) of decoders.image_slice's arguments in an h x w image, resolved as
    fn.slice resolves them on an HWC image (``kernels/cpu/tensor/window.py``): values list the
    axes in axis_names order ('WH') unless ``axes`` was given; ends round half away."""
    given = args.get("_given", ())
    if "axes" in given and "axis_names" not in given:
        axes = [T.normalize_axis(int(a), 3, "axes") for a in np.ravel(args["axes"])]
    else:
        names = args.get("axis_names", "WH")
        if any(c not in "HWC" for c in names):
            raise ValueError(f"axis_names {names!r} names an axis the HWC image lacks")
        axes = ["HWC".index(c) for c in names]
    if 2 in axes:
        raise ValueError("decoders.image_slice windows cover H and W only, not channels")
    in_shape = (h, w, 1)
    if anchor is not None or shape is not None:
        if anchor is None or shape is None:
            raise ValueError("decoders.image_slice needs both the anchor and the shape input")
        lo, hi = W.slice_window_from_inputs(in_shape, axes, anchor, shape,
                                            args.get("normalized_anchor", True),
                                            args.get("normalized_shape", True))
    else:
        named = {k: args.get(k) for k in _NAMED}
        if all(v is None for v in named.values()):
            raise ValueError("decoders.image_slice needs a window: anchor and shape inputs, "
                             "or start/shape/end, or rel_start/rel_shape/rel_end")
        lo, hi = W.slice_window(in_shape, axes, **named)
    lo, hi = W.check_window(in_shape, lo, hi, "error")
    if hi[0] <= lo[0] or hi[1] <= lo[1]:
        raise ValueError(f"the slice window rows [{lo[0]}, {hi[0]}), columns [{lo[1]}, "
                         f"{hi[1]}) is empty")
    return lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]


# -- kernels ------------------------------------------------------------------------------------

def image_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    return K.decode(ins[0], **decode_options(args), fast_idct=args["use_fast_idct"])


# Each window decoder's window, from one sample's inputs, arguments and context and the
# oriented image size: shared by the CPU kernels and the mixed path, so both cut the same.

def _crop_roi(ins: list, args: dict, ctx: Any, h: int, w: int) -> tuple[int, int, int, int]:
    return crop_window(args, h, w)


def _random_roi(ins: list, args: dict, ctx: Any, h: int, w: int) -> tuple[int, int, int, int]:
    return random_crop_window(ctx.seed, ctx.index, h, w, args["random_area"],
                              args["random_aspect_ratio"], args["num_attempts"])


def _slice_roi(ins: list, args: dict, ctx: Any, h: int, w: int) -> tuple[int, int, int, int]:
    anchor = ins[1] if len(ins) > 1 else None
    shape = ins[2] if len(ins) > 2 else None
    return slice_window(args, h, w, anchor, shape)


def _window_kernel(roi: Any) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        opts = decode_options(args)
        info = K.probe(ins[0])
        h, w = info.shape(opts["adjust_orientation"])
        return K.decode(ins[0], **opts, roi=roi(ins, args, ctx, h, w), info=info,
                        fast_idct=args["use_fast_idct"])
    return kernel


image_crop_kernel = _window_kernel(_crop_roi)
image_random_crop_kernel = _window_kernel(_random_roi)
image_slice_kernel = _window_kernel(_slice_roi)


def peek_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    info = K.probe(ins[0])
    shape = K.output_shape(info, types.DALIImageType(args["image_type"]).name,
                           args["adjust_orientation"])
    return np.array(shape, types.to_numpy(args["dtype"]))


# -- schemas ------------------------------------------------------------------------------------

def _check_crop(args: dict) -> None:
    crop = args.get("crop")
    if crop is not None and not hasattr(crop, "op") and len(crop) not in (1, 2, 3):
        raise ArgumentError(f"fn.decoders.image_crop: argument 'crop' must have 2 values "
                            f"(height, width), got {crop!r}")
    if crop is not None and (args.get("crop_h") or args.get("crop_w")):
        raise ArgumentError("fn.decoders.image_crop: give either 'crop' or 'crop_h'/'crop_w', "
                            "not both")
    if bool(args.get("crop_h")) != bool(args.get("crop_w")):
        raise ArgumentError("fn.decoders.image_crop: arguments 'crop_h' and 'crop_w' must be "
                            "given together")


def _check_random_crop(args: dict) -> None:
    for key in ("random_area", "random_aspect_ratio"):
        lo_hi = args[key]
        if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1] or lo_hi[0] <= 0:
            raise ArgumentError(f"fn.decoders.image_random_crop: argument '{key}' must be "
                                f"[min, max] with 0 < min <= max, got {lo_hi!r}")


_BAD_TYPE = Example(args={"dtype": types.FLOAT64}, inputs=_SAMPLES, raises=ArgumentError,
                    match="'dtype' must be one of")

register(OpSchema(
    name="decoders.image",
    doc="Decodes images (JPEG, PNG, BMP, TIFF, WebP, PNM, JPEG 2000) to HWC arrays.",
    inputs=(ENCODED,), args=(*DECODE_ARGS, *CACHE_ARGS), devices=DEVICES, renamed=RENAMED,
    kernel=image_kernel, gpu_kernel=mixed_kernel(image_kernel, None), layout=_hwc,
    dtype=_out_dtype,
    examples=(
        Example(inputs=_SAMPLES),
        Example(args={"output_type": types.GRAY, "dtype": types.FLOAT}, inputs=_SAMPLES),
        Example(args={"output_type": types.YCbCr}, inputs=([_JPEG, _JPEG],)),
        _BAD_TYPE,
    ),
))

CROP_ARGS = (
    Arg("crop", "floats", None, "Window size (height, width); 0 in an axis keeps it whole.",
        per_sample=True, range=(0, None)),
    Arg("crop_h", "float", 0.0, "Window height (with crop_w).", per_sample=True,
        range=(0, None)),
    Arg("crop_w", "float", 0.0, "Window width (with crop_h).", per_sample=True, range=(0, None)),
    Arg("crop_pos_x", "float", 0.5, "Relative horizontal position: 0 left, 1 right.",
        per_sample=True, range=(0, 1)),
    Arg("crop_pos_y", "float", 0.5, "Relative vertical position: 0 top, 1 bottom.",
        per_sample=True, range=(0, 1)),
    Arg("crop_d", "float", 0.0, "Accepted for portability: images have no depth.",
        per_sample=True, range=(0, None)),
    Arg("crop_pos_z", "float", 0.5, "Accepted for portability: images have no depth.",
        per_sample=True, range=(0, 1)),
    Arg("rounding", "str", "round", "How the window's anchor becomes an integer.",
        choices=("round", "truncate")),
)

register(OpSchema(
    name="decoders.image_crop",
    doc="Decodes only a window of each image; the window is placed as fn.crop places it.",
    inputs=(ENCODED,), args=(*DECODE_ARGS, *CROP_ARGS), devices=DEVICES, renamed=RENAMED,
    kernel=image_crop_kernel, gpu_kernel=mixed_kernel(image_crop_kernel, _crop_roi),
    layout=_hwc, dtype=_out_dtype, check=_check_crop,
    examples=(
        Example(args={"crop": [5, 6]}, inputs=_SAMPLES),
        Example(args={"crop": [4, 5], "crop_pos_x": 0.0, "crop_pos_y": 1.0,
                      "output_type": types.BGR}, inputs=_SAMPLES),
        Example(args={"crop_h": 4.0}, inputs=_SAMPLES, raises=ArgumentError,
                match="'crop_h' and 'crop_w' must be given together"),
    ),
))

register(OpSchema(
    name="decoders.image_random_crop",
    doc="Decodes only a random window of each image: area fraction in random_area, aspect "
        "ratio (log-uniform) in random_aspect_ratio, as in Inception training.",
    inputs=(ENCODED,),
    args=(*DECODE_ARGS,
          Arg("random_area", "floats", [0.08, 1.0], "Range of the window's area, as a "
              "fraction of the image's.", length=2, broadcast=True, range=(0, None)),
          Arg("random_aspect_ratio", "floats", [0.75, 1.333333], "Range of the window's "
              "width / height.", length=2, broadcast=True, range=(0, None)),
          Arg("num_attempts", "int", 10, "Draws before falling back to a centred window.",
              range=(1, None))),
    devices=DEVICES, renamed=RENAMED, random=True, kernel=image_random_crop_kernel,
    gpu_kernel=mixed_kernel(image_random_crop_kernel, _random_roi),
    layout=_hwc, dtype=_out_dtype, check=_check_random_crop,
    examples=(
        Example(inputs=_SAMPLES),
        Example(args={"random_area": [0.5, 0.5], "random_aspect_ratio": [1.0, 1.0]},
                inputs=([_JPEG, _PNG, _JPEG],)),
        Example(args={"random_area": [0.9, 0.1]}, inputs=_SAMPLES, raises=ArgumentError,
                match="'random_area' must be [min, max]"),
    ),
))

SLICE_ARGS = (
    Arg("axes", "ints", [1, 0], "Dimensions (0 = H, 1 = W) that the window's values refer "
        "to, in order.", per_sample=True),
    Arg("axis_names", "layout", "WH", "The same as letters; an explicit axes wins."),
    Arg("start", "ints", None, "Window start in pixels.", per_sample=True),
    Arg("shape", "ints", None, "Window size in pixels.", per_sample=True),
    Arg("end", "ints", None, "Window end in pixels (exclusive).", per_sample=True),
    Arg("rel_start", "floats", None, "Window start as a fraction of the size.", per_sample=True),
    Arg("rel_shape", "floats", None, "Window size as a fraction of the size.", per_sample=True),
    Arg("rel_end", "floats", None, "Window end as a fraction of the size.", per_sample=True),
    Arg("normalized_anchor", "bool", True, "The anchor input is a fraction of the size."),
    Arg("normalized_shape", "bool", True, "The shape input is a fraction of the size."),
)

register(OpSchema(
    name="decoders.image_slice",
    doc="Decodes only a window of each image, given as fn.slice takes it (anchor and shape "
        "inputs, or start/shape/end arguments, absolute or relative).",
    inputs=(ENCODED, Input("anchor", "Window start per axis.", optional=True),
            Input("shape_input", "Window size per axis.", optional=True)),
    args=(*DECODE_ARGS, *SLICE_ARGS), devices=DEVICES, renamed=RENAMED,
    kernel=image_slice_kernel, gpu_kernel=mixed_kernel(image_slice_kernel, _slice_roi),
    layout=_hwc, dtype=_out_dtype,
    examples=(
        Example(args={"rel_start": [0.25, 0.1], "rel_shape": [0.5, 0.5]}, inputs=_SAMPLES),
        Example(args={"start": [1, 2], "shape": [4, 3]}, inputs=_SAMPLES),
        Example(args={"start": [1, 2, 3], "shape": [4, 3, 1]}, inputs=_SAMPLES,
                raises=Exception, match="has 3 values for 2 sliced axes"),
    ),
))

register(OpSchema(
    name="peek_image_shape",
    doc="The (height, width, channels) of each encoded image, read from its header only.",
    inputs=(ENCODED,),
    args=(Arg("image_type", "image_type", types.RGB, "Colour space the image would be "
              "decoded to (sets the channel count)."),
          Arg("adjust_orientation", "bool", True, "Report the EXIF-oriented size."),
          Arg("dtype", "dtype", types.INT64, "Type of the shape values.")),
    kernel=peek_kernel, layout=lambda ins, args: "", dtype=_out_dtype,
    examples=(
        Example(inputs=_SAMPLES),
        Example(args={"image_type": types.GRAY, "dtype": types.INT32}, inputs=_SAMPLES),
        Example(args={"dtype": "int64"}, inputs=_SAMPLES, raises=TypeError,
                match="'dtype' must be a data type"),
    ),
))
