"""The augmentations automatic augmentation policies draw from, for uint8 HWC images (and
FHWC videos), with DALI's default magnitude ranges and parameter mappings. Geometric ones
warp with ``fill_value`` (None: clamp to the border) and ``interp_type``; the "enhance"
ones (brightness, contrast, color, sharpness) take magnitudes around 0 shifted to factors
around 1; contrast and sharpness follow PIL's ImageEnhance (weighted-mean centre; a 3x3
smoothing kernel blended with identity), equalize is OpenCV's histogram equalization.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import fn, types
from stoker.auto_aug.core import augmentation


def warp_x_param(magnitude: float) -> list:
    return [magnitude, 0]


def warp_y_param(magnitude: float) -> list:
    return [0, magnitude]


def _warp(data: Any, matrix: Any, fill_value: Any, interp_type: Any) -> Any:
    return fn.warp_affine(data, matrix=matrix, fill_value=fill_value, interp_type=interp_type,
                          inverse_map=False)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_x_param)
def shear_x(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_y_param)
def shear_y(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_x_param)
def translate_x(data, rel_offset, shape, fill_value=128, interp_type=None):
    offset = rel_offset * shape[1]
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_x_param,
              name="translate_x")
def translate_x_no_shape(data, offset, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_y_param)
def translate_y(data, rel_offset, shape, fill_value=128, interp_type=None):
    offset = rel_offset * shape[0]
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_y_param,
              name="translate_y")
def translate_y_no_shape(data, offset, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 30), randomly_negate=True)
def rotate(data, angle, fill_value=128, interp_type=None, rotate_keep_size=True):
    return fn.rotate(data, angle=angle, fill_value=fill_value, interp_type=interp_type,
                     keep_size=rotate_keep_size)


def shift_enhance_range(magnitude: float) -> float:
    """Enhance magnitudes in [0, 1], randomly negated, as factors around 1 (no change)."""
    return 1 + magnitude


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def brightness(data, parameter):
    return fn.brightness(data, brightness=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def contrast(data, parameter):
    # PIL's centre: the mean of the channel means weighted as luma (HWC / FHWC).
    means = fn.reductions.mean(data, axis_names="HW", keep_dims=True)
    luma = types.Constant(np.array([0.299, 0.587, 0.114], dtype=np.float32))
    center = fn.reductions.sum(means * luma, axis_names="C", keep_dims=True)
    return fn.cast_like(center + (data - center) * parameter, data)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def color(data, parameter):
    return fn.saturation(data, saturation=parameter)


def sharpness_kernel(magnitude: float) -> np.ndarray:
    """PIL's smoothing kernel blended with identity; ``magnitude`` in [-1, 1]."""
    blur = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / 13
    ident = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=np.float32)
    return -magnitude * blur + (1 + magnitude) * ident


def sharpness_kernel_shifted(magnitude: float) -> np.ndarray:
    return sharpness_kernel(magnitude - 1)  # magnitude in [0, 2]


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=sharpness_kernel,
              param_device="auto")
def sharpness(data, kernel):
    return fn.filter(data, kernel)


def poster_mask_uint8(magnitude: float) -> np.ndarray:
    """The bits kept for a magnitude of 0..8 bits (0 counts as 1, as RandAugment does)."""
    bits = int(min(max(np.round(magnitude), 1), 8))
    return np.array(np.uint8(255) ^ np.uint8(2 ** (8 - bits) - 1), dtype=np.uint8)


@augmentation(mag_range=(0, 4), mag_to_param=poster_mask_uint8, param_device="auto")
def posterize(data, mask):
    return data & mask


@augmentation(mag_range=(256, 0), param_device="auto")
def solarize(data, threshold):
    inverted = types.Constant(255, dtype=types.UINT8) - data
    keep = data < threshold
    return keep * data + (keep ^ True) * inverted


def solarize_add_shift(shift: float) -> np.ndarray:
    if shift >= 128:
        raise ValueError("solarize_add takes shifts from 0 to 128")
    return np.uint8(shift)


@augmentation(mag_range=(0, 110), param_device="auto", mag_to_param=solarize_add_shift)
def solarize_add(data, shift):
    shifted = data < types.Constant(128, dtype=types.UINT8)
    return shifted * (data + shift) + (shifted ^ True) * data


@augmentation
def invert(data, _):
    return types.Constant(255, dtype=types.UINT8) - data


@augmentation
def equalize(data, _):
    return fn.equalize(data)


@augmentation
def auto_contrast(data, _):
    lo = fn.reductions.min(data, axis_names="HW", keep_dims=True)
    hi = fn.reductions.max(data, axis_names="HW", keep_dims=True)
    spread = hi - lo
    scaled = spread > 0
    # 255 / spread where the channel has a spread, 255 / 255 (no change) where it is flat
    divisor = spread * scaled + types.Constant(255, dtype=types.UINT8) * (scaled ^ True)
    return fn.cast_like((data - lo * scaled) * (255 / divisor), data)


@augmentation
def identity(data, _):
    return data


def max_translate_hw(limit: Any) -> tuple:
    if isinstance(limit, tuple | list):
        height, width = limit
        return height, width
    return limit, limit


def get_translations(use_shape: bool, default_abs: float, default_rel: float,
                     max_translate_abs: Any = None, max_translate_rel: Any = None) -> list:
    """translate_x and translate_y with the suite's range: relative to the image shape
    (``use_shape``) or in pixels."""
    if not isinstance(use_shape, bool):
        raise TypeError(f"use_shape must be True or False, got {use_shape!r}")
    if use_shape:
        if max_translate_abs is not None:
            raise ValueError("max_translate_abs cannot be used with image shapes; use "
                             "max_translate_rel")
        height, width = max_translate_hw(default_rel if max_translate_rel is None
                                         else max_translate_rel)
        return [translate_x.augmentation((0, width), True),
                translate_y.augmentation((0, height), True)]
    if max_translate_rel is not None:
        raise ValueError("max_translate_rel needs image shapes (shape=); use "
                         "max_translate_abs")
    height, width = max_translate_hw(default_abs if max_translate_abs is None
                                     else max_translate_abs)
    return [translate_x_no_shape.augmentation((0, width), True),
            translate_y_no_shape.augmentation((0, height), True)]
