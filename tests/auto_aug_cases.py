"""auto_aug cases, shared by the DALI recorder (tests/data/record/auto_aug.py) and the
replay (tests/auto_aug/test_auto_aug_vs_dali.py): each augmentation of the suites at fixed
magnitude bins and signs (deterministic, so outputs compare sample for sample), plus
fn.reductions and fn.filter, the operators the suite is built on."""

from __future__ import annotations

from typing import Any

import numpy as np

BATCH = 3


def images() -> list[np.ndarray]:
    """Smooth gradients with texture and a flat patch: every augmentation changes them."""
    rng = np.random.default_rng(7)
    out = []
    for k in range(BATCH):
        yy, xx = np.mgrid[0:16, 0:24]
        base = np.stack([xx * 8 + 20 * k, yy * 12, (xx + yy) * 5 + 30], axis=-1)
        img = np.clip(base + rng.integers(-12, 13, base.shape), 0, 255).astype(np.uint8)
        img[2:6, 3:9] = 77
        out.append(img)
    return out


# (augmentation name in the module, suite tweak (mag_range, randomly_negate), bins, signs)
AUGMENTATIONS = [
    ("shear_x", ((0, 0.3), True), [0, 5, 10], [0, 1]),
    ("shear_y", ((0, 0.99), True), [7], [0, 1]),
    ("translate_x_no_shape", ((0, 32), True), [3, 10], [0, 1]),
    ("translate_y_no_shape", ((0, 250), True), [1], [1]),
    ("rotate", ((0, 30), True), [4, 10], [0, 1]),
    ("brightness", ((0, 0.9), True), [0, 6, 10], [0, 1]),
    ("contrast", ((0, 0.9), True), [2, 10], [0, 1]),
    ("color", ((0, 0.9), True), [3, 10], [0, 1]),
    ("sharpness", ((0, 0.9), True), [5, 10], [0, 1]),
    ("posterize", ((0, 4), False), [0, 4, 10], [0]),
    ("solarize", ((256, 0), False), [0, 3, 10], [0]),
    ("solarize_add", ((0, 110), False), [2, 9], [0]),
    ("invert", None, [0], [0]),
    ("equalize", None, [0], [0]),
    ("auto_contrast", None, [0], [0]),
    ("identity", None, [0], [0]),
]
NUM_BINS = 11


def augmentation_case(A: Any, core: Any, fn: Any, types: Any, x: Any, name: str, bin_: int,
                      sign: int) -> Any:
    aug = getattr(A, name)
    spec = dict((n, s) for n, s, _, _ in AUGMENTATIONS)[name]
    if spec is None:
        return aug(x)
    mag_range, negate = spec
    aug = aug.augmentation(mag_range, negate)
    if negate:
        # A batch of the same sign (a random draw from one value: a DataNode in both
        # libraries, where a 0-d constant is not one in DALI).
        random_sign = fn.random.uniform(values=[sign], dtype=types.INT32)
        return aug(x, magnitude_bin=core.signed_bin(bin_, random_sign=random_sign),
                   num_magnitude_bins=NUM_BINS)
    return aug(x, magnitude_bin=bin_, num_magnitude_bins=NUM_BINS)


def case_names() -> list[tuple[str, int, int]]:
    return [(name, b, s) for name, _, bins, signs in AUGMENTATIONS for b in bins for s in signs]


OPS = {
    "mean_hw": lambda fn, types, x: fn.reductions.mean(x, axis_names="HW", keep_dims=True),
    "mean_all": lambda fn, types, x: fn.reductions.mean(x),
    "sum_c": lambda fn, types, x: fn.reductions.sum(x, axis_names="C"),
    "sum_float": lambda fn, types, x: fn.reductions.sum(fn.cast(x, dtype=types.FLOAT) * 0.37,
                                                        axes=[0, 1]),
    "min_hw": lambda fn, types, x: fn.reductions.min(x, axis_names="HW", keep_dims=True),
    "max_axes": lambda fn, types, x: fn.reductions.max(x, axes=[1]),
    "mean_int16": lambda fn, types, x: fn.reductions.mean(fn.cast(x, dtype=types.INT16) - 100,
                                                          axes=[0], dtype=types.FLOAT),
    "filter_sharpen": lambda fn, types, x: fn.filter(
        x, np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)),
    "filter_clamp_valid": lambda fn, types, x: fn.filter(
        x, np.full((3, 5), 1 / 15, np.float32), border="clamp", mode="valid"),
    "filter_wrap_anchor": lambda fn, types, x: fn.filter(
        x, np.arange(9, dtype=np.float32).reshape(3, 3) / 36, border="wrap", anchor=[0, 2]),
    "filter_float_out": lambda fn, types, x: fn.filter(
        x, np.array([[1, -2, 1]], np.float32), dtype=types.FLOAT, border="reflect_1001"),
}
