"""A model of the pipeline's threads on N cores: what fraction of N one-thread processes
N threads reach, from timings measured on this machine (``gil_per_batch.py`` measures
them and calls ``simulate``; it can also be run alone with stated figures).

It plays the executor's schedule of one sample stage, batch after batch, as events:

* the producer thread does the batch's serial work (``serial``: reading, draws, the
  batch's preparation; ``producer_serial.py``), holding the interpreter's lock (GIL), then
  hands the batch out and works on it like any worker;
* **shared** (``executor._run_shared``): the producer posts one entry per worker; each
  thread's entry pays ``entry`` seconds of Python under the GIL, then takes samples one at
  a time (no GIL) until none is left; deferring, the producer stops when at most
  ``max(2, workers)`` are left and goes on to the next batch;
* **chunked** (as before the threads shared the batch): the batch is cut into the
  guided schedule's chunks; every chunk pays ``entry`` under the GIL; the producer leaves
  the last two chunks to the workers;
* a worker takes the hand-outs in order (the pool's queue); the GIL is a first-come
  queue, and the producer's serial work holds it in pieces of ``piece`` seconds (it lets
  go at every compiled call and lock wait; ``piece=serial`` is the worst case: one block);
* each sample costs its own time (``times``, cycled); the consumer takes batches at once.

Throughput is counted from the fifth batch's end to the last's; 16 processes are taken to
scale perfectly (``N / mean time``), so the ratio is the threads' loss alone.

    .venv/bin/python benchmarks/thread_model.py --per-image-ms 1.7 --serial-ms 0.6 \\
        --entry-us 30 --batch 64
"""

from __future__ import annotations

import argparse
import heapq
import itertools
from collections import deque

import numpy as np


def guided(n: int, smallest: int, threads: int) -> list[int]:
    """Chunk sizes of the executor's guided schedule (``Executor._guided``)."""
    sizes, lo = [], 0
    while lo < n:
        size = min(n - lo, max(smallest, -(-(n - lo) // (2 * threads))))
        sizes.append(size)
        lo += size
    return sizes


def sample_times(mean: float, spread: float = 0.5, count: int = 4096) -> np.ndarray:
    """Samples' times for ``simulate``: uniform within mean x (1 +- spread), seeded."""
    return mean * np.random.default_rng(0).uniform(1 - spread, 1 + spread, count)


def simulate(times: np.ndarray, batch: int, threads: int, serial: float, entry: float,
             mode: str = "shared", piece: float = 50e-6, batches: int = 60,
             min_chunk: float = 0.5e-3, switch: float = 0.0) -> float:
    """Images per second of ``threads`` threads over ``batches`` batches divided by that of
    ``threads`` perfect one-thread processes (see the module's text)."""
    samples = itertools.cycle(np.asarray(times, float).tolist())
    mean = float(np.mean(times))
    workers = threads - 1
    if mode == "shared":
        units = [[next(samples) for _ in range(batch)] for _ in range(batches)]
        leave = max(2, workers)
    else:
        sizes = guided(batch, max(1, int(min_chunk / mean)), threads)
        units = [[sum(next(samples) for _ in range(k)) for k in sizes]
                 for _ in range(batches)]
        leave = 2
    taken = [0] * batches  # units handed to a thread, per batch
    left = [len(u) for u in units]  # units not yet finished, per batch
    ended = [0.0] * batches
    gil = [0.0]  # when the GIL is next free

    def held(now: float, length: float) -> float:
        """Takes the GIL at ``now`` (after those already queued) for ``length``: the end.
        A thread that waited gets it ``switch`` seconds after it was let go (its wake-up)."""
        start = now if now >= gil[0] else gil[0] + switch
        gil[0] = start + length
        return gil[0]

    queue: deque[int] = deque()  # hand-outs to the workers, in order (batch numbers)
    idle: deque[int] = deque(range(1, threads))  # workers waiting for a hand-out
    events: list = []
    seq = itertools.count()

    def at(t: float, who: int, what: str, b: int) -> None:
        heapq.heappush(events, (t, next(seq), who, what, b))

    def take(now: float, who: int, b: int, keep: int) -> None:
        """Thread ``who`` takes batch b's next unit (if more than ``keep`` are left)."""
        if taken[b] < len(units[b]) - keep:
            i = taken[b]
            taken[b] += 1
            start = held(now, entry) if mode == "chunked" else now
            at(start + units[b][i], who, "unit", b)
        elif who == 0:
            at(now, 0, "next", b + 1)
        else:
            at(now, who, "free", -1)

    def hand_out(now: float, b: int) -> None:
        count = workers if mode == "shared" else min(workers, len(units[b]) - 1)
        queue.extend([b] * count)
        while queue and idle:
            w = idle.popleft()
            at(now, w, "enter", queue.popleft())

    at(0.0, 0, "next", 0)
    while events:
        now, _, who, what, b = heapq.heappop(events)
        if what == "next":  # the producer starts batch b
            if b >= batches:
                continue
            t = now
            for _ in range(max(1, round(serial / piece))):
                t = held(t, serial / max(1, round(serial / piece)))
            hand_out(t, b)
            at(held(t, entry) if mode == "shared" else t, 0, "work", b)
        elif what == "work":
            take(now, 0, b, leave)
        elif what == "enter":  # a worker starts on a hand-out
            at(held(now, entry) if mode == "shared" else now, who, "work-any", b)
        elif what == "work-any":
            take(now, who, b, 0)
        elif what == "unit":
            left[b] -= 1
            if left[b] == 0:
                ended[b] = now
            take(now, who, b, leave if who == 0 else 0)
        elif what == "free":
            if queue:
                at(now, who, "enter", queue.popleft())
            else:
                idle.append(who)
    first = 5
    made = (batches - first) * batch
    rate = made / (ended[-1] - ended[first - 1])
    return rate / (threads / mean)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-image-ms", type=float, required=True)
    ap.add_argument("--serial-ms", type=float, required=True)
    ap.add_argument("--entry-us", type=float, required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--mode", default="shared", choices=("shared", "chunked"))
    ap.add_argument("--spread", type=float, default=0.5,
                    help="samples' times: uniform within mean x (1 +- spread)")
    ap.add_argument("--piece-us", type=float, default=50.0)
    ap.add_argument("--switch-us", type=float, default=0.0)
    opts = ap.parse_args()
    times = sample_times(opts.per_image_ms * 1e-3, opts.spread)
    ratio = simulate(times, opts.batch, opts.threads, opts.serial_ms * 1e-3,
                     opts.entry_us * 1e-6, opts.mode, opts.piece_us * 1e-6,
                     switch=opts.switch_us * 1e-6)
    print(f"{opts.mode}, batch {opts.batch}, {opts.threads} threads: {ratio:.3f} of "
          f"{opts.threads} processes")


if __name__ == "__main__":
    main()
