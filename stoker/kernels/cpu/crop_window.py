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

import math

import numpy as np

from stoker.kernels.cpu.jit import njit
from stoker.kernels.cpu.rng_loop import _GOLDEN, _S11, _SCALE, _mix

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
    y, x, ch, cw = _window(np.uint64((seed ^ STREAM_SALT) & 0xFFFFFFFFFFFFFFFF),
                           np.uint64(index & 0xFFFFFFFFFFFFFFFF), int(h), int(w),
                           float(area[0]), float(area[1]), float(ratio[0]), float(ratio[1]),
                           int(attempts))
    return int(y), int(x), int(ch), int(cw)


@njit(nogil=True, cache=True)
def _window(seed, index, h, w, a_lo, a_hi, min_ratio, max_ratio, attempts):  # pragma: no cover
    if h <= 0 or w <= 0:
        return 0, 0, 0, 0
    base = _mix(index * _GOLDEN ^ seed)
    k = 0  # draws made
    min_area = w * h * a_lo
    max_w = max(1, int(h * max_ratio))  # widest window of a permitted ratio
    max_h = max(1, int(w / min_ratio))  # tallest one
    if h * max_w < min_area:  # too wide: no window of the minimum area has a valid ratio
        ch, cw = h, max_w
    elif w * max_h < min_area:  # too tall
        ch, cw = max_h, w
    else:
        log_lo = math.log(min_ratio)
        r_span = math.log(max_ratio) - log_lo
        found = False
        ch, cw = h, w
        for _ in range(attempts):
            target = h * w * (a_lo + (a_hi - a_lo) * _draw(base, k + 1))
            aspect = math.exp(log_lo + r_span * _draw(base, k + 2))
            k += 2
            cw = max(1, _round_half_away(math.sqrt(target * aspect)))
            ch = max(1, _round_half_away(math.sqrt(target / aspect)))
            if cw <= w and ch <= h and min_ratio <= cw / ch <= max_ratio:
                found = True
                break
        if not found:
            in_ratio = w / h
            if in_ratio > max_ratio:
                ch, cw = h, max_w
            elif in_ratio < min_ratio:
                ch, cw = max_h, w
            else:
                ch, cw = h, w
            shrink = math.sqrt(min(1.0, a_hi * w * h / (ch * cw)))
            ch, cw = max(1, int(ch * shrink)), max(1, int(cw * shrink))
    y = int(_draw(base, k + 1) * (h - ch + 1))
    x = int(_draw(base, k + 2) * (w - cw + 1))
    return y, x, ch, cw


@njit(nogil=True, cache=True, inline="always")
def _draw(base, k):  # pragma: no cover - compiled
    """Draw k of the stream whose base is ``base``, in [0, 1) (as ``uniform01_loop``)."""
    return np.float64(_mix(base + np.uint64(k) * _GOLDEN) >> _S11) * _SCALE


@njit(nogil=True, cache=True, inline="always")
def _round_half_away(v):  # pragma: no cover - compiled
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
