"""``decoders.audio`` and ``audio_resample``: audio files to samples, and samples to another
rate, as DALI 2.4 does them (kernels: ``stoker/kernels/cpu/audio/decode.py`` and
``resample.py``).

stoker's extension: ``resampler="soxr_hq"`` / ``"soxr_vhq"`` resamples with libsoxr's
band-limited filters instead of DALI's own windowed sinc (which does not low-pass when it
downsamples); the default ``"dali"`` gives DALI's samples. MP3 files decode too (DALI's
libsndfile build refuses them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.audio import convert
from stoker.kernels.cpu.audio.decode import decode, pcm16_wav
from stoker.kernels.cpu.compiled import loops
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

T = types.DALIDataType
RESAMPLERS = ("dali", "soxr_hq", "soxr_vhq")
_DECODE_TYPES = (T.FLOAT, T.INT16, T.INT32)
_RESAMPLE_INPUTS = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)


def scalar(value: Any) -> float:
    """A constant or one sample's per-sample argument value as a float."""
    return float(np.asarray(value).reshape(-1)[0])


def float32_arg(value: Any) -> float:
    """A float argument as DALI holds it: a float32 (0.37 is 0.3700000048, which makes
    4000 samples scaled by 0.37 come out as 1481)."""
    return float(np.float32(scalar(value)))


def _resampler_arg() -> Arg:
    return Arg("resampler", "str", "dali", "stoker's extension: 'dali' (DALI's windowed "
               "sinc, its exact samples) or 'soxr_hq' / 'soxr_vhq' (libsoxr, band-limited: "
               "no aliasing when downsampling).", choices=RESAMPLERS)


def _quality_arg() -> Arg:
    return Arg("quality", "float", 50.0, "Resampling quality, 0..100: the sinc's half width "
               "is round(0.007 q^2 - 0.09 q + 3) input samples (16 at 50).", range=(0, 100))


# -- decoders.audio -----------------------------------------------------------------------------


def decode_kernel(ins: list, args: dict, ctx: Any) -> tuple:
    data = np.ascontiguousarray(ins[0]).reshape(-1).view(np.uint8)
    target = float32_arg(args["sample_rate"])
    if target < 0:
        raise ValueError(f"'sample_rate' must not be negative, got {target}")
    audio, rate = decode(data, target_rate=target, downmix=args["downmix"],
                         dtype=types.to_numpy(args["dtype"]), quality=args["quality"],
                         method=args["resampler"])
    return audio, np.array(target if target > 0 else rate, np.float32)


_WAV = [pcm16_wav((np.sin(np.arange(300) / 7) * 9000).astype(np.int16), 16000),
        pcm16_wav(np.stack([np.arange(0, 9000, 50), np.arange(9000, 0, -50)], 1)
                  .astype(np.int16), 8000)]

register(OpSchema(
    name="decoders.audio",
    doc="Decodes audio files (WAV, FLAC, OGG/Vorbis, OGG/Opus; MP3 too, unlike DALI): "
        "outputs the samples ((length, channels), or (length,) with downmix) and the "
        "sample rate (float32 scalar: the file's, or sample_rate when resampling).",
    inputs=(Input("data", "The encoded file's bytes (uint8, 1-D)."),),
    args=(Arg("sample_rate", "float", 0.0, "Resample to this rate (0: keep the file's).",
              per_sample=True),
          Arg("downmix", "bool", False, "Average the channels into one (output (length,))."),
          Arg("dtype", "dtype", T.FLOAT, "Output type: FLOAT (-1..1), INT16 or INT32.",
              choices=_DECODE_TYPES),
          _quality_arg(), _resampler_arg()),
    num_outputs=2,
    kernel=decode_kernel,
    layout=lambda layouts, args: ["", ""],
    dtype=lambda dtypes, args: [types.to_numpy(args["dtype"]), np.dtype(np.float32)],
    examples=(
        Example(inputs=(_WAV,)),
        Example(args={"downmix": True, "sample_rate": 11025.0, "dtype": T.INT16},
                inputs=(_WAV,)),
        Example(args={"dtype": T.UINT8}, inputs=(_WAV,), raises=ArgumentError,
                match="'dtype' must be one of"),
        Example(args={"quality": 101.0}, inputs=(_WAV,), raises=ArgumentError,
                match="'quality' must be in [0, 100]"),
    ),
))


# -- audio_resample -----------------------------------------------------------------------------


def resample_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    if x.ndim not in (1, 2):
        raise ValueError(f"expects time series, (length,) or (length, channels), got a "
                         f"{x.ndim}-D sample of shape {x.shape}")
    if x.dtype.type not in _RESAMPLE_INPUTS:
        raise ValueError(f"cannot resample samples of type {x.dtype} (DALI takes 8-32 bit "
                         "integers and float32)")
    out_type = x.dtype if args.get("dtype") is None else types.to_numpy(args["dtype"])
    n = x.shape[0]
    length = None
    if args.get("in_rate") is not None:
        in_rate, out_rate = float32_arg(args["in_rate"]), float32_arg(args["out_rate"])
    elif args.get("scale") is not None:
        in_rate, out_rate = 1.0, float32_arg(args["scale"])
    else:
        length = int(scalar(args["out_length"]))
        in_rate, out_rate = float(max(n, 1)), float(length)
        if length < 0:
            raise ValueError(f"'out_length' must not be negative, got {length}")
    if in_rate <= 0 or out_rate < 0 or (out_rate == 0 and length is None and
                                        args.get("scale") is None):
        raise ValueError(f"rates must be positive, got in_rate={in_rate}, out_rate={out_rate}")
    if out_rate == 0:  # scale=0 or out_length=0: nothing to compute
        return np.zeros((0, *x.shape[1:]), out_type)
    if length is None:
        length = loops("audio.resample").resampled_length(n, in_rate, out_rate)
    # DALI resamples in the output type's value range ([0, 1] for unsigned types).
    samples = convert.to_float(x, convert.is_unsigned(out_type))
    out = loops("audio.resample").resample(samples, in_rate, out_rate, args["quality"],
                                           args["resampler"], out_length=length)
    return convert.from_float(out, out_type)


def _check_resample(args: dict) -> None:
    given = [k for k in ("in_rate", "out_rate", "scale", "out_length") if
             args.get(k) is not None]
    if ("in_rate" in given) != ("out_rate" in given):
        raise ArgumentError("fn.audio_resample: arguments 'in_rate' and 'out_rate' must be "
                            "given together")
    ways = ("in_rate" in given) + ("scale" in given) + ("out_length" in given)
    if ways != 1:
        raise ArgumentError("fn.audio_resample: give exactly one of in_rate and out_rate, "
                            f"scale, or out_length; got {', '.join(given) or 'none'}")


_AUDIO = [np.sin(np.arange(400, dtype=np.float32) / 5), np.cos(np.arange(250, dtype=np.float32))]

register(OpSchema(
    name="audio_resample",
    doc="Resamples audio ((length,) or (length, channels)) to another rate with DALI's "
        "windowed-sinc filter: the rate ratio is given by in_rate and out_rate, by scale "
        "(out/in), or by out_length. Integer samples are read and written as normalized "
        "values (int16 32767 is 1.0).",
    inputs=(Input("input", "Audio samples: 8-32 bit integers or float32."),),
    args=(Arg("in_rate", "float", None, "Input sampling rate (with out_rate).",
              per_sample=True),
          Arg("out_rate", "float", None, "Output sampling rate (with in_rate).",
              per_sample=True),
          Arg("scale", "float", None, "Output rate / input rate.", per_sample=True),
          Arg("out_length", "int", None, "Output length in samples.", per_sample=True),
          _quality_arg(),
          Arg("dtype", "dtype", None, "Output type (default: the input's); integers are "
              "normalized (full range for -1..1)."),
          _resampler_arg()),
    kernel=resample_kernel,
    check=_check_resample,
    devices=("cpu",),
    layout=lambda layouts, args: layouts[0] if layouts else "",
    dtype=lambda dtypes, args: dtypes[0] if args.get("dtype") is None else
    types.to_numpy(args["dtype"]),
    examples=(
        Example(args={"scale": 0.6}, inputs=(_AUDIO,)),
        Example(args={"in_rate": 16000.0, "out_rate": 44100.0, "quality": 0.0,
                      "dtype": T.INT16}, inputs=(_AUDIO,)),
        Example(args={"out_length": 123, "resampler": "soxr_hq"}, inputs=(_AUDIO,)),
        Example(args={"in_rate": 16000.0}, inputs=(_AUDIO,), raises=ArgumentError,
                match="must be given together"),
        Example(args={"scale": 2.0, "out_length": 5}, inputs=(_AUDIO,), raises=ArgumentError,
                match="give exactly one of"),
    ),
))
