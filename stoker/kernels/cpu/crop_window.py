"""Inception-style random crop windows (area fraction and aspect ratio drawn from ranges).

The rules follow DALI 2.4's random crop generator (used by random_resized_crop, the
decoders' random crop and random_crop_generator): which windows are accepted, the
fallback after ``attempts`` failures and the rounding. The random numbers themselves come
from stoker's per-sample generator, so windows match DALI's in distribution, not value.
"""

from __future__ import annotations

import math

import numpy as np


def random_crop_window(gen: np.random.Generator, h: int, w: int, area: list[float],
                       ratio: list[float], attempts: int) -> tuple[int, int, int, int]:
    """(y, x, height, width) of a window inside an h x w image.

    Each attempt draws an area fraction uniformly from ``area`` and a width/height ratio
    log-uniformly from ``ratio``; sides are rounded, and the window is accepted when it
    fits and its rounded ratio is still in range. An image too wide (or too tall) for any
    window of the minimum area in range gets the full-height (full-width) window of the
    extreme ratio at once. After ``attempts`` failures the window is the whole image, its
    ratio clamped to the range and its area capped at ``area[1]``. The position is uniform
    over all positions where the window fits (in every case, as in DALI).
    """
    if h <= 0 or w <= 0:
        return 0, 0, 0, 0
    min_ratio, max_ratio = float(ratio[0]), float(ratio[1])
    min_area = w * h * float(area[0])
    max_w = max(1, int(h * max_ratio))  # widest window of a permitted ratio
    max_h = max(1, int(w / min_ratio))  # tallest one
    if h * max_w < min_area:  # too wide: no window of the minimum area has a valid ratio
        ch, cw = h, max_w
    elif w * max_h < min_area:  # too tall
        ch, cw = max_h, w
    else:
        log_lo, log_hi = math.log(min_ratio), math.log(max_ratio)
        a_lo, a_span, r_span = float(area[0]), float(area[1]) - float(area[0]), log_hi - log_lo
        for _ in range(attempts):
            # gen.uniform(lo, hi) is lo + (hi - lo) * gen.random(): the same values from
            # the same stream, for a third of the call's cost
            target = h * w * (a_lo + a_span * gen.random())
            aspect = math.exp(log_lo + r_span * gen.random())
            cw = max(1, _round_half_away(math.sqrt(target * aspect)))
            ch = max(1, _round_half_away(math.sqrt(target / aspect)))
            if cw <= w and ch <= h and min_ratio <= cw / ch <= max_ratio:
                break
        else:
            in_ratio = w / h
            if in_ratio > max_ratio:
                ch, cw = h, max_w
            elif in_ratio < min_ratio:
                ch, cw = max_h, w
            else:
                ch, cw = h, w
            shrink = math.sqrt(min(1.0, float(area[1]) * w * h / (ch * cw)))
            ch, cw = max(1, int(ch * shrink)), max(1, int(cw * shrink))
    y = int(gen.integers(0, h - ch + 1))
    x = int(gen.integers(0, w - cw + 1))
    return y, x, ch, cw


def _round_half_away(v: float) -> int:
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
