"""Element and running-window kernels of the audio family: decibels, pre-emphasis and the
non-silent region, as DALI 2.4 computes them (measured: tests/audio/test_signal.py).

* ``to_decibels``: ``multiplier * log10(max(min_ratio, x / reference))`` in float32,
  ``min_ratio = 10 ** (cutoff_db / multiplier)``, reference = the sample's maximum when not
  given (an all-zero sample then gives ``cutoff_db`` everywhere).
* ``preemphasis``: ``y[i] = x[i] - c * x[i-1]`` over the sample's values in memory order
  (a 2-D sample is filtered as one flat signal, as DALI does), ``x[-1]`` being ``x[0]``
  ("clamp"), 0 ("zero") or ``x[1]`` ("reflect"; 0 for one-sample signals). Float32
  arithmetic; integer outputs are rounded and saturated, not scaled.
* ``nonsilent_region``: the mean of ``x^2`` over the ``window`` samples ending at each
  sample, kept as a running float32 sum that is recomputed every ``reset_interval``
  samples (integers sum exactly). The sum's rounding residue after a loud part is part of
  DALI's answer (it can keep a quiet stretch "loud" until the next reset), so the sum is
  kept exactly as DALI keeps it. The region runs from the first full window at or above
  the threshold (``reference * 10^(cutoff_db / 10)``, reference = the loudest window when
  not given) to the end of the last one.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.jit import njit
from stoker.kernels.cpu.saturate import round_sat


def to_decibels(x: np.ndarray, multiplier: float, reference: float | None,
                cutoff_db: float) -> np.ndarray:
    x = np.asarray(x, np.float32)
    ref = float(x.max()) if reference is None and x.size else (reference or 0.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inverse = np.float32(1.0) / np.float32(ref)
        min_ratio = np.float32(10.0 ** (cutoff_db / multiplier)) if multiplier else \
            np.float32(0.0)
        # numpy's float32 log10 is vectorized (numba's calls libm per value: 4x slower).
        out = np.multiply(x, inverse, dtype=np.float32)
        np.fmax(out, min_ratio, out=out)  # fmax: NaN (0 / 0, an all-zero sample) -> floor
        np.log10(out, out=out)
        out *= np.float32(multiplier)
    return out




@njit(nogil=True, cache=True)
def _preemphasis(x, coeff, before, out):  # noqa: ANN001, ANN202
    previous = before
    for i in range(x.shape[0]):
        value = np.float32(x[i])
        out[i] = value - coeff * previous
        previous = value


def preemphasis(x: np.ndarray, coeff: float, border: str, dtype: np.dtype) -> np.ndarray:
    flat = np.ascontiguousarray(x).reshape(-1)
    out = buffers.empty(flat.shape, np.float32)
    if flat.size:
        if border == "clamp":
            before = np.float32(flat[0])
        elif border == "reflect" and flat.size > 1:
            before = np.float32(flat[1])
        else:
            before = np.float32(0.0)
        _preemphasis(flat, np.float32(coeff), before, out)
    return round_sat(out, dtype).reshape(x.shape)


@njit(nogil=True, cache=True)
def _moving_power_float(x, window, reset, out):  # noqa: ANN001, ANN202
    # out[i]: the sum of squares of the window ending at sample i + window - 1.
    n = x.shape[0]
    total = np.float32(0.0)
    for end in range(n):
        if end % reset == 0:
            total = np.float32(0.0)
            for i in range(max(0, end - window + 1), end + 1):
                total += x[i] * x[i]
        else:
            # Add the new square, then take the old one off: two roundings, as DALI
            # rounds (one subtraction first moves where long quiet stretches end).
            total += x[end] * x[end]
            leaving = end - window
            if leaving >= 0:
                total -= x[leaving] * x[leaving]
        if end >= window - 1:
            out[end - window + 1] = total


@njit(nogil=True, cache=True)
def _moving_power_int(x, window, out):  # noqa: ANN001, ANN202
    n = x.shape[0]
    total = 0
    for end in range(n):
        v = np.int64(x[end])
        total += v * v
        if end >= window:
            w = np.int64(x[end - window])
            total -= w * w
        if end >= window - 1:
            out[end - window + 1] = total


def nonsilent_region(x: np.ndarray, cutoff_db: float, window: int, reference: float,
                     reset_interval: int) -> tuple[int, int]:
    """(begin, length) of the non-silent part of a 1-D signal (length 0: all silent)."""
    n = x.shape[0]
    if n == 0:
        return 0, 0
    window = min(window, n)
    count = n - window + 1
    if x.dtype.kind in "iub":
        sums = np.empty(count, np.int64)
        _moving_power_int(x, window, sums)
        power = sums.astype(np.float64) / window
    else:
        sums32 = np.empty(count, np.float32)
        reset = reset_interval if reset_interval > 0 else n + 1
        _moving_power_float(np.ascontiguousarray(x, np.float32), window, reset, sums32)
        power = sums32 * np.float32(1.0 / window)
    ref = power.max() if reference <= 0 else reference
    threshold = ref * 10.0 ** (cutoff_db / 10.0)
    loud = np.flatnonzero(power >= threshold)
    if loud.size == 0:
        return 0, 0
    begin = int(loud[0])
    return begin, int(loud[-1]) + window - begin
