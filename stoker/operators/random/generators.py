"""``fn.random.*`` and ``fn.random_crop_generator``: per-sample random values.

Every draw comes from the sample's own stream (operator seed, global sample index), so
values do not depend on threads, chunks or batch size. An optional input makes one value
per element of that input's sample (DALI's "shape-like" input). Batch kernels draw a whole
dense chunk at once; the per-sample path runs the same kernel on a chunk of one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.random.rng import NORMAL_BULK, normal_from_uniform, normal_values
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

SHAPE_LIKE = Input("shape_like", "Optional: one value is drawn per element of this sample.",
                   optional=True)


class _One:
    """A chunk context of one sample, so per-sample calls reuse the batch kernels."""

    __slots__ = ("s",)

    def __init__(self, sctx: Any):
        self.s = sctx

    n = property(lambda self: 1)
    seed = property(lambda self: self.s.seed)
    indices = property(lambda self: np.array([self.s.index]))

    def uniform(self, count: int) -> np.ndarray:
        return self.s.uniform(count)[None]

    def sample(self, j: int) -> Any:
        return self.s


def per_sample(batch_kernel: Any) -> Any:
    def kernel(ins: list, args: dict, sctx: Any) -> Any:
        one = {k: (np.asarray(v)[None] if isinstance(v, np.ndarray | np.generic) and k in
                   sctx_args(args) else v) for k, v in args.items()}
        out = batch_kernel([np.asarray(x)[None] for x in ins], one, _One(sctx))
        if isinstance(out, tuple):
            return tuple(o[0] for o in out)
        return out[0]

    return kernel


def sctx_args(args: dict) -> set:
    # Per-sample argument values arrive as numpy arrays/scalars; constants as Python values.
    return {k for k, v in args.items() if isinstance(v, np.ndarray | np.generic)}


def _sample_shape(ins: list, args: dict) -> tuple[int, ...]:
    if ins:
        return tuple(ins[0].shape[1:])
    shape = args.get("shape")
    if shape is None:
        return ()
    if isinstance(shape, np.ndarray):  # per-sample shape: must agree within a dense chunk
        if shape.ndim == 1:
            return tuple(int(v) for v in shape)
        first = shape[0]
        if not (shape == first).all():
            raise ValueError("per-sample 'shape' differs within the batch")
        return tuple(int(v) for v in first)
    return tuple(shape)


def _column(value: Any, n: int, width: int) -> np.ndarray:
    """A constant or per-sample argument as an (n, width) float64 array."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0 or (arr.ndim == 1 and arr.shape[0] == width and width > 1) or \
            (arr.ndim == 1 and width == 1 and arr.shape[0] != n):
        return np.broadcast_to(arr.reshape(1, -1), (n, width))
    return arr.reshape(n, width)


def _finish(values: np.ndarray, n: int, shape: tuple, dtype: Any) -> np.ndarray:
    out_type = types.to_numpy(dtype)
    if out_type.kind in "iu" and values.dtype.kind == "f":
        values = np.rint(values)  # DALI rounds a float draw to the nearest integer
    return values.reshape((n, *shape)).astype(out_type, copy=False)


def uniform_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    n, shape = ctx.n, _sample_shape(ins, args)
    k = math.prod(shape)
    u = ctx.uniform(max(k, 1))[:, :k]
    values = args.get("values")
    if values is not None:
        vals = np.asarray(values, dtype=np.float64)
        idx = np.minimum((u * len(vals)).astype(np.int64), len(vals) - 1)
        out = vals[idx]
    else:
        lohi = _column(args["range"], n, 2)
        lo, hi = lohi[:, :1], lohi[:, 1:]
        out = lo + u * (hi - lo)
        out_type = types.to_numpy(args["dtype"])
        if out_type.kind == "f":
            # [lo, hi) in the output type: a draw just below hi may round to hi itself
            # (range=[10, nextafter(10)] in float32 gave hi for half the draws).
            top = np.nextafter(hi.astype(out_type), out_type.type(-np.inf))
            out = np.where(hi > lo, np.minimum(out.astype(out_type), top), out)
    return _finish(out, n, shape, args["dtype"])


def coin_flip_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    n, shape = ctx.n, _sample_shape(ins, args)
    k = math.prod(shape)
    u = ctx.uniform(max(k, 1))[:, :k]
    p = args["probability"]
    if type(p) is not float:  # (a constant float compares as it is: no broadcast column)
        p = _column(p, n, 1)
    return _finish(u < p, n, shape, args["dtype"])


def normal_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    n, shape = ctx.n, _sample_shape(ins, args)
    k = math.prod(shape)
    if k > NORMAL_BULK:  # large samples (an audio dither): one keyed stream each
        z = np.stack([normal_values(ctx.seed, int(i), k) for i in ctx.indices])
    else:
        z = normal_from_uniform(ctx.uniform(2 * max(k, 1)), k)
    mean = _column(args["mean"], n, 1)
    std = _column(args["stddev"], n, 1)
    return _finish(mean + std * z, n, shape, args["dtype"])


def choice_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    a = ins[0]
    n = ctx.n
    shape = _sample_shape(ins[1:], args)
    k = math.prod(shape)
    u = ctx.uniform(max(k, 1))[:, :k]
    out = np.empty((n, k), dtype=a.dtype)
    for j in range(n):
        aj = a[j]
        candidates = np.arange(int(aj)) if aj.ndim == 0 else aj.reshape(-1)
        if len(candidates) == 0:
            raise ValueError("fn.random.choice: the input has no elements to choose from")
        p = args.get("p")
        if p is None:
            idx = np.minimum((u[j] * len(candidates)).astype(np.int64), len(candidates) - 1)
        else:
            pj = np.asarray(p[j] if isinstance(p, np.ndarray) and p.ndim == 2 else p, np.float64)
            if pj.shape != (len(candidates),):
                raise ValueError(f"fn.random.choice: 'p' has {pj.size} probabilities for "
                                 f"{len(candidates)} candidates")
            cdf = np.cumsum(pj)
            idx = np.minimum(np.searchsorted(cdf / cdf[-1], u[j], side="right"),
                             len(candidates) - 1)
        out[j] = candidates[idx]
    return out.reshape((n, *shape))


def beta_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    n, shape = ctx.n, _sample_shape(ins, args)
    alpha = _column(args["alpha"], n, 1)[:, 0]
    beta = _column(args["beta"], n, 1)[:, 0]
    out = np.empty((n, *shape), dtype=np.float64)
    for j in range(n):
        out[j] = ctx.sample(j).generator().beta(alpha[j], beta[j], size=shape)
    return out.astype(types.to_numpy(args["dtype"]), copy=False)


def _dtype_from(args: dict) -> Any:
    return types.to_numpy(args["dtype"])


def _check_range(args: dict) -> None:
    r = args.get("range")
    if isinstance(r, list) and r[0] > r[1]:
        raise ArgumentError(f"fn.random.uniform: argument 'range' must be [lo, hi] with "
                            f"lo <= hi, got {r!r}")


_SHAPE = Arg("shape", "ints", None, "Shape of each sample's output; empty for a scalar.",
             per_sample=True, range=(0, None))
_EX_SHAPE = Example(args={"shape": [2, 3]})
_EX_LIKE = Example(inputs=([np.zeros((2, 2), np.float32), np.zeros((3, 1), np.float32)],))


def _register(name: str, doc: str, args: tuple, kernel: Any, examples: tuple,
              check: Any = None, inputs: tuple = (SHAPE_LIKE,)) -> None:
    register(OpSchema(
        name=name, doc=doc, inputs=inputs, args=args, kernel=per_sample(kernel),
        batch_kernel=kernel, random=True, dtype=lambda d, a: _dtype_from(a),
        layout=lambda layouts, a: layouts[0] if layouts else "", examples=examples,
        check=check,
    ))


_register(
    "random.uniform",
    "Uniformly distributed values in [range[0], range[1]), or drawn from a discrete set of "
    "'values'.",
    (Arg("range", "floats", [-1.0, 1.0], "Half-open interval [lo, hi).", per_sample=True,
         length=2),
     Arg("values", "floats", None, "Draw uniformly from these values instead of an interval.",
         per_sample=True),
     _SHAPE,
     Arg("dtype", "dtype", types.FLOAT, "Output data type.")),
    uniform_batch,
    (Example(), _EX_SHAPE, _EX_LIKE, Example(args={"values": [1.0, 2.0, 5.0]}),
     Example(args={"range": [3.0, 1.0]}, raises=ArgumentError, match="lo <= hi"),
     Example(args={"rnage": [0.0, 1.0]}, raises=TypeError, match="did you mean 'range'")),
    check=_check_range,
)
_register(
    "random.coin_flip",
    "Bernoulli draws: 1 with the given probability, else 0.",
    (Arg("probability", "float", 0.5, "Probability of a 1.", per_sample=True, range=(0, 1)),
     _SHAPE,
     Arg("dtype", "dtype", types.INT32, "Output data type: INT32, UINT8 or BOOL.",
         choices=(types.INT32, types.UINT8, types.BOOL))),
    coin_flip_batch,
    (Example(), _EX_SHAPE, _EX_LIKE, Example(args={"probability": 0.9}),
     Example(args={"probability": 1.5}, raises=ArgumentError, match="must be in [0, 1]")),
)
_register(
    "random.normal",
    "Normally distributed values.",
    (Arg("mean", "float", 0.0, "Mean.", per_sample=True),
     Arg("stddev", "float", 1.0, "Standard deviation.", per_sample=True, range=(0, None)),
     _SHAPE,
     Arg("dtype", "dtype", types.FLOAT, "Output data type.")),
    normal_batch,
    (Example(), _EX_SHAPE, _EX_LIKE, Example(args={"mean": 3.0, "stddev": 0.5}),
     Example(args={"stddev": -1.0}, raises=ArgumentError, match="'stddev' must be in")),
)
_register(
    "random.beta",
    "Beta-distributed values in [0, 1].",
    (Arg("alpha", "float", 1.0, "First shape parameter.", per_sample=True, range=(1e-30, None)),
     Arg("beta", "float", 1.0, "Second shape parameter.", per_sample=True, range=(1e-30, None)),
     _SHAPE,
     Arg("dtype", "dtype", types.FLOAT, "Output data type.")),
    beta_batch,
    (Example(), _EX_SHAPE, Example(args={"alpha": 2.0, "beta": 5.0}),
     Example(args={"alpha": 0.0}, raises=ArgumentError, match="'alpha' must be in")),
)
register(OpSchema(
    name="random.choice",
    doc="Picks from the input: from range(a) when a sample is a scalar integer a, else from "
        "the sample's elements, with optional probabilities 'p'.",
    inputs=(Input("a", "A scalar n (choose from 0..n-1) or a 1D list of candidates."),
            SHAPE_LIKE),
    args=(Arg("p", "floats", None, "Probability of each candidate.", per_sample=True,
              range=(0, None)),
          _SHAPE),
    kernel=per_sample(choice_batch), batch_kernel=choice_batch, random=True,
    layout=lambda layouts, a: "",
    examples=(Example(inputs=([np.array(5, np.int32), np.array(3, np.int32)],)),
              Example(inputs=([np.array([10, 20, 30], np.int64)] * 2,),
                      args={"p": [0.2, 0.3, 0.5], "shape": [4]}),
              Example(inputs=([np.array(5, np.int32)],), args={"p": [-0.5]},
                      raises=ArgumentError, match="'p' must be in")),
))


def crop_window_batch(ins: list, args: dict, ctx: Any) -> tuple[np.ndarray, np.ndarray]:
    """(anchor, shape) of a random window covering a random area and aspect ratio."""
    from stoker.kernels.cpu.image.crop_window import random_crop_window

    shapes = ins[0]
    n = ctx.n
    anchors = np.empty((n, 2), np.int32)
    sizes = np.empty((n, 2), np.int32)
    area = args["random_area"]
    ratio = args["random_aspect_ratio"]
    for j in range(n):
        h, w = int(shapes[j][0]), int(shapes[j][1])
        sctx = ctx.sample(j)
        y, x, ch, cw = random_crop_window(sctx.seed, sctx.index, h, w, area, ratio,
                                          args["num_attempts"])
        anchors[j] = (y, x)  # (H, W) order, as DALI's crop generator gives them
        sizes[j] = (ch, cw)
    return anchors, sizes


register(OpSchema(
    name="random_crop_generator",
    doc="Random crop windows for images of the given shapes (HWC or HW), with the area "
        "fraction and aspect ratio drawn from ranges (Inception-style).",
    inputs=(Input("shape", "Each sample's image shape, e.g. from .shape() or "
                           "peek_image_shape."),),
    args=(Arg("random_area", "floats", [0.08, 1.0], "Range of the window's area fraction.",
              length=2, broadcast=True, range=(0, 1)),
          Arg("random_aspect_ratio", "floats", [3 / 4, 4 / 3],
              "Range of the window's width/height ratio.", length=2, broadcast=True,
              range=(1e-6, None)),
          Arg("num_attempts", "int", 10, "Draws before falling back to a center crop.",
              range=(1, None))),
    num_outputs=2,
    kernel=per_sample(crop_window_batch), batch_kernel=crop_window_batch, random=True,
    layout=lambda layouts, a: ["", ""],
    dtype=lambda d, a: (np.dtype(np.int32), np.dtype(np.int32)),
    examples=(Example(inputs=([np.array([480, 640, 3], np.int64),
                               np.array([100, 50, 3], np.int64)],)),
              Example(inputs=([np.array([480, 640, 3], np.int64)],),
                      args={"random_area": [0.5, 2.0]}, raises=ArgumentError,
                      match="'random_area' must be in [0, 1]")),
))
