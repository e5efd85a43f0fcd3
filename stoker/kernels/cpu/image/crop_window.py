"""Inception-style random crop windows (area fraction and aspect ratio drawn from ranges).

The rules follow DALI 2.4's random crop generator (used by random_resized_crop, the
decoders' random crop and random_crop_generator): which windows are accepted, the
fallback after ``attempts`` failures and the rounding. The random numbers are stoker's
own counter stream for (operator seed, sample index), so windows match DALI's in
distribution, not value.

The draw is one compiled call: in a pipeline, between two image decodes, a Python version
drawing from a numpy Generator cost about 30 us per sample (its caches gone cold), as much
as a sixth of the glue around the native work of the ResNet-50 train chain.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops

# Keeps the window's draws apart from the operator's other uniform draws for the sample
# (``rng.uniform01(seed, ...)``): the stream is uniform01's for seed ^ STREAM_SALT.
STREAM_SALT = 0x5A17C0DE5A17C0DE


def random_crop_window(seed: int, index: int, h: int, w: int, area: list[float],
                       ratio: list[float], attempts: int) -> tuple[int, int, int, int]:
    """(y, x, height, width) of a window inside an h x w image, for sample ``index`` of an
    operator seeded ``seed``.

    Each attempt draws an area fraction uniformly from ``area`` and a width/height ratio
    log-uniformly from ``ratio``; sides are rounded, and the window is accepted when it
    fits and its rounded ratio is still in range. An image too wide (or too tall) for any
    window of the minimum area in range gets the full-height (full-width) window of the
    extreme ratio at once. After ``attempts`` failures the window is the whole image, its
    ratio clamped to the range and its area capped at ``area[1]``. The position is uniform
    over all positions where the window fits (in every case, as in DALI).

    Draw k (from 1) is ``rng.uniform01(seed ^ STREAM_SALT, [index], k)[0, k - 1]``: two per
    attempt (area, then ratio), then one per anchor (y, then x), an anchor in [0, n) being
    floor(u * n).
    """
    window_loop = loops("image.crop_window_loop").window_loop

    y, x, ch, cw = window_loop(*window_stream(seed, index), int(h), int(w), float(area[0]),
                               float(area[1]), float(ratio[0]), float(ratio[1]), int(attempts))
    return int(y), int(x), int(ch), int(cw)


def window_stream(seed: int, index: int) -> tuple[np.uint64, np.uint64]:
    """The (salted seed, index) arguments of ``crop_window_loop.window_loop``."""
    return np.uint64((seed ^ STREAM_SALT) & 0xFFFFFFFFFFFFFFFF), \
        np.uint64(index & 0xFFFFFFFFFFFFFFFF)
