"""Glue shared by the tensor operator families (registers no operator).

Layouts are decided when the graph is built, so some rules (axis names, a layout that
must fit a shape known only at run time) need the layouts inside the kernel: the
``layout_instance`` factory hands them over as the private arguments ``_in_layouts`` and
``_out_layout``. ``BatchStage`` runs operators that need the whole batch (pad, one_hot).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stoker.operators.machinery.base import SampleOp


def layout_instance(op: Any, pipeline: Any) -> SampleOp:
    inst = SampleOp(op, pipeline)
    inst.args = {**op.args, **layout_args(op)}
    return inst


def layout_args(op: Any) -> dict:
    return {"_in_layouts": [n.layout or "" for n in op.inputs],
            "_out_layout": op.outputs[0].layout or ""}


def check_out_layout(ndim: int, args: dict, hint: str = "") -> None:
    """The static output layout must fit the shape computed at run time."""
    layout = args.get("_out_layout", "")
    if layout and len(layout) != ndim:
        raise ValueError(f"the output is {ndim}-D but its layout {layout!r} has {len(layout)} "
                         f"letters{hint}")


def in_layout(args: dict, k: int = 0) -> str:
    layouts = args.get("_in_layouts") or []
    return layouts[k] if k < len(layouts) else ""


def common_row(value: Any) -> Any:
    """A per-sample argument of a dense chunk (stacked on axis 0) as one value, when every
    sample has the same; a constant as it is. Raises so the executor falls back to the
    per-sample kernel when the values differ."""
    if not isinstance(value, np.ndarray):
        return value
    if len(value) and not (value == value[0]).all():
        raise ValueError("per-sample values differ within the chunk")
    return value[0]


def per_sample_values(name: str, args: dict, argv: dict, n: int) -> list | None:
    """A batch-stage argument as one value per sample (None when not given)."""
    if name in argv:
        return list(argv[name])
    value = args.get(name)
    return None if value is None else [value] * n


def batch_of(samples: list[np.ndarray]) -> Any:
    """Per-sample results as a batch value: dense when shapes and types agree."""
    if samples and all(s.shape == samples[0].shape and s.dtype == samples[0].dtype
                       for s in samples):
        return np.stack(samples)
    return samples


class BatchStage:
    """A batch-stage operator instance: ``run(ins, args, argv, n) -> outputs`` sees the batch.

    ``args`` holds the constants and the layouts; ``argv`` the per-sample argument values,
    each a dense array or a list over the batch.
    """

    vectorized = False

    def __init__(self, op: Any, pipeline: Any, run: Callable[..., Any]):
        self.op = op
        self.args = {**op.args, **layout_args(op)}
        self.run = run

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        n = len(ins[0]) if ins else bctx.size
        out = self.run(ins, self.args, argv, n)
        return out if isinstance(out, tuple) else (out,)


def batch_stage(run: Callable[..., Any]) -> Callable[[Any, Any], BatchStage]:
    return lambda op, pipeline: BatchStage(op, pipeline, run)
