"""Short-time Fourier spectrograms as DALI's ``fn.spectrogram`` computes them.

The frames of a signal are a strided view; one windowed multiply into a zero-padded
``(frames, nfft)`` buffer and one batched real FFT (scipy's pocketfft, 4x faster than
numpy's on float32 here, and it releases the GIL) cover the whole signal, then one numba
pass takes the power and transposes. No Python runs per frame. DALI's rules, measured on
2.4:

* Centred windows: ``n // step + 1`` frames, frame t centred on sample ``t * step`` (it
  starts ``window_length // 2`` earlier); samples outside the signal mirror it (reflect
  without repeating the edge, bouncing as often as needed) or are zeros.
* Not centred: ``(n - window_length) / step + 1`` frames, the division truncated toward
  zero as in C (a signal shorter than its window still gets one frame when the shortfall
  is under a step), reading zeros past the end; fewer than one frame is an error.
* The default window is DALI's Hann, sampled half a sample off: ``0.5 - 0.5 cos(2 pi
  (t + 0.5) / N)``; a window shorter than ``nfft`` is zero-padded (placement does not
  change magnitudes).
* ``power`` 2 gives ``|X|^2``, 1 gives ``|X|``; output float32 ``(nfft // 2 + 1, frames)``
  ("ft") or its transpose ("tf").
"""

from __future__ import annotations

import functools

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.jit import njit


@functools.lru_cache(maxsize=64)
def hann_window(length: int) -> np.ndarray:
    """DALI's default window (read-only float32)."""
    t = np.arange(length, dtype=np.float64)
    w = (0.5 - 0.5 * np.cos(2.0 * np.pi * (t + 0.5) / length)).astype(np.float32)
    w.flags.writeable = False
    return w


def frame_count(n: int, window_length: int, step: int, center: bool) -> int:
    """Frames DALI extracts from ``n`` samples (may be < 1 when not centred)."""
    if center:
        return n // step + 1
    return int((n - window_length) / step) + 1  # C division: truncates toward zero


def reflect_indices(idx: np.ndarray, n: int) -> np.ndarray:
    """Indices mirrored into ``[0, n)`` without repeating the edge samples (reflect-101),
    as often as needed."""
    if n == 1:
        return np.zeros_like(idx)
    period = 2 * (n - 1)
    idx = np.abs(idx) % period
    return np.where(idx >= n, period - idx, idx)


def padded_signal(x: np.ndarray, frames: int, window_length: int, step: int,
                  center: bool, reflect: bool) -> np.ndarray:
    """The samples every frame reads, frame t starting at ``t * step``."""
    n = x.shape[0]
    need = (frames - 1) * step + window_length
    left = window_length // 2 if center else 0
    if left == 0 and need <= n:
        return x
    right = max(0, need - left - n)
    if reflect and center:
        if left < n and right < n - 1:  # one bounce each side: mirror the ends only
            return np.concatenate([x[left:0:-1], x, x[n - 2:n - 2 - right:-1]])[:need]
        return x[reflect_indices(np.arange(need) - left, n)]
    out = np.zeros(need, np.float32)
    hi = min(need, left + n)
    out[left:hi] = x[:hi - left]
    return out


@njit(nogil=True, cache=True)
def _power(spectrum, out, magnitude, frequency_first):  # noqa: ANN001, ANN202
    # spectrum: (frames, bins, 2) float32 (re, im); out: (bins, frames) or (frames, bins).
    for t in range(spectrum.shape[0]):
        for f in range(spectrum.shape[1]):
            re = spectrum[t, f, 0]
            im = spectrum[t, f, 1]
            v = re * re + im * im
            if magnitude:
                v = np.sqrt(v)
            if frequency_first:
                out[f, t] = v
            else:
                out[t, f] = v


def rfft(x: np.ndarray, n: int | None = None, axis: int = 1) -> np.ndarray:
    """The real FFT of float32 ``x`` along ``axis`` (``n`` points), as complex64."""
    try:
        import scipy.fft
    except ImportError:  # numpy's is slower on float32, but gives the same values
        return np.fft.rfft(x, n=n, axis=axis).astype(np.complex64, copy=False)
    return scipy.fft.rfft(x, n=n, axis=axis)


def spectrogram(x: np.ndarray, nfft: int, window_length: int, step: int,
                window: np.ndarray, power: int, center: bool, reflect: bool,
                layout: str) -> np.ndarray:
    """The spectrogram of a 1-D float32 signal (see the module docstring)."""
    n = x.shape[0]
    frames = frame_count(n, window_length, step, center)
    if frames < 1:
        raise ValueError(f"the signal ({n} samples) is shorter than one window "
                         f"({window_length} samples) and windows are not centred")
    signal = padded_signal(x, frames, window_length, step, center, reflect)
    view = np.lib.stride_tricks.as_strided(
        signal, (frames, window_length), (signal.strides[0] * step, signal.strides[0]),
        writeable=False)
    buf = np.zeros((frames, nfft), np.float32)
    np.multiply(view, window, out=buf[:, :window_length])
    spectrum = np.ascontiguousarray(rfft(buf), np.complex64)
    bins = nfft // 2 + 1
    out = buffers.empty((bins, frames) if layout == "ft" else (frames, bins), np.float32)
    _power(spectrum.view(np.float32).reshape(frames, bins, 2), out, power == 1,
           layout == "ft")
    return out
