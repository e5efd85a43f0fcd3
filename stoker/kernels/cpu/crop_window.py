"""Inception-style random crop windows (area fraction and aspect ratio drawn from ranges)."""

from __future__ import annotations

import math

import numpy as np


def random_crop_window(gen: np.random.Generator, h: int, w: int, area: list[float],
                       ratio: list[float], attempts: int) -> tuple[int, int, int, int]:
    """(y, x, height, width) of a window inside an h x w image.

    Tries ``attempts`` draws of (area fraction, log-uniform aspect ratio); when none fits,
    falls back to the largest centered window whose aspect ratio is clamped to the range.
    """
    if h <= 0 or w <= 0:
        return 0, 0, max(h, 0), max(w, 0)
    total = h * w
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(attempts):
        target = total * gen.uniform(area[0], area[1])
        aspect = math.exp(gen.uniform(log_lo, log_hi))
        cw = int(round(math.sqrt(target * aspect)))
        ch = int(round(math.sqrt(target / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            y = int(gen.integers(0, h - ch + 1))
            x = int(gen.integers(0, w - cw + 1))
            return y, x, ch, cw
    in_ratio = w / h
    if in_ratio < ratio[0]:
        cw, ch = w, int(round(w / ratio[0]))
    elif in_ratio > ratio[1]:
        ch, cw = h, int(round(h * ratio[1]))
    else:
        cw, ch = w, h
    ch, cw = max(1, min(ch, h)), max(1, min(cw, w))
    return (h - ch) // 2, (w - cw) // 2, ch, cw
