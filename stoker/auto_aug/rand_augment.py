"""RandAugment (https://arxiv.org/abs/1909.13719): each sample gets ``n`` augmentations in a
row, each drawn uniformly from the suite, all at magnitude bin ``m``."""

from __future__ import annotations

import warnings
from typing import Any

from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import Augmentation, check_unused, select, signed_bin
from stoker.auto_aug.trivial_augment import _without


def rand_augment(data: Any, n: int, m: int, num_magnitude_bins: int = 31, shape: Any = None,
                 fill_value: int | None = 128, interp_type: Any = None,
                 max_translate_abs: Any = None, max_translate_rel: Any = None,
                 seed: int | None = None, monotonic_mag: bool = True,
                 excluded: list[str] | None = None) -> Any:
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    make = get_rand_augment_suite if monotonic_mag else get_rand_augment_non_monotonic_suite
    suite = make(shape is not None, max_translate_abs, max_translate_rel)
    return apply_rand_augment(_without(suite, excluded, "RandAugment"), data, n, m,
                              num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs)


def apply_rand_augment(augmentations: list[Augmentation], data: Any, n: int, m: int,
                       num_magnitude_bins: int = 31, seed: int | None = None,
                       **kwargs: Any) -> Any:
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n (operations per sample) must be a non-negative integer, got {n!r}")
    if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise ValueError(f"num_magnitude_bins must be a positive integer, got "
                         f"{num_magnitude_bins!r}")
    if not isinstance(m, int) or not 0 <= m < num_magnitude_bins:
        raise ValueError(f"m (the magnitude bin) must be an integer in [0, "
                         f"{num_magnitude_bins - 1}], got {m!r}")
    if n == 0:
        warnings.warn("apply_rand_augment with n=0 applies no augmentation", stacklevel=2)
        return data
    if not augmentations:
        raise ValueError("apply_rand_augment: the augmentations list is empty")
    seed_arg = -1 if seed is None else seed
    shape = () if n == 1 else (n,)
    op_index = fn.random.uniform(values=list(range(len(augmentations))), shape=shape or None,
                                 dtype=types.INT32, seed=seed_arg)
    signed = any(aug.randomly_negate for aug in augmentations)
    magnitude_bin = signed_bin(m, seed=seed, shape=shape or None) if signed else m
    check_unused(augmentations, kwargs, "apply_rand_augment")
    for level in range(n):
        level_bin = magnitude_bin if not signed or n == 1 else magnitude_bin[level]
        level_index = op_index if n == 1 else op_index[level]
        data = select(augmentations, level_index, data, magnitude_bin=level_bin,
                      num_magnitude_bins=num_magnitude_bins, **kwargs)
    return data


def get_rand_augment_suite(use_shape: bool = False, max_translate_abs: Any = None,
                           max_translate_rel: Any = None) -> list[Augmentation]:
    return a.get_translations(use_shape, 100, 100 / 224, max_translate_abs,
                              max_translate_rel) + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.contrast.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.color.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.sharpness.augmentation((0, 0.9), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]


def get_rand_augment_non_monotonic_suite(use_shape: bool = False,
                                         max_translate_abs: Any = None,
                                         max_translate_rel: Any = None) -> list[Augmentation]:
    """AutoAugment's magnitude ranges for the enhance, posterize and solarize operations
    (their strength does not grow with the bin)."""
    return a.get_translations(use_shape, 100, 100 / 224, max_translate_abs,
                              max_translate_rel) + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0.1, 1.9), False, None),
        a.contrast.augmentation((0.1, 1.9), False, None),
        a.color.augmentation((0.1, 1.9), False, None),
        a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((0, 256), False, None),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
