"""``on_error="skip"``: a sample that fails anywhere in its chain leaves the batch, and the
sources' next samples take its place, so batches stay full.

A failing sample becomes a stand-in (``FAILED``) that later operators pass on untouched;
its row is dropped before any whole-batch stage and at the end. Then the sources are asked
for as many samples as were lost (a *top-up*, same iteration, sample indices running on),
until the batch is full. Sources that cannot give single samples (batch callbacks, fed
batches) are not topped up: their batch comes out short. A reader never tops up across the
end of its epoch, so an iterator's epoch still holds every good sample exactly once; the
batch then comes out short instead.

Which stream positions a batch consumed (``consumed``) and where its delivered samples
sat among them (``offsets``) travel with the batch: iterators count epochs in positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import PipelineError
from stoker.executor.context import BatchContext, merge

# So many failures in a row, with no good sample between, stop the run: every sample is
# probably bad (a wrong folder, a wrong decoder), and skipping would spin forever.
MAX_FAILURES_IN_A_ROW = 100


class Batch(tuple):
    """A pipeline's outputs (a tuple of TensorLists) plus what on_error="skip" did."""

    iteration: int = 0
    consumed: int = 0  # stream positions read for this batch, failed samples included
    offsets: np.ndarray | None = None  # position of each delivered sample among them
    skipped: list[tuple[str, str]] = []  # (source_info, reason) per failed sample
    # The stream position (among ``consumed``) of each entry of ``skipped``, so that an
    # iterator that keeps only the first positions of the batch (the end of its epoch)
    # can take back the entries of the positions it throws away (``retract``).
    skipped_at: list[int] = []


def _keep_rows(value: Any, keep: np.ndarray) -> Any:
    if isinstance(value, np.ndarray):
        return value[keep]
    return [v for v, k in zip(value, keep, strict=True) if k]


class _Round:
    """One pass of the plan over ``n`` fresh samples; drops failed rows, remembering which
    stream positions the surviving rows came from."""

    def __init__(self, ex: Any, bctx: BatchContext):
        self.ex, self.bctx = ex, bctx
        self.rows: np.ndarray | None = None  # position (in this round) of each current row
        self.failed: list[tuple[int, str]] = []

    def _info_lists(self, infos: dict) -> list[str] | None:
        for info in infos.values():
            if info is not None:
                return info
        return None

    def compact(self, values: dict, infos: dict) -> int:
        failures = self.bctx.failures
        n = self.bctx.size
        if self.rows is None:
            self.rows = np.arange(n)
            self.n_source = n
            self.first_infos = self._info_lists(infos)
        if failures:
            keep = np.ones(len(self.rows), bool)
            for row, reason in sorted(failures.items()):
                keep[row] = False
                self.failed.append((int(self.rows[row]), reason))
            failures.clear()
            for node, value in list(values.items()):
                if value is not None and len(value) == len(keep):
                    values[node] = _keep_rows(value, keep)
            for node, info in list(infos.items()):
                if info is not None and len(info) == len(keep):
                    infos[node] = [s for s, k in zip(info, keep, strict=True) if k]
            self.rows = self.rows[keep]
        self.bctx.size = len(self.rows)
        return len(self.rows)

    def run(self) -> tuple[dict, dict, int]:
        """The round's values and source_info lists, failed rows dropped, and how many
        samples the sources gave (the stream positions it consumed)."""
        values, infos = self.ex.run_stages(self.bctx, self.compact)
        self.compact(values, infos)
        return values, infos, self.n_source

    def describe(self, position: int) -> str:
        info = self.first_infos
        if info is not None and position < len(info) and info[position]:
            return info[position]
        return f"sample {position} of batch {self.bctx.iteration}"


def run_skipping(ex: Any, bctx: BatchContext) -> Any:
    """The batch's outputs as a Batch (or, with GPU operators, its CPU part as a
    PartialBatch whose ``skip`` holds the record)."""
    want = bctx.batch_size
    sources = [ex.instances[op] for s in ex.plan.stages if s.kind == "source" for op in s.ops]
    can_top_up = bool(sources) and all(getattr(s, "can_top_up", False) for s in sources)
    pipe = bctx.pipeline
    parts: list[tuple[dict, dict]] = []
    offsets: list[np.ndarray] = []
    skipped: list[tuple[str, str]] = []
    skipped_at: list[int] = []
    consumed = got = 0
    while True:
        sub = BatchContext(bctx.iteration, bctx.first_index + consumed, want - got,
                           pipe, bctx.epoch)
        sub.failures, sub.dropped, sub.topup = {}, [], bool(parts)
        rnd = _Round(ex, sub)
        try:
            values, infos, n = rnd.run()
        except StopIteration:
            if parts:
                break
            raise
        finally:
            skipped.extend(sub.dropped)
            skipped_at.extend([consumed] * len(sub.dropped))
        for position, reason in rnd.failed:
            skipped.append((rnd.describe(position), reason))
            skipped_at.append(consumed + position)
        _count_in_a_row(pipe, rnd, skipped)
        rows = rnd.rows  # set by run(): its compact() runs last
        offsets.append(consumed + rows)
        parts.append((values, infos))
        bctx.variant = sub.variant  # the layouts its sources gave (executor/variants.py)
        consumed += n
        got += len(rows)
        if got >= want or not can_top_up or n == 0 or not rnd.failed:
            break
    bctx.size = consumed
    record = Batch()
    record.iteration, record.consumed = bctx.iteration, consumed
    record.offsets = np.concatenate(offsets) if offsets else np.zeros(0, np.int64)
    record.skipped, record.skipped_at = skipped, skipped_at
    if ex.plan.has_gpu:  # the GPU part goes on from the merged CPU values
        from stoker.executor.gpu import PartialBatch

        values, infos = _merge(ex, parts, _gpu_inputs(ex.plan))
        part = PartialBatch(values, infos, len(record.offsets), bctx.detached())
        part.skip = record
        return part
    return with_record(ex.tensor_lists(*_merge(ex, parts, ex.plan.outputs),
                                       variant=bctx.variant), record)


def with_record(outputs: list, record: Batch) -> Batch:
    """The outputs as a Batch carrying ``record``'s account of what was skipped."""
    batch = Batch(outputs)
    batch.iteration, batch.consumed = record.iteration, record.consumed
    batch.offsets, batch.skipped = record.offsets, record.skipped
    batch.skipped_at = record.skipped_at
    return batch


def retract(pipe: Any, batch: Any, end: int) -> None:
    """An iterator keeps only the positions before ``end`` of ``batch``, which ``pipe``
    has just returned (its epoch ends there): the samples after it belong to no epoch the
    iterator delivers (the reader reads them again in the next one), so their failures
    leave the pipeline's report, which otherwise lists such files twice."""
    at = getattr(batch, "skipped_at", None)
    if not at or max(at) < end:
        return
    n = len(batch.skipped)
    tail = pipe._skipped[len(pipe._skipped) - n:]
    if len(tail) != n or any(a is not b for a, b in zip(tail, batch.skipped, strict=True)):
        return  # not the batch the pipeline returned last: nothing to take back
    pipe._skipped[len(pipe._skipped) - n:] = [
        entry for entry, pos in zip(batch.skipped, at, strict=True) if pos < end]


def _gpu_inputs(plan: Any) -> list:
    """The CPU values the GPU part reads or outputs as they are."""
    made_later = {n for s in plan.stages[plan.gpu_from:] for op in s.ops for n in op.outputs}
    nodes = {n: None for s in plan.stages[plan.gpu_from:] for n in s.reads}
    nodes.update((n, None) for n in plan.outputs if n not in made_later)
    return list(nodes)


def _count_in_a_row(pipe: Any, rnd: _Round, skipped: list) -> None:
    state = getattr(pipe, "_skip_state", None)
    if state is None:
        return
    rows = rnd.rows
    if len(rows):
        last_good = int(rows.max())
        state["in_a_row"] = sum(1 for p, _ in rnd.failed if p > last_good)
    else:
        state["in_a_row"] += len(rnd.failed)
    if state["in_a_row"] >= MAX_FAILURES_IN_A_ROW:
        last = skipped[-1][1] if skipped else "?"
        raise PipelineError(f"on_error='skip': {state['in_a_row']} samples in a row failed, "
                            f"the last with: {last}. Is every sample bad (wrong folder, wrong "
                            "decoder)? Stopping instead of skipping forever")


def _merge(ex: Any, parts: list[tuple[dict, dict]], nodes: list) -> tuple[dict, dict]:
    """The rounds' values of ``nodes`` joined into one batch, with their source_info."""
    if len(parts) == 1:
        return parts[0]
    values: dict = {}
    infos: dict = {}
    for node in nodes:
        pieces = [p[0][node] for p in parts if len(p[0][node])]
        values[node] = merge(pieces) if pieces else parts[0][0][node]
        src = ex.plan.info_from.get(node)
        if src is not None and src not in infos:
            lists = [p[1].get(src) for p in parts]
            infos[src] = None if any(x is None for x in lists) else \
                [s for x in lists for s in x]
    return values, infos
