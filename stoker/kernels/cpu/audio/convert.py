"""Audio samples between integer types and normalized floats, as DALI's audio operators
convert them (fitted bit-exactly to DALI 2.4's audio_resample: tests/audio).

DALI resamples in the value domain of the *output* type: [-1, 1] for float and signed
outputs, [0, 1] for unsigned ones. So an input becomes float32 as ``v * (1 / max)`` (in
float32: int16 32767 is 1.0, -32768 is -1.00003; uint8 255 is 1.0), then moves to the
output's domain (``2 v - 1`` from unsigned to signed, ``(v + 1) / 2`` the other way), and
the result becomes the output type as ``round(f * max)`` (``max`` as a float32, so int32
scales by 2**31), rounded half away from zero and saturated. (A float signal resampled to
uint8 therefore rings at its ends, where the taps cut off a 0.5 level: DALI's output.)
libsndfile's own conversions (decoding straight to int16/int32) are libsndfile's.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.saturate import round_half_away


def is_unsigned(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "u"


def to_float(x: np.ndarray, unsigned_domain: bool = False) -> np.ndarray:
    """``x`` as float32 in [-1, 1] (or [0, 1] with ``unsigned_domain``)."""
    one, half = np.float32(1.0), np.float32(0.5)
    if x.dtype.kind == "f":
        f = x.astype(np.float32, copy=False)
        return (f + one) * half if unsigned_domain else f
    f = x.astype(np.float32) * (one / np.float32(np.iinfo(x.dtype).max))
    if is_unsigned(x.dtype) and not unsigned_domain:
        return f * np.float32(2.0) - one
    if not is_unsigned(x.dtype) and unsigned_domain:
        return (f + one) * half
    return f


def from_float(f: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float samples (in ``dtype``'s domain, see ``to_float``) as ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return f.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    r = round_half_away(f.astype(np.float64) * float(np.float32(info.max)))
    np.clip(r, info.min, info.max, out=r)
    return r.astype(dtype)
