"""``nonsilent_region`` and ``preemphasis_filter``: the time-domain operators of speech
pipelines, as DALI 2.4 computes them (kernels: ``stoker/kernels/cpu/audio/signal.py``).

Where stoker differs: an empty signal gives an empty output (pre-emphasis) or
``(0, 0)`` (DALI 2.4 crashes the process on both), and ``window_length=0`` is refused at
the call (DALI divides by zero).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.compiled import loops
from stoker.operators.audio.decoders import scalar
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

T = types.DALIDataType
_I32 = np.dtype(np.int32)
_NONSILENT_INPUTS = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)


def nonsilent_kernel(ins: list, args: dict, ctx: Any) -> tuple:
    x = np.asarray(ins[0])
    if x.ndim != 1:
        raise ValueError(f"expects a 1-D signal, got shape {x.shape}")
    if x.dtype.type not in _NONSILENT_INPUTS:
        raise ValueError(f"cannot take samples of type {x.dtype}")
    begin, length = loops("audio.signal").nonsilent_region(
        x, args["cutoff_db"], args["window_length"], args["reference_power"],
        args["reset_interval"])
    return np.array(begin, np.int32), np.array(length, np.int32)


def _check_nonsilent(args: dict) -> None:
    reset, window = args["reset_interval"], args["window_length"]
    if reset != -1 and (reset <= 0 or reset % window):
        raise ArgumentError(f"fn.nonsilent_region: argument 'reset_interval' must be -1 or "
                            f"a positive multiple of window_length={window}, got {reset}")


_SPEECH = [np.concatenate([np.zeros(300), np.sin(np.arange(500) / 3), np.zeros(200)])
           .astype(np.float32), (np.arange(900) % 7).astype(np.float32)]
_INT_SPEECH = [(np.arange(900) % 7).astype(np.int16), np.zeros(50, np.int16)]

register(OpSchema(
    name="nonsilent_region",
    doc="Finds the non-silent part of a 1-D signal: outputs its begin and length (int32 "
        "scalars; length 0 if all is silent). Silent is a short-term power (mean of x^2 "
        "over window_length) below cutoff_db relative to reference_power (default: the "
        "loudest window).",
    inputs=(Input("input", "A 1-D signal."),),
    args=(Arg("cutoff_db", "float", -60.0, "The silence threshold in dB below the "
              "reference."),
          Arg("window_length", "int", 2048, "Samples per short-term power window (at most "
              "the signal's length).", range=(1, None)),
          Arg("reference_power", "float", 0.0, "Power of 0 dB (default: the loudest "
              "window's)."),
          Arg("reset_interval", "int", 8192, "Recompute the running float sum every this "
              "many samples (a multiple of window_length; -1: never).")),
    num_outputs=2,
    kernel=nonsilent_kernel,
    check=_check_nonsilent,
    layout=lambda layouts, args: ["", ""],
    dtype=lambda dtypes, args: [_I32, _I32],
    examples=(
        Example(args={"window_length": 64, "reset_interval": 128}, inputs=(_SPEECH,)),
        Example(args={"window_length": 16, "cutoff_db": -10.0, "reference_power": 0.3},
                inputs=(_SPEECH,)),
        Example(args={"window_length": 64}, inputs=(_INT_SPEECH,)),
        Example(args={"window_length": 100, "reset_interval": 150}, inputs=(_SPEECH,),
                raises=ArgumentError, match="positive multiple of window_length=100"),
    ),
))


def preemphasis_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.dtype.kind not in "biuf":
        raise ValueError(f"cannot filter samples of type {x.dtype}")
    return loops("audio.signal").preemphasis(x, scalar(args["preemph_coeff"]), args["border"],
                       types.to_numpy(args["dtype"]))


_RAMPS = [np.arange(1, 40, dtype=np.float32), np.arange(60, 0, -1, dtype=np.float32)]
_INT_RAMPS = [(np.arange(60) * 100).astype(np.int16), np.zeros(3, np.int16)]

register(OpSchema(
    name="preemphasis_filter",
    doc="Pre-emphasis: y[t] = x[t] - preemph_coeff * x[t-1] (x[-1] by 'border'), over the "
        "sample's values in memory order.",
    inputs=(Input("input", "A signal (any numeric type)."),),
    args=(Arg("preemph_coeff", "float", 0.97, "The filter's coefficient.", per_sample=True),
          Arg("border", "str", "clamp", "x[-1]: 'clamp' (x[0]), 'zero' (0) or 'reflect' "
              "(x[1]).", choices=("clamp", "zero", "reflect")),
          Arg("dtype", "dtype", T.FLOAT, "Output type (integers rounded and saturated).")),
    kernel=preemphasis_kernel,
    dtype=lambda dtypes, args: types.to_numpy(args["dtype"]),
    examples=(
        Example(inputs=(_RAMPS,)),
        Example(args={"preemph_coeff": 0.5, "border": "reflect", "dtype": T.INT16},
                inputs=(_RAMPS,)),
        Example(args={"border": "zero"}, inputs=(_INT_RAMPS,)),
        Example(args={"border": "wrap"}, inputs=(_RAMPS,), raises=ArgumentError,
                match="'border' must be one of"),
    ),
))
