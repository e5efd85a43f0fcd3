"""Per-operator timing: what ``stoker profile`` records and writes.

When a ``Profiler`` is attached to a pipeline's executor, every operator call on every
chunk, every source and every whole batch is recorded as (name, thread, batch, start,
duration). ``chrome_trace()`` gives JSON for chrome://tracing or Perfetto; ``table()``
sums the time per operator. Detached (the default), the executor pays one attribute test
per operator call.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any


class Profiler:
    def __init__(self) -> None:
        self._events: list[tuple[str, str, int, int, float, float]] = []
        self._lock = threading.Lock()
        self._origin = time.perf_counter()

    def record(self, name: str, category: str, batch: int, start: float, end: float) -> None:
        event = (name, category, threading.get_ident(), batch, start, end)
        with self._lock:
            self._events.append(event)

    def clear(self) -> None:
        with self._lock:
            self._events.clear()

    def chrome_trace(self) -> dict[str, Any]:
        """Trace Event Format: one complete ('X') event per record, microseconds."""
        with self._lock:
            events = list(self._events)
        threads = {tid: k for k, tid in enumerate(sorted({e[2] for e in events}))}
        trace = [{"name": name, "cat": cat, "ph": "X", "pid": 1, "tid": threads[tid],
                  "ts": (start - self._origin) * 1e6, "dur": (end - start) * 1e6,
                  "args": {"batch": batch}}
                 for name, cat, tid, batch, start, end in events]
        trace += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": k,
                   "args": {"name": f"thread {k}"}} for k in threads.values()]
        return {"traceEvents": trace, "displayTimeUnit": "ms"}

    def table(self) -> list[dict[str, Any]]:
        """Time per operator (summed over threads), largest first."""
        totals: dict[tuple[str, str], list[float]] = defaultdict(list)
        with self._lock:
            for name, cat, _, _, start, end in self._events:
                totals[(name, cat)].append(end - start)
        work = sum(sum(v) for (name, cat), v in totals.items() if cat != "batch") or 1.0
        rows = [{"op": name, "kind": cat, "calls": len(v), "total_s": sum(v),
                 "mean_ms": sum(v) / len(v) * 1e3,
                 "share": sum(v) / work if cat != "batch" else None}
                for (name, cat), v in totals.items()]
        return sorted(rows, key=lambda r: -r["total_s"])

    def format_table(self) -> str:
        lines = [f"{'operator':<32} {'kind':<7} {'calls':>7} {'total s':>9} {'mean ms':>9} "
                 f"{'share':>7}"]
        for r in self.table():
            share = "" if r["share"] is None else f"{r['share']:>6.1%}"
            lines.append(f"{r['op']:<32} {r['kind']:<7} {r['calls']:>7} {r['total_s']:>9.3f} "
                         f"{r['mean_ms']:>9.3f} {share:>7}")
        return "\n".join(lines)


def attach(pipeline: Any) -> Profiler:
    """Builds ``pipeline`` if needed and starts recording its operators."""
    pipeline.build()
    profiler = Profiler()
    pipeline._runtime.executor.profiler = profiler
    return profiler
