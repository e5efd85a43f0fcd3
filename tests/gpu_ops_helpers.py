"""Runs one operator both ways: the CPU operator in a pipeline, and its ``gpu_kernel`` on
torch CPU tensors with the very same inputs, argument values and random stream.

``both(build, *inputs)`` builds ``build(*external_sources)`` in a CPU pipeline; the
operator that produced the (first) result is the one compared. Its direct inputs and its
per-sample argument nodes are pipeline outputs too, so the GPU kernel gets exactly what
the CPU operator got: a dense tensor per input (or a list of tensors when ``dense`` is
False or the samples differ in shape) and per-sample argument values stacked as numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def  # noqa: E402
from stoker.executor.context import BatchContext, GpuContext  # noqa: E402


def _constant(samples: Sequence[Any]) -> Callable[[], Sequence[Any]]:
    return lambda: samples


def _stacked(samples: list[np.ndarray]) -> Any:
    if all(s.shape == samples[0].shape for s in samples):
        return np.stack(samples)
    return samples


def _to_torch(samples: list[np.ndarray], dense: bool) -> Any:
    # (ascontiguousarray makes a 0-d array 1-d: reshape keeps scalars scalars)
    tensors = [torch.from_numpy(np.ascontiguousarray(s).reshape(s.shape)) for s in samples]
    if dense and all(t.shape == tensors[0].shape for t in tensors):
        return torch.stack(tensors)
    return tensors


def _to_numpy(out: Any) -> list[np.ndarray]:
    items = out.unbind(0) if isinstance(out, torch.Tensor) else out
    return [t.numpy() for t in items]


class Both:
    """The CPU and GPU results (lists of per-sample arrays per output) of one operator."""

    def __init__(self, cpu: list, gpu: list, raw: tuple, op: Any, layouts: list):
        self.cpu, self.gpu, self.raw, self.op, self.layouts = cpu, gpu, raw, op, layouts

    def max_diff(self, k: int = 0) -> float:
        """Largest absolute difference over output ``k`` (shapes and types must agree)."""
        worst = 0.0
        for c, g in zip(self.cpu[k], self.gpu[k], strict=True):
            assert c.dtype == g.dtype, (c.dtype, g.dtype)
            assert c.shape == g.shape, (c.shape, g.shape)
            if c.size:
                diff = np.abs(c.astype(np.float64) - g.astype(np.float64))
                both_nan = np.isnan(c.astype(np.float64)) & np.isnan(g.astype(np.float64))
                same_inf = c.astype(np.float64) == g.astype(np.float64)
                diff = np.where(both_nan | same_inf, 0.0, diff)
                worst = max(worst, float(diff.max()))
        return worst

    def assert_within(self, atol: float, k: int = 0, rtol: float = 0.0) -> float:
        worst = 0.0
        for c, g in zip(self.cpu[k], self.gpu[k], strict=True):
            assert c.dtype == g.dtype and c.shape == g.shape, (c.dtype, g.dtype, c.shape,
                                                               g.shape)
            np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64),
                                       atol=atol, rtol=rtol)
        worst = self.max_diff(k)
        return worst

    def assert_exact(self, k: int = 0) -> None:
        for c, g in zip(self.cpu[k], self.gpu[k], strict=True):
            assert c.dtype == g.dtype and c.shape == g.shape, (c.dtype, g.dtype, c.shape,
                                                               g.shape)
            np.testing.assert_array_equal(g, c)


def both(build: Callable[..., Any], *inputs: Sequence[np.ndarray],
         layouts: Sequence[str | None] | None = None, dense: bool = True,
         seed: int = 3) -> Both:
    layouts = list(layouts or [None] * len(inputs))
    n = len(inputs[0])
    found: dict[str, Any] = {}

    @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=seed,
                  exec_pipelined=False)
    def pipe():
        nodes = [fn.external_source(source=_constant(s), layout=lay)
                 for s, lay in zip(inputs, layouts, strict=True)]
        result = build(*nodes)
        outs = list(result) if isinstance(result, list | tuple) else [result]
        op = outs[0].op
        found["op"] = op
        return (*op.outputs, *op.inputs, *op.arg_nodes.values())

    p = pipe()
    try:
        res = p.run()
    finally:
        p.close()
    op = found["op"]
    n_out, n_in = len(op.outputs), len(op.inputs)
    cpu = [[np.asarray(s) for s in tl] for tl in res[:n_out]]
    in_samples = [[np.asarray(s) for s in tl] for tl in res[n_out:n_out + n_in]]
    argv = {k: _stacked([np.asarray(s) for s in tl])
            for k, tl in zip(op.arg_nodes, res[n_out + n_in:], strict=True)}
    # As the executor's GpuOp hands them over.
    args = {**op.args, "_in_layouts": tuple(node.layout or "" for node in op.inputs), **argv,
            "_per_sample": tuple(argv)}
    if op.schema.name in ("transpose",):  # layout_instance's extra argument
        args["_out_layout"] = op.outputs[0].layout or ""
    seed_arg = op.args.get("seed", -1)
    if op.schema.random:
        assert seed_arg >= 0, "give random operators an explicit seed to compare streams"
    ctx = GpuContext(BatchContext(0, 0, n, None, 0), max(seed_arg, 0), n, None,
                     torch.device("cpu"))
    ins = [_to_torch(s, dense) for s in in_samples]
    raw = op.schema.gpu_kernel(ins, args, ctx)
    raw = tuple(raw) if n_out > 1 else (raw,)
    for r in raw:
        _check_placement(r, dense and all(isinstance(i, torch.Tensor) for i in ins))
    gpu = [_to_numpy(r) for r in raw]
    _check_predictions(op, in_samples, args, gpu)
    for node, out in zip(op.outputs, gpu, strict=True):  # the predicted layout fits
        assert not node.layout or all(s.ndim == len(node.layout) for s in out), node.layout
    return Both(cpu, gpu, raw, op, [o.layout for o in op.outputs])


def _check_placement(out: Any, dense_in: bool) -> None:
    tensors = [out] if isinstance(out, torch.Tensor) else list(out)
    assert all(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in tensors)


def _check_predictions(op: Any, in_samples: list, args: dict, gpu: list) -> None:
    """The schema's dtype prediction holds for the GPU outputs."""
    if op.schema.dtype is None or not in_samples or not in_samples[0]:
        return
    want = op.schema.dtype([s[0].dtype for s in in_samples], args)
    want = list(want) if isinstance(want, list | tuple) else [want] * len(gpu)
    for w, out in zip(want, gpu, strict=True):
        for s in out:
            assert s.dtype == np.dtype(w), (s.dtype, w)
