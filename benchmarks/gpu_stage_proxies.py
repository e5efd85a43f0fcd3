"""The GPU part of the ResNet-50 train and val pipelines on torch CPU tensors: torch
operations, views and host-to-device copies per batch (the proxies of issue 21, counted as
``tests/gpu/test_gpu_batch_proxies.py`` counts them) and milliseconds per batch, for the
batched stage and for the operators sample by sample (fusion off, batched paths off).

    STOKER_GPU_ON_CPU=1 python benchmarks/gpu_stage_proxies.py --batches 4,64,256

On CPU tensors the milliseconds are the CPU doing the arithmetic, not a GPU's launch
overhead: the counts are what carries over to a GPU (each op at least one launch there).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests"),
                os.path.join(HERE, "..", "tests", "gpu")]


def measure(name: str, batch: int, per_sample: bool, runs: int) -> tuple:
    import pytest
    from gpu_stage_probe import StageProbe
    from test_gpu_batch_proxies import PIPES

    from stoker.graph import fuse
    from stoker.kernels.gpu.image import geometry, resize

    mp = pytest.MonkeyPatch()
    if per_sample:
        mp.setattr(fuse, "ENABLED", False)
        mp.setattr(resize, "resample_batch", lambda *a: None)
        mp.setattr(geometry, "_cmn_batched", lambda *a: None)
    try:
        pipe = PIPES[name](batch)
        with StageProbe() as probe:
            pipe.run()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            pipe.run()
            times.append(time.perf_counter() - start)
        pipe.close()
    finally:
        mp.undo()
    count = probe.batches[-1]
    return count.n_ops, count.n_views, len(count.uploads), statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="4,64,256")
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    os.environ.setdefault("STOKER_GPU_ON_CPU", "1")
    print(f"{'pipeline':8} {'batch':>5} {'path':10} {'ops':>6} {'views':>6} {'copies':>6} "
          f"{'ms/batch':>9}")
    for name in ("train", "val"):
        for batch in (int(b) for b in opts.batches.split(",")):
            for per_sample in (True, False):
                ops, views, copies, ms = measure(name, batch, per_sample, opts.runs)
                path = "per-sample" if per_sample else "batched"
                print(f"{name:8} {batch:5d} {path:10} {ops:6d} {views:6d} {copies:6d} "
                      f"{ms:9.1f}")


if __name__ == "__main__":
    main()
