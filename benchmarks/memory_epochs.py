"""Does memory stay flat over many epochs? RSS per epoch of the ResNet-50 pipelines.

Users of DALI's CPU pipelines report resident memory that climbs epoch after epoch,
enough that some rebuild their pipelines every epoch to get it back (DALI issue #5087;
the "four times faster" CPU-pipeline write-up). This script runs the benchmark ``train``
pipeline (``stoker.cli.pipelines``: random-crop decode, resize to 224, crop-mirror-
normalize to float CHW) for ``--epochs`` epochs of ``epoch_size // batch`` batches, each
ended by ``reset()`` as a framework iterator ends it, and prints the resident set size
(``/proc/self/statm``) after each epoch, then the ratio of the last epoch's RSS to the
second's. Scenarios (``--scenario``):

- ``train``: one train pipeline alone.
- ``train+val``: a train and a val pipeline (decode, resize shorter 256, centre crop)
  alternating in one process, an epoch of each per round; RSS after each round.
- ``rebuild``: a fresh train pipeline every epoch, the old one closed and dropped (the
  workaround users adopted): what a pipeline leaves behind when it goes.
- ``video``: the video benchmark pipeline (``stoker bench video``: random 16-frame clips
  with stride 2 through ``fn.experimental.readers.video``) on a clip set of ``stoker
  make-dataset --video``; DALI's users report memory growth with its video readers too
  (research/video.md section 3). Each thread keeps a few decoders open, so RSS holds
  their frame pools from epoch 1 on.

    .venv/bin/python -m stoker.cli.main make-dataset /tmp/memds --images 300
    .venv/bin/python benchmarks/memory_epochs.py /tmp/memds [--epochs 20] [--batch 32]
    .venv/bin/python -m stoker.cli.main make-dataset --video /tmp/vds --videos 16 --sizes 360p
    .venv/bin/python benchmarks/memory_epochs.py /tmp/vds/vp9_gop30_360p --scenario video \
        --batch 8

The first epoch allocates the thread pool's and allocator's working set (and numba's
compiled kernels), so epoch 2 is the baseline; ``--limit`` (default 1.05) is the ratio
above which the script exits with status 1.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    """Resident set size of this process, in MiB (second field of /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def run_epoch(pipe, batch: int) -> int:
    """Runs one epoch (``epoch_size // batch`` batches), touching every output as a
    consumer would; returns the number of samples."""
    steps = max(1, pipe.epoch_size("Reader") // batch)
    seen = 0
    for _ in range(steps):
        images, labels = pipe.run()
        seen += len(images)
        images.as_array()  # a dense (N, 3, 224, 224) float32 batch, as a trainer takes it
        labels.as_array()
    pipe.reset()  # the epoch ends, as a framework iterator ends it
    return seen


def scenario(name: str, root: str, batch: int, threads: int) -> Callable[[], int]:
    """A function that runs one epoch (or one round of epochs) of the scenario."""
    import stoker
    from stoker.cli.pipelines import build

    if name == "train":
        train = build("train", stoker, root, batch, threads)
        train.build()
        return lambda: run_epoch(train, batch)
    if name == "train+val":
        train = build("train", stoker, root, batch, threads)
        val = build("val", stoker, root, batch, threads)
        train.build()
        val.build()
        return lambda: run_epoch(train, batch) + run_epoch(val, batch)
    if name == "video":
        video = build("video", stoker, root, batch, threads)
        video.build()
        return lambda: run_epoch(video, batch)
    if name == "rebuild":
        holder: list = []

        def fresh_epoch() -> int:
            if holder:
                holder.pop().close()
                gc.collect()
            pipe = build("train", stoker, root, batch, threads)
            holder.append(pipe)
            return run_epoch(pipe, batch)

        return fresh_epoch
    raise SystemExit(f"memory_epochs: unknown scenario {name!r}")


def measure(name: str, root: str, epochs: int, batch: int, threads: int) -> list[float]:
    """RSS (MiB) after each epoch of the scenario; prints one line per epoch."""
    step = scenario(name, root, batch, threads)
    print(f"scenario {name}: RSS before the first epoch {rss_mib():.1f} MiB", flush=True)
    rss = []
    for epoch in range(1, epochs + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        samples = step()
        rss.append(rss_mib())
        print(f"  epoch {epoch:3d}: {samples:5d} samples in {time.perf_counter() - t0:6.2f} s "
              f"(CPU {time.process_time() - c0:6.2f} s), RSS {rss[-1]:7.1f} MiB", flush=True)
    return rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="image folder (stoker make-dataset)")
    parser.add_argument("--scenario", choices=("train", "train+val", "rebuild", "video",
                                               "all"),
                        default="all",
                        help="'all' runs train, then train+val, each in its own process")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=float, default=1.05,
                        help="largest allowed RSS ratio, last epoch / epoch 2")
    parser.add_argument("--json", help="also write the RSS per epoch (MiB) to this file")
    args = parser.parse_args()
    if args.epochs < 2:
        parser.error("--epochs must be at least 2 (epoch 2 is the baseline)")
    if args.scenario == "all":
        # One process per scenario: each starts from a clean heap, so its numbers do not
        # depend on what the one before it left in the allocator.
        import subprocess

        ok = True
        for name in ("train", "train+val"):
            cmd = [sys.executable, __file__, args.root, "--scenario", name, "--epochs",
                   str(args.epochs), "--batch", str(args.batch), "--threads",
                   str(args.threads), "--limit", str(args.limit)]
            ok &= subprocess.run(cmd).returncode == 0
        return 0 if ok else 1
    rss = measure(args.scenario, args.root, args.epochs, args.batch, args.threads)
    ratio = rss[-1] / rss[1]
    ok = ratio <= args.limit
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump({"scenario": args.scenario, "rss_mib": rss, "ratio": ratio}, f)
    print(f"scenario {args.scenario}: RSS epoch 2 {rss[1]:.1f} MiB, epoch {args.epochs} "
          f"{rss[-1]:.1f} MiB, ratio {ratio:.4f} (limit {args.limit}), peak {max(rss):.1f} "
          "MiB", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
