"""The GIL-held work per batch of the fused image lane at N threads, predicted from this
machine's timings: chunked (each chunk a call) against shared (each thread one call per
batch that takes samples one at a time).

Where work is handed out in chunks, every chunk pays the Python between compiled calls
(the executor's chunk step, the lane's preparation, numba's argument checks), and that
Python runs on cold caches after tens of milliseconds of decoding. At N threads the guided
schedule cuts a batch into more, smaller chunks; where the threads share the batch, each
pays it once a batch. Measured here, in the pipeline, at 2 threads: ``time.thread_time``
of each chunk task or thread entry minus that of the compiled calls inside it (numba's
argument checks fall inside the calls: the figure is a lower bound). The model:

    GIL-held time per batch at N threads = producer serial + entries(N) x Python per entry

with entries(N) the chunks the executor's guided schedule makes at N threads (chunked) or
N (shared), and the producer's serial time from ``producer_serial.py``. The pipeline's
batch time at N threads is about batch x per-image time / N: the GIL's load is the ratio.

It then plays both schedules at N threads with these figures (``thread_model.py``): the
fraction of N one-thread processes the threads reach. The model is fitted to the one
16-core run there is (the kit's ``scaling`` step, chunked, before the threads shared the
batch: 0.48 of 16 processes at batch 64, 0.71 at 256): it gives those figures (0.45-0.47
and 0.71-0.75) with each entry's Python at 1.75x what is measured here (numba's argument
checks and the executor's chunk step are not in the measurement; 16 threads contend for
caches) and 30 us a GIL hand-off (a waiting thread's wake-up). Two figures fit two
constants: the fit is not a test, and the prediction stays one until a 16-core run.

    .venv/bin/python benchmarks/gil_per_batch.py /tmp/ds2k --pipeline train --batch 256
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

import thread_model

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def _child(mode: str, name: str, root: str, batch: int, batches: int) -> None:
    """Prints (Python CPU per entry, entries per batch, CPU per image) of one mode."""
    import stoker
    from stoker.cli import pipelines
    from stoker.operators.image import decode_resize as DR

    if mode == "chunked":
        del DR._DecodeResizeOp.shared
    spent = {"entries": 0, "outside": 0.0, "images": 0}
    inside = threading.local()
    lock = threading.Lock()
    work, make = DR._Lane.work, DR._Lane.make

    def timed_work(self, claims, leave=0):
        inside.t = 0.0
        start = time.thread_time()
        work(self, claims, leave)
        outside = time.thread_time() - start - inside.t
        with lock:
            spent["entries"] += 1
            spent["outside"] += outside

    def timed_make(prep):
        lane = make(prep)
        if lane is not None:
            call = lane.call

            def timed_call(*args):
                start = time.thread_time()
                try:
                    return call(*args)
                finally:
                    inside.t += time.thread_time() - start
            lane.call = timed_call
        return lane

    DR._Lane.work = timed_work
    DR._Lane.make = staticmethod(timed_make)
    if mode == "chunked":  # (the chunk task's own Python, around the operator's)
        run_chunk = DR._DecodeResizeOp.run_chunk

        def timed_chunk(self, ins, argv, ctx):
            start = time.thread_time()
            out = run_chunk(self, ins, argv, ctx)
            with lock:
                spent["outside"] += time.thread_time() - start
            return out
        DR._DecodeResizeOp.run_chunk = timed_chunk

        def timed_work_chunked(self, claims, leave=0):  # counted by timed_chunk instead
            inside.t = 0.0
            work(self, claims, leave)
            with lock:
                spent["entries"] += 1
                spent["outside"] -= inside.t
        DR._Lane.work = timed_work_chunked
    pipe = pipelines.build(name, stoker, root, batch, 2)
    for _ in range(4):
        pipe.run()
    spent.update(entries=0, outside=0.0)
    cpu = time.process_time()
    for _ in range(batches):
        pipe.run()
    cpu = time.process_time() - cpu
    per_image = cpu / (batches * batch)
    print(spent["outside"] / max(1, spent["entries"]), spent["entries"] / batches, per_image)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="JPEGs in class sub-folders (stoker make-dataset)")
    ap.add_argument("--pipeline", default="train")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=16, help="N, the threads predicted for")
    ap.add_argument("--serial-ms", type=float, default=0.92,
                    help="the producer's serial CPU per batch (producer_serial.py)")
    ap.add_argument("--entry-factor", type=float, default=1.75,
                    help="the model's Python per entry over the figure measured here")
    ap.add_argument("--switch-us", type=float, default=30.0,
                    help="the model's GIL hand-off, in us")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        _child(opts.child[0], opts.child[1], opts.folder, opts.batch, opts.batches)
        return
    from stoker.executor.executor import Executor

    rows = {}
    for mode in ("chunked", "shared"):
        got = []
        for _ in range(opts.rounds):
            out = subprocess.run([sys.executable, __file__, opts.folder, "--child", mode,
                                  opts.pipeline, "--batch", str(opts.batch), "--batches",
                                  str(opts.batches)], capture_output=True, text=True,
                                 check=True).stdout.split()
            got.append([float(x) for x in out[-3:]])
        rows[mode] = [statistics.median(g[i] for g in got) for i in range(3)]
    n, t = opts.batch, opts.threads
    per_image = rows["shared"][2]
    # The guided schedule at N threads, with chunks of at least MIN_CHUNK_SECONDS of work.
    fake = Executor.__new__(Executor)
    fake.num_threads = t
    smallest = max(1, int(Executor.MIN_CHUNK_SECONDS / per_image))
    entries = {"chunked": len(fake._guided(n, smallest)), "shared": t}
    batch_ms = n * per_image / t * 1e3
    print(f"{opts.pipeline}, batch {n}: CPU per image {per_image * 1e3:.2f} ms; at {t} "
          f"threads a batch takes about {batch_ms:.1f} ms")
    for mode, (outside, measured_entries, _) in rows.items():
        held = opts.serial_ms + entries[mode] * outside * 1e3
        times = thread_model.sample_times(per_image)
        ratio = thread_model.simulate(times, n, t, opts.serial_ms * 1e-3,
                                      outside * opts.entry_factor, mode,
                                      switch=opts.switch_us * 1e-6)
        print(f"  {mode:8s} Python per entry {outside * 1e6:6.0f} us ({measured_entries:.1f} "
              f"entries a batch at 2 threads); at {t} threads {entries[mode]} entries: GIL "
              f"held {held:.1f} ms a batch, {held / batch_ms:.0%} of the batch time; the "
              f"model: {ratio:.2f} of {t} processes")


if __name__ == "__main__":
    main()
