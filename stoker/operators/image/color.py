"""Color operators: brightness, contrast, hue, saturation, hsv, color_twist, conversions.

Semantics measured on DALI 2.4's CPU operators:

- brightness/contrast: ``out = brightness_shift * R + brightness * (center + contrast *
  (in - center))`` in float32, R = the output type's maximum (1 for float). Without
  'contrast_center' the center is half the input type's range (128 for uint8, 0.5 for
  float), whatever the schema's 0.5 says. Integer outputs round half away from zero and
  saturate. Types: uint8, int16, int32, float in and out. Being elementwise, these accept
  any layout here (DALI insists on HWC, FHWC or DHWC).
- hue/saturation/hsv/color_twist: one 3x3 RGB matrix per sample (rotation and scaling in
  YIQ space, see kernels/cpu/image/color.py); color_twist adds ``(h - h * contrast) *
  brightness`` with h = 128 for integer input, 0.5 for float. 'image_type' is accepted and,
  as in DALI, has no effect. hsv outputs uint8 unless 'dtype' says otherwise.
- color_space_conversion: uint8 only; converting a space to itself is refused, as in DALI.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import color as K
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.image.geometry import sample_kernel
from stoker.operators.image.image_args import (
    check_input_type,
    column,
    dtype_rule,
    given,
    out_dtype,
    rgb_images,
)
from stoker.operators.machinery.layouts import NdimLayout, image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

IMAGE = Input("input", "Images: HWC, or FHWC/DHWC sequences and volumes.")
T = types.DALIDataType
_AFFINE_TYPES = (np.uint8, np.int16, np.int32, np.float32)
_TWIST_TYPES = (np.uint8, np.int16, np.int32, np.float32, np.float16)

_BRIGHTNESS = (
    Arg("brightness", "float", 1.0, "Multiplier of the (contrast-adjusted) value.",
        per_sample=True),
    Arg("brightness_shift", "float", 0.0, "Added after scaling, in units of the output "
        "type's range (255 for uint8, 1 for float).", per_sample=True),
)
_CONTRAST = (
    Arg("contrast", "float", 1.0, "Stretch of the values around contrast_center.",
        per_sample=True),
    Arg("contrast_center", "float", 0.5, "Value contrast leaves unchanged; "
        "without it, half the input type's range (128 for uint8, 0.5 for float).",
        per_sample=True),
)


def _dtype_arg(default: Any, allowed: tuple) -> Arg:
    doc = "Output type; the input's type when not given." if default is None else \
        f"Output type ({types.DALIDataType(default).name} unless given)."
    return Arg("dtype", "dtype", default, doc, choices=allowed)


def brightness_contrast_parameters(x: np.ndarray, args: dict, n: int
                                   ) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """Checks ``x`` (n images, or an empty array of their type) and returns the per-sample
    multiplier and addend of brightness/contrast/brightness_contrast and the output type;
    the GPU operator uses the same ones."""
    check_input_type(x, _AFFINE_TYPES)
    out = out_dtype(args, x.dtype)
    center = args["contrast_center"] if given(args, "contrast_center") else \
        K.half_range(x.dtype)
    mul, add = K.brightness_contrast_params(
        column(args.get("brightness", 1.0), n, "brightness"),
        column(args.get("brightness_shift", 0.0), n, "brightness_shift"),
        column(args.get("contrast", 1.0), n, "contrast"),
        column(center, n, "contrast_center"), out)
    return mul, add, out


def brightness_contrast_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    mul, add, out = brightness_contrast_parameters(x, args, x.shape[0])
    return K.affine(x, mul, add, out)


def _u8(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


_RAGGED = [_u8(4, 5), _u8(6, 3, seed=1)]
_SEQ = [np.stack([_u8(3, 4, seed=2), _u8(3, 4, seed=3)])]
_AFFINE_OUT = (T.UINT8, T.INT16, T.INT32, T.FLOAT)

for _name, _args, _doc in (
    ("brightness", _BRIGHTNESS, "Scales pixel values and shifts them: "
     "out = brightness * in + brightness_shift * R (R = the output type's maximum)."),
    ("contrast", _CONTRAST, "Stretches pixel values around contrast_center: "
     "out = center + contrast * (in - center)."),
    ("brightness_contrast", _BRIGHTNESS + _CONTRAST, "Contrast, then brightness, in one "
     "pass: out = brightness_shift * R + brightness * (center + contrast * (in - center))."),
):
    _first = _args[0].name
    register(OpSchema(
        name=_name, doc=_doc, inputs=(IMAGE,),
        args=(*_args, _dtype_arg(None, _AFFINE_OUT)),
        kernel=sample_kernel(brightness_contrast_batch),
        batch_kernel=brightness_contrast_batch, dtype=dtype_rule, layout=image_layout,
        devices=("cpu", "gpu"), gpu_kernel=lazy("image.color", "brightness_contrast"),
        examples=(
            Example(args={_first: 1.5}, inputs=(_RAGGED,)),
            Example(args={_first: 0.5, "dtype": T.FLOAT}, inputs=([_u8(4, 4)] * 2,)),
            Example(args={_first: 0.7}, inputs=([x.astype(np.float32) / 255 for x in _RAGGED],)),
            Example(args={_first: 1.2}, inputs=(_SEQ,)),
            Example(args={"dtype": T.INT8}, inputs=(_RAGGED,), raises=ArgumentError,
                    match="'dtype' must be one of"),
            Example(inputs=([np.zeros((2, 2, 3), np.float64)],), raises=RuntimeError,
                    match="input type float64 is not supported"),
        ),
    ))


# -- hue, saturation, hsv, color_twist ---------------------------------------------------------

def twist_parameters(x: np.ndarray, args: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Checks ``x`` (n RGB images, or an empty array of their type) and returns the
    (n, 3, 3) colour matrices and (n,) offsets of hue/saturation/hsv/color_twist; the GPU
    operator uses the same ones."""
    check_input_type(x, _TWIST_TYPES)
    rgb_images(x, args)
    brightness = column(args.get("brightness", 1.0), n, "brightness")
    contrast = column(args.get("contrast", 1.0), n, "contrast")
    mats = K.twist_matrices(column(args.get("hue", 0.0), n, "hue"),
                            column(args.get("saturation", 1.0), n, "saturation"),
                            column(args.get("value", 1.0), n, "value"),
                            brightness.astype(np.float32) * contrast.astype(np.float32))
    half = np.float32(0.5 if x.dtype.kind == "f" else 128.0)
    b, c = brightness.astype(np.float32), contrast.astype(np.float32)
    return mats, (half - half * c) * b


def twist_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    mats, offsets = twist_parameters(x, args, x.shape[0])
    return K.color_matrix(x, mats, offsets, out_dtype(args, x.dtype))


_HUE = Arg("hue", "float", 0.0, "Hue rotation in degrees.", per_sample=True)
_SATURATION = Arg("saturation", "float", 1.0, "Saturation multiplier (0: gray).",
                  per_sample=True)
_IMAGE_TYPE = Arg("image_type", "image_type", types.RGB, "Color space of the input; "
                  "accepted for portability, DALI ignores it too.")
_TWIST_OUT = (T.UINT8, T.INT16, T.INT32, T.FLOAT, T.FLOAT16)
_TWIST_EXAMPLES = (
    Example(inputs=(_RAGGED,)),
    Example(args={"dtype": T.FLOAT}, inputs=([_u8(4, 4)] * 2,)),
    Example(inputs=(_SEQ,)),
    Example(inputs=([x.astype(np.float32) / 255 for x in _RAGGED],)),
    Example(inputs=([_u8(3, 3, 4)],), raises=RuntimeError, match="expects 3 channels"),
    Example(args={"dtype": T.INT8}, inputs=(_RAGGED,), raises=ArgumentError,
            match="'dtype' must be one of"),
)

for _name, _args, _doc, _dtype in (
    ("hue", (_HUE, _IMAGE_TYPE), "Rotates the hue of RGB images by 'hue' degrees.", None),
    ("saturation", (_SATURATION, _IMAGE_TYPE), "Scales the saturation of RGB images.", None),
    ("hsv", (_HUE, _SATURATION, Arg("value", "float", 1.0, "Value (brightness) multiplier.",
                                    per_sample=True)),
     "Adjusts hue (added, degrees), saturation and value (multiplied) of RGB images, as one "
     "linear map in RGB space.", T.UINT8),
    ("color_twist", (_HUE, _SATURATION,
                     Arg("brightness", "float", 1.0, "Brightness multiplier.", per_sample=True),
                     Arg("contrast", "float", 1.0, "Contrast multiplier around the middle "
                         "of the range.", per_sample=True), _IMAGE_TYPE),
     "Adjusts hue, saturation, brightness and contrast of RGB images in one pass.", None),
):
    _first = _args[0].name
    register(OpSchema(
        name=_name, doc=_doc, inputs=(IMAGE,), args=(*_args, _dtype_arg(_dtype, _TWIST_OUT)),
        kernel=sample_kernel(twist_batch), batch_kernel=twist_batch, dtype=dtype_rule,
        layout=image_layout,
        devices=("cpu", "gpu"), gpu_kernel=lazy("image.color", "twist"),
        examples=tuple(Example(args={_first: 0.6 if _first == "saturation" else 30.0,
                                     **e.args}, inputs=e.inputs, raises=e.raises,
                               match=e.match) for e in _TWIST_EXAMPLES),
    ))


# -- color_space_conversion --------------------------------------------------------------------

_SPACES = (types.RGB, types.BGR, types.GRAY, types.YCbCr)


def csc_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    check_input_type(x, (np.uint8,))
    src, dst = types.DALIImageType(args["image_type"]), types.DALIImageType(args["output_type"])
    want = K.CHANNELS[src.name]
    if x.ndim < 3 or x.shape[-1] != want:
        raise ValueError(f"a {src.name} image needs {want} channel(s) in its last dimension, "
                         f"got shape {x.shape[1:]}")
    return K.convert_color(x, src.name, dst.name)


def _csc_check(args: dict) -> None:
    if args["image_type"] == args["output_type"]:
        raise ArgumentError(f"fn.color_space_conversion: 'image_type' and 'output_type' are "
                            f"both {types.DALIImageType(args['image_type']).name}; there is "
                            "nothing to convert")


def _csc_layout(layouts: list, args: dict) -> str:
    return layouts[0] or _CSC_LAYOUTS


# DALI 2.4 names the axes of an input without a layout (measured): to 5-D, unlike the
# other color operators (which refuse 5-D data).
_CSC_LAYOUTS = NdimLayout({3: "HWC", 4: "FHWC", 5: "FDHWC"})


register(OpSchema(
    name="color_space_conversion",
    doc="Converts uint8 images between RGB, BGR, GRAY and YCbCr (ITU-R BT.601, Y in "
        "16..235). GRAY has one channel, the others three.",
    inputs=(Input("input", "uint8 images, channels last: HWC, FHWC, DHWC or FDHWC."),),
    args=(Arg("image_type", "image_type", REQUIRED, "Color space of the input.",
              choices=_SPACES),
          Arg("output_type", "image_type", REQUIRED, "Color space of the output.",
              choices=_SPACES)),
    kernel=sample_kernel(csc_batch), batch_kernel=csc_batch, check=_csc_check,
    devices=("cpu", "gpu"), gpu_kernel=lazy("image.color", "color_space_conversion"),
    layout=_csc_layout,
    examples=(
        Example(args={"image_type": types.RGB, "output_type": types.YCbCr}, inputs=(_RAGGED,)),
        Example(args={"image_type": types.BGR, "output_type": types.GRAY}, inputs=(_SEQ,)),
        Example(args={"image_type": types.GRAY, "output_type": types.RGB},
                inputs=([_u8(3, 4, 1), _u8(2, 2, 1)],)),
        Example(args={"image_type": types.YCbCr, "output_type": types.BGR},
                inputs=([_u8(5, 5)] * 2,)),
        Example(args={"image_type": types.RGB, "output_type": types.RGB}, inputs=(_RAGGED,),
                raises=ArgumentError, match="nothing to convert"),
        Example(args={"image_type": types.RGB, "output_type": types.GRAY},
                inputs=([_u8(3, 3, 1)],), raises=RuntimeError, match="needs 3 channel(s)"),
    ),
))
