"""TrivialAugment Wide (https://arxiv.org/abs/2103.10158): each sample gets one augmentation
of the wide suite, drawn uniformly, at a magnitude bin drawn uniformly."""

from __future__ import annotations

from typing import Any

from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import Augmentation, check_unused, select, signed_bin


def trivial_augment_wide(data: Any, num_magnitude_bins: int = 31, shape: Any = None,
                         fill_value: int | None = 128, interp_type: Any = None,
                         max_translate_abs: Any = None, max_translate_rel: Any = None,
                         seed: int | None = None, excluded: list[str] | None = None) -> Any:
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    suite = get_trivial_augment_wide_suite(shape is not None, max_translate_abs,
                                           max_translate_rel)
    return apply_trivial_augment(_without(suite, excluded, "TrivialAugmentWide"), data,
                                 num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs)


def _without(suite: list[Augmentation], excluded: list[str] | None, what: str) -> list:
    names = [aug.name for aug in suite]
    for name in excluded or []:
        if name not in names:
            raise ValueError(f"excluded names {name!r}, which the {what} suite lacks; it has "
                             f"{', '.join(names)}")
    return [aug for aug in suite if aug.name not in (excluded or [])]


def apply_trivial_augment(augmentations: list[Augmentation], data: Any,
                          num_magnitude_bins: int = 31, seed: int | None = None,
                          **kwargs: Any) -> Any:
    if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise ValueError(f"num_magnitude_bins must be a positive integer, got "
                         f"{num_magnitude_bins!r}")
    if not augmentations:
        raise ValueError("apply_trivial_augment: the augmentations list is empty")
    seed_arg = -1 if seed is None else seed
    magnitude_bin = fn.random.uniform(values=list(range(num_magnitude_bins)),
                                      dtype=types.INT32, seed=seed_arg)
    if any(aug.randomly_negate for aug in augmentations):
        magnitude_bin = signed_bin(magnitude_bin, seed=seed)
    check_unused(augmentations, kwargs, "apply_trivial_augment")
    op_index = fn.random.uniform(values=list(range(len(augmentations))), dtype=types.INT32,
                                 seed=seed_arg)
    return select(augmentations, op_index, data, magnitude_bin=magnitude_bin,
                  num_magnitude_bins=num_magnitude_bins, **kwargs)


def get_trivial_augment_wide_suite(use_shape: bool = False, max_translate_abs: Any = None,
                                   max_translate_rel: Any = None) -> list[Augmentation]:
    return a.get_translations(use_shape, 32, 1.0, max_translate_abs, max_translate_rel) + [
        a.shear_x.augmentation((0, 0.99), True),
        a.shear_y.augmentation((0, 0.99), True),
        a.rotate.augmentation((0, 135), True),
        a.brightness.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.contrast.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.color.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.sharpness.augmentation((0.01, 0.99), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 2), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),  # stronger as the threshold falls
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
