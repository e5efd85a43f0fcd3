"""``fn.noise.*``: Gaussian, salt and pepper, and shot noise.

Each sample draws from its own generator (operator seed, sample index), so results do not
depend on threads or batching, and a given seed repeats exactly. DALI 2.4 facts, measured:

- gaussian noise is the draw fn.random.normal makes with the same seed (in DALI,
  ``noise.gaussian(x, seed=s)`` is ``x + random.normal(x, seed=s)``);
- integer outputs round half away from zero and saturate; float outputs are unclamped;
- salt and pepper: salt defaults to the type's max (1.0 for float), pepper to its min
  (-1.0 for float); without per_channel a pixel's channels share one draw, the channel
  axis being the layout's C or, with no layout, the last axis;
- shot noise without 'factor' uses 12, not the documented 20 (DALI's kernel falls back to
  its own constructor default); stoker does the same so that ported pipelines match.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.kernels.cpu.image import noise as K
from stoker.kernels.cpu.random.rng import normal_values
from stoker.operators.image.image_args import check_input_type, column, given
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
          np.float32)
_SHOT_UNSET_FACTOR = 12.0


def _noise_batch(draw: Any) -> tuple[Any, Any]:
    """(per-sample kernel, batch kernel) around ``draw(sample, sctx, args, j, n)``:
    sample j of n, drawing from its own stream (``sctx``, its sample context)."""
    def kernel(ins: list, args: dict, sctx: Any) -> np.ndarray:
        x = np.asarray(ins[0])
        check_input_type(x, _TYPES)
        one = {k: (np.asarray(v)[None] if isinstance(v, np.ndarray | np.generic) else v)
               for k, v in args.items()}
        return draw(x, sctx, one, 0, 1)

    def batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = ins[0]
        check_input_type(x, _TYPES)
        out = np.empty_like(x)
        for j in range(x.shape[0]):
            out[j] = draw(x[j], ctx.sample(j), args, j, x.shape[0])
        return out

    return kernel, batch


def _gaussian(x: np.ndarray, sctx: Any, args: dict, j: int, n: int) -> np.ndarray:
    # The values fn.random.normal(x, mean, stddev) draws with the same seed, computed the
    # same way (float64, then float32): DALI's noise.gaussian is x + that normal draw.
    mean = np.float64(column(args["mean"], n, "mean")[j])
    std = np.float64(column(args["stddev"], n, "stddev")[j])
    z = normal_values(sctx.seed, sctx.index, x.size)
    return K.gaussian(x, (mean + std * z).astype(np.float32))


def _channel_axis(args: dict, ndim: int) -> int | None:
    if args["per_channel"]:
        return None
    layout = args["_in_layouts"][0]
    if layout:
        return layout.index("C") if "C" in layout else None
    return ndim - 1 if ndim else None


def _salt_and_pepper(x: np.ndarray, sctx: Any, args: dict, j: int, n: int) -> np.ndarray:
    prob = column(args["prob"], n, "prob")[j]
    svp = column(args["salt_vs_pepper"], n, "salt_vs_pepper")[j]
    for name, v in (("prob", prob), ("salt_vs_pepper", svp)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"'{name}' must be in [0, 1], got {v}")
    salt, pepper = K.default_salt_pepper(x.dtype)
    if args.get("salt_val") is not None:
        salt = column(args["salt_val"], n, "salt_val")[j]
    if args.get("pepper_val") is not None:
        pepper = column(args["pepper_val"], n, "pepper_val")[j]
    return K.salt_and_pepper(x, sctx.generator(), prob, svp, salt, pepper,
                             _channel_axis(args, x.ndim))


def _shot(x: np.ndarray, sctx: Any, args: dict, j: int, n: int) -> np.ndarray:
    factor = column(args["factor"], n, "factor")[j] if given(args, "factor") else \
        _SHOT_UNSET_FACTOR
    return K.shot(x, sctx.generator(), factor)


_IN = Input("input", "Data of any layout: uint8 ... int64 or float.")
_RNG = np.random.default_rng(11)
_IMG = [_RNG.integers(0, 256, (6, 7, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (5, 4, 3), dtype=np.uint8)]
_F32 = [x.astype(np.float32) / 255 for x in _IMG]
_BAD = ([np.zeros((2, 2), np.float64)],)

for _name, _draw, _args, _doc, _examples in (
    ("noise.gaussian", _gaussian,
     (Arg("mean", "float", 0.0, "Mean of the noise.", per_sample=True),
      Arg("stddev", "float", 1.0, "Standard deviation of the noise.", per_sample=True,
          range=(0, None))),
     "Adds normally distributed noise to every element.",
     (Example(args={"stddev": 20.0}, inputs=(_IMG,)),
      Example(args={"mean": 0.1, "stddev": 0.05}, inputs=(_F32,)),
      Example(args={"stddev": -1.0}, inputs=(_IMG,), raises=ValueError,
              match="'stddev' must be in"))),
    ("noise.salt_and_pepper", _salt_and_pepper,
     (Arg("prob", "float", 0.05, "Probability that an element (or pixel) is replaced.",
          per_sample=True, range=(0, 1)),
      Arg("salt_vs_pepper", "float", 0.5, "Share of the replaced elements that become salt.",
          per_sample=True, range=(0, 1)),
      Arg("salt_val", "float", None, "Salt value; the type's maximum (1.0 for float) by "
          "default.", per_sample=True),
      Arg("pepper_val", "float", None, "Pepper value; the type's minimum (-1.0 for float) "
          "by default.", per_sample=True),
      Arg("per_channel", "bool", False, "Draw each channel separately instead of replacing "
          "whole pixels.")),
     "Replaces random elements (or pixels) with salt and pepper values.",
     (Example(args={"prob": 0.3}, inputs=(_IMG,)),
      Example(args={"prob": 0.5, "per_channel": True, "salt_val": 0.9}, inputs=(_F32,)),
      Example(args={"prob": 1.5}, inputs=(_IMG,), raises=ValueError,
              match="'prob' must be in [0, 1]"))),
    ("noise.shot", _shot,
     (Arg("factor", "float", 20.0, "Photon-count factor: out = "
          "Poisson(in / factor) * factor. Left out, DALI 2.4 (and stoker) use 12.",
          per_sample=True),),
     "Adds shot (Poisson) noise: each value becomes a Poisson count with mean in / factor, "
     "times factor.",
     (Example(args={"factor": 4.0}, inputs=(_IMG,)),
      Example(inputs=(_F32,)),
      Example(args={"factor": "x"}, inputs=(_IMG,), raises=TypeError,
              match="'factor' must be a number"))),
):
    _kernel, _batch = _noise_batch(_draw)
    register(OpSchema(
        name=_name, doc=_doc, inputs=(_IN,), args=_args, kernel=_kernel, batch_kernel=_batch,
        random=True,
        examples=(*_examples, Example(inputs=_BAD, raises=RuntimeError,
                                      match="input type float64 is not supported")),
    ))
