"""``fn.power_spectrum``: the power (or magnitude) of the real FFT along one axis.

Each float32 sample is transformed along 'axis' (default: the last; negative counts from
the back) with 'nfft' points (default 0 or none: the axis's extent; a shorter nfft cuts
the signal, a longer one pads it with zeros); the output keeps the other axes and has
nfft // 2 + 1 bins along 'axis': |X|^2 with power=2 (default), |X| with power=1. DALI
2.4 facts, measured: only float32 inputs; other powers, out-of-range axes and FFT sizes
under 3 are errors; the layout is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema


def power_spectrum_sample(ins: list, args: dict, ctx: Any, lead: int = 0) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.dtype != np.float32:
        raise TypeError(f"expects float32 signals, got {x.dtype.name}")
    ndim = x.ndim - lead
    axis = int(args["axis"])
    if not -ndim <= axis < ndim:
        raise ValueError(f"'axis' {axis} is out of range for {ndim}-D samples")
    axis = axis % ndim + lead
    nfft = args.get("nfft") or x.shape[axis]
    if nfft < 3:  # DALI 2.4's FFT refuses smaller sizes at run time (measured)
        raise ValueError(f"the FFT size must be at least 3, got {nfft} (give 'nfft' or a "
                         "longer axis)")
    from stoker.kernels.cpu.audio.spectrogram import rfft  # (loads numba: on first use)

    spectrum = rfft(x, n=int(nfft), axis=axis)  # (float32 throughout, as DALI's)
    re, im = spectrum.real, spectrum.imag
    power = re * re + im * im  # |X|^2 without the square root np.abs would take
    if int(args["power"]) == 1:
        np.sqrt(power, out=power)
    return power.astype(np.float32, copy=False)


def _check(args: dict) -> None:
    if args.get("power") not in (1, 2):
        raise ArgumentError(f"fn.power_spectrum: argument 'power' must be 2 (power spectrum) "
                            f"or 1 (magnitude), got {args.get('power')!r}")
    if (args.get("nfft") or 0) < 0:
        raise ArgumentError(f"fn.power_spectrum: argument 'nfft' must not be negative, got "
                            f"{args['nfft']}")


_RNG = np.random.default_rng(21)
_SIG = [_RNG.normal(size=(3, 16)).astype(np.float32),
        _RNG.normal(size=(2, 9)).astype(np.float32)]

register(OpSchema(
    name="power_spectrum",
    doc="Power spectrum (|FFT|^2) or magnitude (|FFT|) of real signals along one axis.",
    inputs=(Input("input", "float32 signals."),),
    args=(Arg("axis", "int", -1, "Axis to transform (negative counts from the back)."),
          Arg("nfft", "int", None, "FFT size (default: the axis's extent); the output has "
              "nfft // 2 + 1 bins."),
          Arg("power", "int", 2, "2: power spectrum; 1: magnitude.")),
    kernel=power_spectrum_sample,
    batch_kernel=lambda ins, a, c: power_spectrum_sample(ins, a, c, 1),
    check=_check, dtype=lambda d, a: np.dtype(np.float32),
    examples=(
        Example(inputs=(_SIG,)),
        Example(args={"nfft": 10, "power": 1, "axis": 0}, inputs=([_SIG[0]] * 2,)),
        Example(args={"power": 3}, inputs=(_SIG,), raises=ArgumentError,
                match="'power' must be 2"),
        Example(args={"axis": 2}, inputs=(_SIG,), raises=RuntimeError,
                match="'axis' 2 is out of range"),
        Example(inputs=([x.astype(np.int16) for x in _SIG],), raises=RuntimeError,
                match="expects float32 signals"),
    ),
))
