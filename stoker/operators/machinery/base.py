"""The default operator instance: per-sample kernels, batch kernels on dense chunks.

An operator with a ``batch_kernel`` gets whole dense chunks (one call, no per-sample
Python); given ragged data, or lacking one, it runs ``kernel`` sample by sample. A failure
is re-raised as a ``SampleError`` naming the operator, the user's line and the sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import SampleError
from stoker.executor.context import FAILED, ChunkContext, SampleContext
from stoker.graph.node import OpNode

# Samples of at most this size, given as a list of one shape and type, are stacked into
# one chunk for an operator's batch kernel: copying them costs less than a call per sample,
# and the batch kernel's dense output needs no stacking downstream (a 224 x 224 image list
# through crop_mirror_normalize: run() 11.9 -> 7-10 ms a batch of 32 on 2 cores, and the
# plugins no longer stack it).
STACK_MAX_BYTES = 1 << 20


def _stacked(x: Any) -> Any:
    """A list input as one dense chunk when its samples are small and alike, else as is."""
    if type(x) is not list or not x:
        return x
    first = x[0]
    if type(first) is not np.ndarray or first.nbytes > STACK_MAX_BYTES:
        return x
    shape, dtype = first.shape, first.dtype
    for s in x:
        if type(s) is not np.ndarray or s.shape != shape or s.dtype != dtype:
            return x
    return np.stack(x)


def as_outputs(result: Any, n_out: int) -> tuple:
    if n_out == 1:
        return (result,)
    return tuple(result)


def sample_error(op: OpNode, sctx: SampleContext, e: BaseException) -> SampleError:
    where = sctx.describe()
    return SampleError(
        f"{op.describe()} failed on {where}: {type(e).__name__}: {e}",
        op=op.schema.fn_name, source=where, where=op.where,
    )


def batch_error(op: OpNode, iteration: int, e: BaseException) -> SampleError:
    """A failure of an operator that works on the whole batch (no one sample to name)."""
    return SampleError(f"{op.describe()} failed on batch {iteration}: {type(e).__name__}: "
                       f"{e}", op=op.schema.fn_name, where=op.where)


class SampleOp:
    def __init__(self, op: OpNode, pipeline: Any = None):
        self.op = op
        self.kernel = op.schema.kernel
        self.batch_kernel = op.schema.batch_kernel
        # Kernels that depend on the input layout (images) read it from here.
        self.args = {**op.args, "_in_layouts": tuple(n.layout or "" for n in op.inputs)}
        self.n_out = len(op.outputs)
        self.vectorized = self.batch_kernel is not None

    def run_chunk(self, ins: list, argv: dict, ctx: ChunkContext) -> tuple:
        if self.batch_kernel is not None:
            ins = [_stacked(x) for x in ins]
        if self.batch_kernel is not None and all(isinstance(x, np.ndarray) for x in ins) and \
                all(isinstance(v, np.ndarray) for v in argv.values()):
            try:
                return as_outputs(self.batch_kernel(ins, {**self.args, **argv}, ctx), self.n_out)
            except Exception as e:
                if self.kernel is None:
                    raise sample_error(self.op, ctx.sample(0), e) from e
                # Fall through: the per-sample pass names the sample that fails.
        return self._per_sample(ins, argv, ctx)

    def _per_sample(self, ins: list, argv: dict, ctx: ChunkContext) -> tuple:
        kernel = self.kernel
        if kernel is None:
            raise SampleError(f"{self.op.describe()}: needs uniform sample shapes for its "
                              "batch kernel", op=self.op.schema.fn_name, where=self.op.where)
        outs: list[list] = [[] for _ in range(self.n_out)]
        skipping = ctx.batch.failures is not None
        for j in range(ctx.n):
            sctx = ctx.sample(j)
            if skipping and (any(x[j] is FAILED for x in ins) or
                             any(v[j] is FAILED for v in argv.values())):
                for lst in outs:  # failed upstream (on_error="skip"): pass the stand-in on
                    lst.append(FAILED)
                continue
            args = self.args if not argv else {**self.args, **{k: v[j] for k, v in argv.items()}}
            try:
                res = as_outputs(kernel([x[j] for x in ins], args, sctx), self.n_out)
            except Exception as e:
                err = e if isinstance(e, SampleError) else sample_error(self.op, sctx, e)
                if not ctx.batch.fail(ctx.lo + j, str(err)):
                    if err is e:
                        raise
                    raise err from e
                res = (FAILED,) * self.n_out
            for lst, r in zip(outs, res, strict=True):
                lst.append(r if r is FAILED else np.asarray(r))
        return tuple(outs)
