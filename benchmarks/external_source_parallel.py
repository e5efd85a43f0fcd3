"""Why ``external_source(parallel=True)`` runs callbacks on threads, not processes.

Times per-sample callbacks of three kinds serially, on 2 threads and on 2 forked
processes (results come back pickled, as any process pool must return them):
numpy work (GIL released), pure-Python work (GIL held), and file reads.

    .venv/bin/python benchmarks/external_source_parallel.py
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

FILES = tempfile.mkdtemp(prefix="stoker-es-")


def numpy_work(i: int) -> np.ndarray:
    x = np.random.default_rng(i).integers(0, 256, (224, 224, 3), dtype=np.uint8)
    return (x.astype(np.float32) * 0.5 + 1).astype(np.uint8)


def python_work(i: int) -> np.ndarray:
    s = 0
    for k in range(20000):
        s += k * i % 7
    return np.array([s], np.int64)


def io_work(i: int) -> np.ndarray:
    with open(os.path.join(FILES, f"{i % 64}.bin"), "rb") as f:
        return np.frombuffer(f.read(), np.uint8)


def main(n: int = 256, workers: int = 2) -> None:
    rng = np.random.default_rng(0)
    for i in range(64):
        with open(os.path.join(FILES, f"{i}.bin"), "wb") as f:
            f.write(rng.integers(0, 256, 100_000, dtype=np.uint8).tobytes())
    print(f"per-sample microseconds, {n} samples, {workers} workers")
    for name, work in [("numpy", numpy_work), ("python", python_work), ("file read", io_work)]:
        start = time.perf_counter()
        for i in range(n):
            work(i)
        serial = time.perf_counter() - start
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(work, range(8)))
            start = time.perf_counter()
            list(pool.map(work, range(n)))
            threads = time.perf_counter() - start
        with mp.get_context("fork").Pool(workers) as pool:
            pool.map(work, range(8))
            start = time.perf_counter()
            pool.map(work, range(n), chunksize=8)
            procs = time.perf_counter() - start
        print(f"  {name:<10} serial {serial / n * 1e6:8.1f}   threads {threads / n * 1e6:8.1f}   "
              f"processes {procs / n * 1e6:8.1f}")


if __name__ == "__main__":
    main()
