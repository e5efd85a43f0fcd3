"""The producer's serial work per batch: what one thread does for every batch that no
other thread can share (reading the batch's indices and paths, drawing, cutting the batch
into chunks, merging them, assembling the outputs), against the batch's time.

The pipeline's producer thread also runs chunks of images like any worker; that part is
taken out: the figure is the producer's CPU time (``time.thread_time``, so waiting for the
GIL or for workers does not count) minus its CPU time in chunk tasks (the executor's
per-chunk bookkeeping and the operators' ``run_chunk``: work every thread does for its
own chunks, whose Python share ``thread_scaling.py --gil-share`` counts) and in its part
of a batch the threads share (``_Shared.work``). The producer's
part of that bookkeeping alone is printed beside it. With N threads a batch takes about
``batch x per-image time / N``; the producer keeps up (and stays off the critical path)
while its serial time is a small part of that. Issue 27 asks for at most 1/32 of the batch
time at 16 threads: at 8,000 images/s a batch of 256 takes 32 ms, so at most 1.0 ms.

    .venv/bin/python -m stoker.cli.main make-dataset /tmp/ds2k --images 2048 --classes 16
    .venv/bin/python benchmarks/producer_serial.py /tmp/ds2k --pipeline train --batch 256

(A dataset of many batches: with one batch per epoch every batch would also pay for the
next epoch's shuffle.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


SPENT = {"producer": 0.0, "tasks": 0.0, "ops": 0.0, "batches": 0}
# Running totals of the producer's task and operator time, never reset: each batch counts
# its own part of them (a batch under way when SPENT is reset counts whole or not at all).
_RUNNING = {"tasks": 0.0, "ops": 0.0}
_GENERATION = [0]
_PRODUCERS: set[int] = set()


def _instrument() -> None:
    """Counts the producer's CPU time per batch, and its parts inside chunk tasks and
    inside operators' run_chunk."""
    from stoker.executor import pool, prefetch
    from stoker.operators.image import decode_resize
    from stoker.operators.machinery import base

    make = prefetch.Prefetcher._make

    def timed_make(self, *args, **kwargs):
        _PRODUCERS.add(threading.get_ident())
        generation, before = _GENERATION[0], dict(_RUNNING)
        start = time.thread_time()
        try:
            return make(self, *args, **kwargs)
        finally:
            if generation == _GENERATION[0]:  # (begun before the reset: not counted)
                SPENT["producer"] += time.thread_time() - start
                for key, value in before.items():
                    SPENT[key] += _RUNNING[key] - value
                SPENT["batches"] += 1

    in_task = threading.local()

    def on_producer(fn, *keys):
        def timed(*args):
            if threading.get_ident() not in _PRODUCERS or \
                    (keys == ("ops",) and not getattr(in_task, "on", False)):
                return fn(*args)  # (the batch's draws, outside tasks, are serial work)
            was, in_task.on, start = getattr(in_task, "on", False), True, time.thread_time()
            try:
                return fn(*args)
            finally:
                in_task.on = was
                for key in keys:
                    _RUNNING[key] += time.thread_time() - start
        return timed

    init = pool._Job.__init__

    def timed_init(self, fn, n):
        init(self, on_producer(fn, "tasks"), n)

    prefetch.Prefetcher._make = timed_make
    pool._Job.__init__ = timed_init
    for cls in (base.SampleOp, decode_resize._DecodeResizeOp):
        cls.run_chunk = on_producer(cls.run_chunk, "ops")
    # A stage whose threads share the batch (executor._run_shared): the producer's own
    # part of the samples is a task like the workers'.
    decode_resize._Shared.work = on_producer(decode_resize._Shared.work, "tasks", "ops")


def measure(name: str, root: str, batch: int, threads: int, batches: int) -> tuple:
    """(producer serial CPU seconds per batch, the producer's per-chunk bookkeeping per
    batch, wall seconds per batch)."""
    import stoker
    from stoker.cli import pipelines

    _PRODUCERS.clear()  # (a closed pipeline's thread ids are reused by the next one's)
    pipe = pipelines.build(name, stoker, root, batch, threads)
    for _ in range(4):
        pipe.run()
    SPENT.update(producer=0.0, tasks=0.0, ops=0.0, batches=0)
    _GENERATION[0] += 1
    start = time.perf_counter()
    for _ in range(batches):
        pipe.run()
    wall = (time.perf_counter() - start) / batches
    count = max(1, SPENT["batches"])
    serial = (SPENT["producer"] - SPENT["tasks"]) / count
    bookkeeping = (SPENT["tasks"] - SPENT["ops"]) / count
    pipe.close()
    return serial, bookkeeping, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="JPEGs in class sub-folders (stoker make-dataset)")
    ap.add_argument("--pipeline", default="train")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    opts = ap.parse_args()
    _instrument()
    serial, books, walls = [], [], []
    for _ in range(opts.rounds):
        s, b, w = measure(opts.pipeline, opts.folder, opts.batch, opts.threads, opts.batches)
        serial.append(s)
        books.append(b)
        walls.append(w)
    s, b, w = (statistics.median(x) for x in (serial, books, walls))
    print(f"{opts.pipeline}, batch {opts.batch}, {opts.threads} threads: producer serial CPU "
          f"{s * 1e3:.2f} ms a batch ({s / opts.batch * 1e6:.1f} us an image; rounds "
          f"{', '.join(f'{x * 1e3:.2f}' for x in serial)}); its per-chunk bookkeeping "
          f"{b * 1e3:.2f} ms a batch; batch {w * 1e3:.0f} ms here")


if __name__ == "__main__":
    main()
