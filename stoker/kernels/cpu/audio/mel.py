"""Mel filter banks as DALI's ``fn.mel_filter_bank`` builds and applies them.

The filters are triangles on the linear frequency axis whose corners are ``nfilter + 2``
points spaced evenly on the mel scale between ``freq_low`` and ``freq_high`` (the sample
rate's Nyquist frequency when 0): librosa's ``filters.mel`` construction, which DALI 2.4's
filters equal within 1.2e-5 of their largest weight (measured, tests/audio). ``normalize``
divides each triangle by its width in Hz / 2 (unit area, librosa's "slaney" norm); the
"slaney" scale is linear below 1 kHz and logarithmic above, "htk" is
``2595 log10(1 + f / 700)``.

Applying the bank touches only each filter's band (a triangle spans a few FFT bins), not a
dense ``(nfilter, nbins)`` product: a numba loop over the bands, rows of frames at a time.
"""

from __future__ import annotations

import functools

import numpy as np

from stoker.kernels.cpu.jit import njit

_LOG_STEP = np.log(6.4) / 27.0  # slaney: mel steps above 1 kHz


def hz_to_mel(f: np.ndarray, htk: bool) -> np.ndarray:
    f = np.asarray(f, np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    with np.errstate(divide="ignore"):
        log_part = 15.0 + np.log(np.maximum(f, 1e-300) / 1000.0) / _LOG_STEP
    return np.where(f >= 1000.0, log_part, 3.0 * f / 200.0)


def mel_to_hz(m: np.ndarray, htk: bool) -> np.ndarray:
    m = np.asarray(m, np.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return np.where(m >= 15.0, 1000.0 * np.exp(_LOG_STEP * (m - 15.0)), 200.0 * m / 3.0)


@functools.lru_cache(maxsize=64)
def mel_bank(nbins: int, sample_rate: float, nfilter: int, freq_low: float,
             freq_high: float, normalize: bool, htk: bool) -> tuple[np.ndarray, np.ndarray]:
    """(weights float32 (nfilter, nbins), bands int64 (nfilter, 2)): each filter's weights
    and the [first, last + 1) bins where they are not zero. Read-only (cached)."""
    high = sample_rate / 2.0 if freq_high <= 0 else freq_high
    nfft = 2 * (nbins - 1)
    freqs = np.arange(nbins) * (sample_rate / max(nfft, 1))
    corners = mel_to_hz(np.linspace(hz_to_mel(freq_low, htk), hz_to_mel(high, htk),
                                    nfilter + 2), htk)
    lower, center, upper = corners[:-2, None], corners[1:-1, None], corners[2:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        rising = (freqs - lower) / (center - lower)
        falling = (upper - freqs) / (upper - center)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights = np.nan_to_num(weights)
    if normalize:
        weights *= 2.0 / (upper - lower)
    weights = weights.astype(np.float32)
    bands = np.zeros((nfilter, 2), np.int64)
    for m in range(nfilter):
        nonzero = np.flatnonzero(weights[m])
        if nonzero.size:
            bands[m] = nonzero[0], nonzero[-1] + 1
    weights.flags.writeable = False
    bands.flags.writeable = False
    return weights, bands


@njit(nogil=True, cache=True)
def _apply(weights, bands, spec, out):  # noqa: ANN001, ANN202
    # spec: (outer, nbins, inner) -> out: (outer, nfilter, inner); inner is contiguous.
    for o in range(spec.shape[0]):
        for m in range(weights.shape[0]):
            row = out[o, m]
            row[:] = 0.0
            for k in range(bands[m, 0], bands[m, 1]):
                w = weights[m, k]
                src = spec[o, k]
                for t in range(row.shape[0]):
                    row[t] += w * src[t]


def apply_mel(spec: np.ndarray, axis: int, weights: np.ndarray,
              bands: np.ndarray) -> np.ndarray:
    """The filter bank applied along ``axis`` of float32 ``spec`` (float32 out)."""
    shape = spec.shape
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    src = np.ascontiguousarray(spec, np.float32).reshape(outer, shape[axis], inner)
    out = np.empty((outer, weights.shape[0], inner), np.float32)
    _apply(weights, bands, src, out)
    return out.reshape(*shape[:axis], weights.shape[0], *shape[axis + 1:])
