"""The random crop window of ``crop_window.py`` as one compiled call (numba, GIL released)."""

from __future__ import annotations

import math

from stoker.kernels.cpu.jit import njit
from stoker.kernels.cpu.random.rng_loop import stream_base, stream_draw


@njit(nogil=True, cache=True)
def window_loop(seed, index, h, w, a_lo, a_hi, min_ratio, max_ratio, attempts):  # pragma: no cover
    """``crop_window.random_crop_window`` for the stream of (salted seed, index)."""
    if h <= 0 or w <= 0:
        return 0, 0, 0, 0
    base = stream_base(seed, index)
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
            target = h * w * (a_lo + (a_hi - a_lo) * stream_draw(base, k + 1))
            aspect = math.exp(log_lo + r_span * stream_draw(base, k + 2))
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
    y = int(stream_draw(base, k + 1) * (h - ch + 1))
    x = int(stream_draw(base, k + 2) * (w - cw + 1))
    return y, x, ch, cw


@njit(nogil=True, cache=True, inline="always")
def _round_half_away(v):  # pragma: no cover - compiled
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
