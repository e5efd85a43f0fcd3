"""Checkpoints: where a pipeline stands, as a JSON string, and resuming from one.

Random operators draw from (operator seed, epoch, sample index in the epoch), so a
pipeline's position is small: the pipeline seed, its counters (batch number, epoch, index
of the next sample in the epoch) and the state of each stateful operator (a reader's
cursor, an external_source's iteration and epoch). Operators are named by their place in
trace order and their schema name, so a checkpoint restores into any pipeline defined by
the same function, and a different pipeline is refused with what differs.

Batches are made ahead of the consumer, so the ``Tracker`` records the state at the start
of every batch it makes; a checkpoint is the state at the start of the first batch not yet
returned. Two more things make a resumed pipeline's stream bit-identical to the original's
one, whatever the prefetch depth:

* ``replay``: how many batches were scheduled from that batch on. The resumed pipeline
  schedules as many at its first run, so a later ``reset()`` lands on the same batch (the
  batches made before a reset keep the old epoch's random draws, as in DALI).
* ``resets``: resets already applied to batches made but not yet returned, by distance
  from the checkpoint's batch; the resumed pipeline applies them at the same batches.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections import deque
from typing import Any

from stoker.errors import PipelineError

FORMAT = "stoker.pipeline.checkpoint"
VERSION = 1


def traced_names(pipe: Any) -> list[str]:
    """The schema name of each operator the user's pipeline traced, in trace order. Fusion
    (graph/fuse.py, with the families' rules) rewrites operators in place at build(), and a
    restored pipeline is checked before its build: a checkpoint names the operators as traced,
    so it restores into the same pipeline whichever rules fired (or none)."""
    plan = getattr(pipe, "_plan", None)
    traced = plan.traced if plan is not None else {}
    return [traced.get(op, op.schema.name) for op in pipe._ops]


def op_keys(pipe: Any) -> dict[Any, str]:
    """Each traced operator's stable name: its index in trace order and its schema name."""
    return {op: f"{k}:{name}" for k, (op, name) in enumerate(zip(pipe._ops,
                                                                 traced_names(pipe),
                                                                 strict=True))}


def stateful(pipe: Any) -> dict[str, Any]:
    """The operator instances a checkpoint saves (those with ``state()`` and ``restore()``),
    by stable name."""
    keys = op_keys(pipe)
    return {keys[op]: inst for op, inst in pipe._instances.items()
            if op in keys and callable(getattr(inst, "state", None))
            and callable(getattr(inst, "restore", None))}


def capture(pipe: Any, insts: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's state now, before its next batch is made (``insts``: ``stateful``'s
    map of its operators)."""
    return {"batch": pipe._iteration, "epoch": pipe._epoch, "first_index": pipe._first_index,
            "operators": {key: inst.state() for key, inst in insts.items()}}


def warn_unsaved_sources(pipe: Any) -> None:
    """As DALI: a source whose position cannot be saved starts over when restored."""
    for op, inst in pipe._instances.items():
        why = getattr(inst, "unsaved_state", lambda: None)()
        if why:
            warnings.warn(f"{op.describe()}: checkpointing is enabled, but {why}; a pipeline "
                          "restored from a checkpoint asks this source again from its "
                          "beginning, so adjust the source to resume where it should, or "
                          "use a callback that takes SampleInfo/BatchInfo (or the "
                          "iteration number)", stacklevel=4)


def encode(state: dict[str, Any], pipe: Any, *, replay: int, resets: list[int],
           iterator: Any) -> str:
    doc = {"format": FORMAT, "version": VERSION,
           "graph": traced_names(pipe), "seed": pipe._seed,
           "first_run": pipe._first_run, "replay": replay, "resets": resets,
           "iterator": iterator, **state}
    return json.dumps(doc, separators=(",", ":"))


def _invalid(why: str) -> PipelineError:
    return PipelineError(f"Pipeline(checkpoint=...): not a valid stoker checkpoint ({why}); "
                         "pass the string returned by pipe.checkpoint() or an iterator's "
                         "checkpoints(), or the contents of the file checkpoint(filename) "
                         "wrote")


def decode(text: Any) -> dict[str, Any]:
    """Parses a checkpoint (str or bytes) and checks its shape; never trusts it further."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("bytes that are not UTF-8 text") from None
    if not isinstance(text, str):
        raise _invalid(f"a {type(text).__name__}, not a string")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _invalid(f"not JSON: {e.msg} at character {e.pos}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _invalid("no stoker checkpoint header")
    if doc.get("version") != VERSION:
        raise PipelineError(f"Pipeline(checkpoint=...): the checkpoint has format version "
                            f"{doc.get('version')!r}; this stoker reads version {VERSION}")
    shape = {"graph": list, "seed": int, "first_run": bool, "replay": int, "resets": list,
             "batch": int, "epoch": int, "first_index": int, "operators": dict}
    for key, kind in shape.items():
        if not isinstance(doc.get(key), kind):
            raise _invalid(f"field {key!r} is missing or not a {kind.__name__}")
    return doc


def check_graph(doc: dict[str, Any], pipe: Any) -> None:
    """Refuses a checkpoint taken from a pipeline with other operators, naming the first
    difference (the operators are compared in trace order)."""
    theirs, ours = doc["graph"], traced_names(pipe)
    if theirs == ours:
        return
    for k, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        if a != b:
            raise PipelineError(f"Pipeline(checkpoint=...): the checkpoint comes from another "
                                f"pipeline: its operator {k} is fn.{a}, here it is fn.{b} "
                                f"({pipe._ops[k].describe()})")
    raise PipelineError(f"Pipeline(checkpoint=...): the checkpoint comes from another "
                        f"pipeline: it has {len(theirs)} operators, this pipeline "
                        f"{len(ours)}")


class Tracker:
    """Records, for a pipeline with checkpointing enabled, what a checkpoint needs."""

    def __init__(self, pipe: Any, doc: dict[str, Any] | None):
        self._lock = threading.Lock()
        self._starts: dict[int, dict[str, Any]] = {}  # batch number -> state at its start
        self._unread: deque[int] = deque()  # batches made, not yet taken, in order
        self._last_taken: int | None = None
        self._ended_at: int | None = None  # the batch whose source raised StopIteration
        self._resets: list[list] = []  # [batch number, applied]
        self.replay = 0  # batches to schedule at the first run (restored pipelines)
        self.iterator_data: Any = None
        self.restored = doc is not None
        self._insts = stateful(pipe)  # the pipeline's operators are final once built
        if doc is not None:
            self._restore(pipe, doc)
        # The batch being made (None when the producer is idle) and the next one to make;
        # the tracker keeps its own, as the pipeline's counter moves outside this lock.
        self._busy: int | None = None
        self._next = pipe._iteration

    def _restore(self, pipe: Any, doc: dict[str, Any]) -> None:
        insts = self._insts
        saved = doc["operators"]
        if set(saved) != set(insts):
            raise PipelineError(f"Pipeline(checkpoint=...): the checkpoint comes from another "
                                f"pipeline: it saves operators {sorted(saved)}, this pipeline "
                                f"has {sorted(insts)}")
        for key, inst in insts.items():
            try:
                inst.restore(saved[key])
            except (KeyError, TypeError, ValueError) as e:
                raise PipelineError(f"Pipeline(checkpoint=...): cannot restore operator "
                                    f"{key}: {e}") from None
        pipe._iteration, pipe._epoch = doc["batch"], doc["epoch"]
        pipe._first_index, pipe._first_run = doc["first_index"], doc["first_run"]
        self.replay = doc["replay"]
        self._resets = [[doc["batch"] + int(r), False] for r in doc["resets"]]
        self.iterator_data = doc.get("iterator")

    # -- the producer's side ---------------------------------------------------------------
    def batch_starts(self, pipe: Any, reset_sources: Any) -> None:
        """Before batch ``pipe._iteration`` is made: applies a reset a restored checkpoint
        scheduled for this batch, and records the state the batch starts from."""
        with self._lock:
            i = self._busy = pipe._iteration
            for r in self._resets:
                if r[0] == i and not r[1]:
                    reset_sources()
                    r[1] = True
            self._starts[i] = capture(pipe, self._insts)
            oldest = min(self._unread[0] if self._unread else i, self._last_taken or 0)
            for k in [k for k in self._starts if k < oldest]:
                del self._starts[k]

    def batch_made(self, index: int, ended: bool) -> None:
        with self._lock:
            self._busy, self._next = None, index + 1
            self._unread.append(index)
            if ended:
                self._ended_at = index

    # -- the consumer's side ---------------------------------------------------------------
    def batch_taken(self) -> None:
        with self._lock:
            if self._unread:
                self._last_taken = self._unread.popleft()

    def reset_applied(self, index: int) -> None:
        """A reset before batch ``index``; an end-of-stream marker not yet taken is dropped
        by it (the prefetcher does), so it is no longer a batch to take."""
        with self._lock:
            if self._ended_at is not None and self._unread and self._unread[-1] == self._ended_at:
                self._unread.pop()
            self._ended_at = None
            self._resets.append([index, True])
            self._resets = [r for r in self._resets if r[0] >= (self._last_taken or 0)]

    def snapshot(self, pipe: Any, pending: int, back: int) -> tuple[dict, int, list[int]]:
        """The state at the first batch not taken (``back=1``: at the last one taken, which
        an iterator holds unreturned), the batches scheduled from there, and the resets to
        apply at later batches."""
        with self._lock:
            after = self._unread[0] if self._unread else \
                self._next if self._busy is None else self._busy
            start = after
            if back:
                if self._last_taken is None:
                    raise PipelineError("checkpoint: no batch was taken yet")
                start = self._last_taken
            state = self._starts.get(start)
            if state is None:
                # Not started: nothing is in flight and the producer waits on this lock
                # before changing anything, so the current state is the batch's.
                if start != self._next or self._busy is not None:
                    raise PipelineError(f"checkpoint: the state of batch {start} was not kept")
                state = capture(pipe, self._insts)
            resets = [j - start for j, applied in self._resets
                      if (j > start if applied else j >= start)]
            return state, pending + (after - start), resets
