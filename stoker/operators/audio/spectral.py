"""``spectrogram``, ``mel_filter_bank``, ``mfcc`` and ``to_decibels``: the spectral front end
of speech pipelines, with DALI 2.4's arguments, defaults, layouts and numbers (kernels:
``stoker/kernels/cpu/audio/``; replayed against DALI in tests/audio/test_audio_vs_dali.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.kernels.cpu.audio.mfcc import mfcc
from stoker.kernels.cpu.compiled import loops
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_F32 = np.dtype(np.float32)


def float32_input(x: np.ndarray) -> np.ndarray:
    """The sample, which DALI's spectral operators take as float32 only."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise ValueError(f"expects float32 data, got {x.dtype}")
    return x


# -- spectrogram --------------------------------------------------------------------------------


def spectrogram_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = float32_input(ins[0])
    if x.ndim == 2 and 1 in x.shape:
        x = x.reshape(-1)
    if x.ndim != 1:
        raise ValueError(f"expects a 1-channel signal, (length,), (length, 1) or (1, length); "
                         f"got shape {x.shape}")
    if x.shape[0] == 0:
        raise ValueError("the signal is empty (zero-length audio)")
    win = args["window_length"]
    window = loops("audio.spectrogram").hann_window(win) if args.get("window_fn") is None else \
        np.asarray(args["window_fn"], np.float32)
    return loops("audio.spectrogram").spectrogram(
        x, args.get("nfft") or win, win, args["window_step"], window, args["power"],
        args["center_windows"], args["reflect_padding"], args["layout"])


def _check_spectrogram(args: dict) -> None:
    win, nfft = args["window_length"], args.get("nfft")
    if (nfft or win) < 3:  # DALI's FFT library cannot plan 1 or 2 points (it fails at run)
        raise ArgumentError(f"fn.spectrogram: the FFT size (nfft, or window_length when nfft "
                            f"is not given) must be at least 3, got {nfft or win}")
    if nfft is not None and nfft < win:
        raise ArgumentError(f"fn.spectrogram: argument 'nfft' ({nfft}) must be at least "
                            f"'window_length' ({win})")
    fn_values = args.get("window_fn")
    if fn_values is not None and len(fn_values) != win:
        raise ArgumentError(f"fn.spectrogram: argument 'window_fn' has {len(fn_values)} "
                            f"values; it must have window_length={win}")


_SIGNALS = [np.sin(np.arange(700, dtype=np.float32) / 3),
            np.cos(np.arange(333, dtype=np.float32) / 9) * 0.5]

register(OpSchema(
    name="spectrogram",
    doc="Short-time Fourier power (or magnitude) spectrogram of a 1-channel float32 "
        "signal: (nfft // 2 + 1, frames) for layout 'ft', frames first for 'tf'.",
    inputs=(Input("input", "A float32 signal: (length,), (length, 1) or (1, length)."),),
    args=(Arg("nfft", "int", None, "FFT size (default: window_length); at least "
              "window_length.", range=(1, None)),
          Arg("window_length", "int", 512, "Window size in samples.", range=(1, None)),
          Arg("window_step", "int", 256, "Samples between window starts.", range=(1, None)),
          Arg("window_fn", "floats", None, "The window's window_length values (default: "
              "DALI's Hann, 0.5 - 0.5 cos(2 pi (t + 0.5) / window_length))."),
          Arg("power", "int", 2, "2: power spectrum |X|^2; 1: magnitude |X|.",
              choices=(1, 2)),
          Arg("center_windows", "bool", True, "Centre window t on sample t * window_step "
              "(padding the signal by half a window each side)."),
          Arg("reflect_padding", "bool", True, "Pad centred windows with the mirrored "
              "signal (otherwise zeros)."),
          Arg("layout", "layout", "ft", "'ft' (frequency-major) or 'tf'.",
              choices=("ft", "tf"))),
    kernel=spectrogram_kernel,
    check=_check_spectrogram,
    layout=lambda layouts, args: args["layout"],
    dtype=lambda dtypes, args: _F32,
    examples=(
        Example(args={"window_length": 64, "window_step": 32}, inputs=(_SIGNALS,)),
        Example(args={"window_length": 50, "nfft": 64, "window_step": 20, "power": 1,
                      "layout": "tf", "center_windows": False}, inputs=(_SIGNALS,)),
        Example(args={"window_length": 64, "nfft": 32}, inputs=(_SIGNALS,),
                raises=ArgumentError, match="'nfft' (32) must be at least"),
        Example(args={"window_length": 4, "window_fn": [1.0, 2.0]}, inputs=(_SIGNALS,),
                raises=ArgumentError, match="'window_fn' has 2 values"),
        Example(args={"layout": "ab"}, inputs=(_SIGNALS,), raises=ArgumentError,
                match="'layout' must be one of"),
        Example(args={"window_length": 2}, inputs=(_SIGNALS,), raises=ArgumentError,
                match="must be at least 3, got 2"),
    ),
))


# -- mel_filter_bank ----------------------------------------------------------------------------


def frequency_axis(layout: str, ndim: int) -> int:
    """Where the frequencies are: the layout's 'f', or (no layout) the second-to-last axis
    of a 2-D or deeper sample, the only axis of a 1-D one."""
    if layout:
        if "f" not in layout:
            raise ValueError(f"the input layout {layout!r} has no frequency axis 'f'")
        return layout.index("f")
    return max(ndim - 2, 0)


def mel_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = float32_input(ins[0])
    axis = frequency_axis(args["_in_layouts"][0], x.ndim)
    nbins = x.shape[axis]
    if nbins < 2:
        raise ValueError(f"needs at least 2 frequency bins, got {nbins}")
    weights, bands = loops("audio.mel").mel_bank(
        nbins, args["sample_rate"], args["nfilter"], args["freq_low"], args["freq_high"],
        args["normalize"], args["mel_formula"] == "htk")
    return loops("audio.mel").apply_mel(x, axis, weights, bands)


def _check_mel(args: dict) -> None:
    low, high, rate = args["freq_low"], args["freq_high"], args["sample_rate"]
    if high > 0 and low >= high:
        raise ArgumentError(f"fn.mel_filter_bank: 'freq_low' ({low}) must be below "
                            f"'freq_high' ({high})")
    if high <= 0 and low >= rate / 2:
        raise ArgumentError(f"fn.mel_filter_bank: 'freq_low' ({low}) must be below the "
                            f"Nyquist frequency ({rate / 2}) when freq_high is not given")


_POWER = [np.abs(np.sin(np.arange(33 * 6, dtype=np.float32))).reshape(33, 6),
          np.abs(np.cos(np.arange(33 * 4, dtype=np.float32))).reshape(33, 4)]

register(OpSchema(
    name="mel_filter_bank",
    doc="Converts a spectrogram's frequency axis (the layout's 'f') to nfilter mel bands "
        "(triangular filters, mel-spaced).",
    inputs=(Input("input", "A float32 spectrogram; frequencies on the layout's 'f' axis."),),
    args=(Arg("sample_rate", "float", 44100.0, "Sampling rate of the signal.",
              range=(0, None)),
          Arg("nfilter", "int", 128, "Number of mel filters.", range=(1, None)),
          Arg("freq_low", "float", 0.0, "Lowest frequency (Hz).", range=(0, None)),
          Arg("freq_high", "float", 0.0, "Highest frequency (Hz; 0: sample_rate / 2).",
              range=(0, None)),
          Arg("normalize", "bool", True, "Give each triangle unit area (False: peak 1)."),
          Arg("mel_formula", "str", "slaney", "'slaney' (linear below 1 kHz) or 'htk' "
              "(2595 log10(1 + f / 700)).", choices=("slaney", "htk"))),
    kernel=mel_kernel,
    check=_check_mel,
    dtype=lambda dtypes, args: _F32,
    examples=(
        Example(args={"nfilter": 8, "sample_rate": 16000.0}, inputs=(_POWER,)),
        Example(args={"nfilter": 5, "mel_formula": "htk", "normalize": False,
                      "freq_low": 100.0, "freq_high": 4000.0, "sample_rate": 8000.0},
                inputs=(_POWER,)),
        Example(args={"freq_low": 500.0, "freq_high": 400.0}, inputs=(_POWER,),
                raises=ArgumentError, match="must be below 'freq_high'"),
        Example(args={"mel_formula": "mel"}, inputs=(_POWER,), raises=ArgumentError,
                match="'mel_formula' must be one of"),
    ),
))


# -- mfcc ---------------------------------------------------------------------------------------


def mfcc_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = float32_input(ins[0])
    axis = args["axis"]
    if not 0 <= axis < x.ndim:
        raise ValueError(f"'axis' {axis} is out of range for a {x.ndim}-D sample")
    return mfcc(x, axis, args["n_mfcc"], args["dct_type"], args["normalize"], args["lifter"])


def _check_mfcc(args: dict) -> None:
    if args["dct_type"] == 1 and args["normalize"]:
        raise ArgumentError("fn.mfcc: normalize=True is not supported for dct_type=1")


register(OpSchema(
    name="mfcc",
    doc="Mel-frequency cepstral coefficients: a DCT (type 1-4) of a mel spectrogram along "
        "'axis', keeping n_mfcc coefficients, optionally liftered.",
    inputs=(Input("input", "A float32 mel spectrogram."),),
    args=(Arg("n_mfcc", "int", 20, "Coefficients to keep (at most the axis' extent).",
              range=(1, None)),
          Arg("dct_type", "int", 2, "DCT type, 1 to 4.", choices=(1, 2, 3, 4)),
          Arg("normalize", "bool", False, "Orthonormal DCT (not for type 1); otherwise "
              "unnormalized (half of scipy's)."),
          Arg("lifter", "float", 0.0, "Cepstral lifter L: coefficient i is multiplied by "
              "1 + (L / 2) sin(pi (i + 1) / L); 0 is none."),
          Arg("axis", "int", 0, "The axis to transform (the mel axis).", range=(0, None))),
    kernel=mfcc_kernel,
    check=_check_mfcc,
    dtype=lambda dtypes, args: _F32,
    examples=(
        Example(args={"n_mfcc": 5}, inputs=(_POWER,)),
        Example(args={"n_mfcc": 4, "dct_type": 3, "normalize": True, "lifter": 6.0,
                      "axis": 1}, inputs=(_POWER,)),
        Example(args={"dct_type": 1, "normalize": True}, inputs=(_POWER,),
                raises=ArgumentError, match="not supported for dct_type=1"),
        Example(args={"dct_type": 5}, inputs=(_POWER,), raises=ArgumentError,
                match="'dct_type' must be one of"),
    ),
))


# -- to_decibels --------------------------------------------------------------------------------


def decibels_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = float32_input(ins[0])
    reference = args["reference"] if "reference" in args.get("_given", ()) else None
    return loops("audio.signal").to_decibels(x, args["multiplier"], reference, args["cutoff_db"])


def _check_decibels(args: dict) -> None:
    if "reference" in args.get("_given", ()) and args["reference"] == 0:
        raise ArgumentError("fn.to_decibels: argument 'reference' must not be 0 (leave it "
                            "out to use each sample's maximum)")


register(OpSchema(
    name="to_decibels",
    doc="Converts magnitudes to decibels: multiplier * log10(max(x / reference, "
        "10^(cutoff_db / multiplier))), reference = each sample's maximum unless given.",
    inputs=(Input("input", "float32 magnitudes or powers."),),
    args=(Arg("multiplier", "float", 10.0, "10 for powers, 20 for magnitudes (ln 10 gives "
              "natural logarithms)."),
          Arg("reference", "float", 0.0, "The 0 dB magnitude (default: the sample's "
              "maximum); must not be 0 when given."),
          Arg("cutoff_db", "float", -200.0, "The lowest decibel value output.")),
    kernel=decibels_kernel,
    check=_check_decibels,
    dtype=lambda dtypes, args: _F32,
    examples=(
        Example(inputs=(_POWER,)),
        Example(args={"multiplier": 20.0, "reference": 2.0, "cutoff_db": -40.0},
                inputs=(_POWER,)),
        Example(args={"reference": 0.0}, inputs=(_POWER,), raises=ArgumentError,
                match="'reference' must not be 0"),
    ),
))
