"""``fn.normalize``: ``(x - mean) / sqrt(stddev^2 + epsilon) * scale + shift``.

mean and stddev are given (a number, or per-sample tensors shaped like each sample's own
reduced shape, e.g. (1, 1, 3) for axes [0, 1] of HWC) or computed over 'axes' /
'axis_names' (default: all axes) of each sample, or with batch=True over the whole batch
(non-reduced extents must then agree). A given mean is the center for a computed stddev;
'ddof' is subtracted from the count (none left: the variance is 0, then epsilon is added,
as in DALI). Constant regions come out as 'shift'. DALI 2.4 facts, measured: integer
outputs round half away from zero and saturate; 'axes' and 'axis_names' exclude each
other; negative or empty axes are refused.

Because batch=True needs the whole batch, the operator runs as a batch stage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.tensor import stats as K
from stoker.kernels.gpu.lazy import lazy
from stoker.operators.image.image_args import check_input_type
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

T = types.DALIDataType
_IN_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)
_OUT_TYPES = (T.FLOAT, T.UINT8, T.INT8, T.UINT16, T.INT16, T.UINT32, T.INT32)


def _axes(args: dict, layout: str, ndim: int) -> tuple[int, ...]:
    names, axes = args.get("axis_names"), args.get("axes")
    if names is not None:
        missing = [c for c in names if c not in layout]
        if missing:
            raise ValueError(f"'axis_names' {names!r} names axes that layout {layout!r} lacks")
        return tuple(layout.index(c) for c in names)
    if axes is None:
        return tuple(range(ndim))
    bad = [a for a in axes if not 0 <= a < ndim]
    if bad:
        raise ValueError(f"'axes' {axes} out of range for {ndim}-D samples (0..{ndim - 1})")
    return tuple(axes)


def _given(value: Any, shapes: list[tuple], axes: tuple, name: str) -> list | None:
    """A given mean/stddev as one array per sample, broadcastable to that sample's reduced
    shape (samples may differ in shape; so may their per-sample arguments)."""
    if value is None:
        return None
    if not isinstance(value, list | np.ndarray):  # a constant
        return [np.asarray(float(value))] * len(shapes)
    out = []
    for j, (row, shape) in enumerate(zip(value, shapes, strict=True)):
        arr = np.asarray(row, np.float64)
        if arr.size == 1:
            out.append(arr.reshape(()))
            continue
        reduced = K.reduced_shape(shape, axes)
        if arr.ndim != len(shape) or any(s not in (1, r) for s, r in zip(arr.shape, reduced,
                                                                         strict=True)):
            raise ValueError(f"'{name}' of sample {j} has shape {arr.shape}; it must match "
                             f"the reduced sample shape {reduced} (or be one number): the "
                             "parameter shape does not match the reduced input sample shape")
        out.append(arr)
    return out


def reduction(samples: list, args: dict, argv: dict, layout: str) -> tuple[tuple, bool]:
    """The reduced axes and whether the batch is reduced together, checked against the
    samples' shapes (numpy or torch: the GPU operator shares this)."""
    axes = _axes(args, layout, samples[0].ndim)
    together = args["batch"]
    if together:
        kept = {tuple(s for a, s in enumerate(x.shape) if a not in axes) for x in samples}
        if len(kept) > 1:
            raise ValueError(f"batch=True needs equal non-reduced extents in every sample, got "
                             f"{sorted(kept)}")
        if "mean" in argv or "stddev" in argv:
            raise ValueError("batch=True takes 'mean' and 'stddev' only as constants, not as "
                             "per-sample inputs")
    return axes, together


def normalize_samples(samples: list[np.ndarray], args: dict, argv: dict, layout: str,
                      out: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Normalizes the samples of a batch; writes into ``out`` (one array per sample) if
    given."""
    n = len(samples)
    if n == 0:
        return []
    for x in samples:
        check_input_type(x, _IN_TYPES)
    axes, together = reduction(samples, args, argv, layout)
    shapes = [x.shape for x in samples]
    mean = _given(argv.get("mean", args.get("mean")), shapes, axes, "mean")
    stddev = _given(argv.get("stddev", args.get("stddev")), shapes, axes, "stddev")
    out_type = types.to_numpy(args["dtype"])
    if stddev is None:
        means, variances = K.moments(samples, axes, mean, args["ddof"], together)
    else:
        means = mean if mean is not None else K.moments(samples, axes, None, 0, together)[0]
        variances = [s * s for s in stddev]
    dests = out if out is not None else [None] * n
    return [K.normalize(x, axes, m, K.inverse_std(v, args["epsilon"], args["scale"],
                                                    computed=stddev is None),
                        args["shift"], out_type, dest)
            for x, m, v, dest in zip(samples, means, variances, dests, strict=True)]


class NormalizeStage:
    """The batch stage: sees the whole batch, as batch=True needs."""

    def __init__(self, op: Any, pipeline: Any = None):
        if op.args["batch"] and {"mean", "stddev"} & set(op.arg_nodes):
            # DALI refuses this at build too (a RuntimeError; ArgumentError is one).
            raise ArgumentError("fn.normalize: batch=True takes 'mean' and 'stddev' only as "
                                "constants: batch normalization cannot be used with "
                                "parameters specified as per-sample (TensorList) inputs")
        self.op = op
        self.args = op.args
        self.layout = op.inputs[0].layout or ""

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        x = ins[0]
        samples = [np.asarray(s) for s in x]
        if isinstance(x, np.ndarray):  # dense in, dense out: samples write into one array
            dense = np.empty(x.shape, types.to_numpy(self.args["dtype"]))
            normalize_samples(samples, self.args, argv, self.layout, list(dense))
            return (dense,)
        return (normalize_samples(samples, self.args, argv, self.layout),)


def _check(args: dict) -> None:
    if args.get("axes") is not None and args.get("axis_names") is not None:
        raise ArgumentError("fn.normalize: arguments 'axes' and 'axis_names' exclude each "
                            "other; give one")
    if args.get("axes") == []:
        raise ArgumentError("fn.normalize: argument 'axes' must name at least one axis, got []")
    if any(a < 0 for a in args.get("axes") or []):
        raise ArgumentError(f"fn.normalize: argument 'axes' must not be negative, got "
                            f"{args['axes']!r}")


_RNG = np.random.default_rng(3)
_IMG = [_RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8)]

register(OpSchema(
    name="normalize",
    doc="Normalizes data: (x - mean) / sqrt(stddev^2 + epsilon) * scale + shift, with mean "
        "and stddev given or computed per sample (or over the batch) along some axes.",
    inputs=(Input("input", "Data of any layout."),),
    args=(Arg("axes", "ints", None, "Axes to reduce over (default: all)."),
          Arg("axis_names", "layout", None, "Layout letters of the axes to reduce over."),
          Arg("batch", "bool", False, "Compute mean and stddev over the whole batch."),
          Arg("mean", "float", None, "Mean to subtract; computed when not given.",
              per_sample=True),
          Arg("stddev", "float", None, "Standard deviation; computed when not given.",
              per_sample=True),
          Arg("scale", "float", 1.0, "Multiplier applied after dividing by stddev."),
          Arg("shift", "float", 0.0, "Added last."),
          Arg("epsilon", "float", 0.0, "Added to the variance (stddev^2)."),
          Arg("ddof", "int", 0, "Delta degrees of freedom of the computed variance."),
          Arg("dtype", "dtype", types.FLOAT, "Output type.", choices=_OUT_TYPES)),
    stage="batch", instance=NormalizeStage, check=_check,
    devices=("cpu", "gpu"), gpu_kernel=lazy("tensor.normalize", "normalize"),
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(
        Example(inputs=(_IMG,)),
        Example(args={"axes": [0, 1], "scale": 64.0, "shift": 128.0, "dtype": T.UINT8},
                inputs=(_IMG,)),
        Example(args={"batch": True, "axes": [0, 1], "ddof": 1}, inputs=(_IMG,)),
        Example(args={"mean": 100.0, "stddev": 50.0, "epsilon": 1.0},
                inputs=([x.astype(np.float32) for x in _IMG],)),
        Example(args={"axes": [0], "axis_names": "H"}, inputs=(_IMG,), raises=ArgumentError,
                match="exclude each other"),
        Example(args={"batch": True, "axes": [2]}, inputs=(_IMG,), raises=RuntimeError,
                match="needs equal non-reduced extents"),
        Example(args={"dtype": T.FLOAT16}, inputs=(_IMG,), raises=ArgumentError,
                match="'dtype' must be one of"),
    ),
))
