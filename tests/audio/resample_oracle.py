"""DALI 2.4's resampling arithmetic tap by tap: the test oracle for stoker's resampler.

stoker's kernel (stoker/kernels/cpu/audio/resample.py) finds each output's table position
once; DALI finds every tap's anew in float32 and sums the taps in four interleaved float32
lanes (its SSE loop), the leftover taps one by one. This module does exactly that, slowly,
to show where the two differ: it matches DALI's recorded outputs within one or two float32
steps (bit for bit at integer rate ratios), and stoker matches it within the rounding of
the table positions.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stoker.kernels.cpu.audio.resample import lobes_for_quality, resampled_length, window_table


@numba.njit(inline="always")
def _tap(table, slopes, center, d):  # noqa: ANN001, ANN202
    fi = d * np.float32(32.0) + center
    i = np.uint32(fi)
    return table[i] + (fi - np.float32(i)) * slopes[i]


@numba.njit
def _mono(x, out, scale, lobes, table, slopes, center):  # noqa: ANN001, ANN202
    n, n_out = x.shape[0], out.shape[0]
    fscale, four, one = np.float32(scale), np.float32(4.0), np.float32(1.0)
    for b0 in range(0, n_out, 256):
        start = b0 * scale
        base = int(math.floor(start))
        pos = np.float32(start - base)
        for j in range(b0, min(b0 + 256, n_out)):
            c = int(math.ceil(pos))
            lo, hi = max(c - lobes, -base), min(c + lobes, n - base)
            taps = x[base + lo:base + hi]
            m = hi - lo
            lanes = np.zeros(4, np.float32)
            d = np.array([np.float32(lo + k) - pos for k in range(4)], np.float32)
            t = 0
            while t + 3 < m:
                for k in range(4):
                    lanes[k] += taps[t + k] * _tap(table, slopes, center, d[k])
                    d[k] += four
                t += 4
            acc = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])
            dd = np.float32(lo + t) - pos
            while t < m:
                acc += taps[t] * _tap(table, slopes, center, dd)
                dd += one
                t += 1
            out[j] = acc
            pos += fscale


def resample_like_dali(x: np.ndarray, in_rate: float, out_rate: float,
                       quality: float = 50.0) -> np.ndarray:
    """A mono float32 signal resampled with DALI's per-tap arithmetic."""
    x = np.ascontiguousarray(x, np.float32)
    out = np.empty(resampled_length(len(x), in_rate, out_rate), np.float32)
    lobes = lobes_for_quality(quality)
    table, slopes = window_table(lobes)
    _mono(x, out, float(in_rate) / float(out_rate), lobes, table, slopes,
          np.float32(32 * lobes + 1))
    return out
