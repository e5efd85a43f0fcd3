"""``stoker build-kernels``: compiles stoker's kernels for this machine ahead of the first
pipeline, as an install step (``make setup`` runs it; pip users run it once after
``pip install stoker``, or in their container image's build).

stoker's CPU kernels are numba code compiled for the CPU they run on and cached on disk
(beside the package, or under ``NUMBA_CACHE_DIR``). Without this step the first image
pipeline of a fresh install compiles them before its first batch: 15-20 s on 2 cores, of
which one kernel (the fused decode-crop-resize-normalize loop that the ResNet-50 training
and validation graphs share, one specialisation for both) takes 90%. With it, the first
batch loads the compiled code: about 1 s. Compiling takes as long here as it would there;
this moves it off the training job's start.

The built-in benchmark pipelines (``stoker.cli.pipelines``) run on a few generated JPEGs,
in one worker process per group, so every kernel they use is compiled and saved the way a
user's pipeline would use it. Kernels of other operator families (audio, video, detection,
...) still compile on their first use (0.1-3 s each).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

# Each group runs in its own process, its pipelines in order. The first group's first
# pipeline compiles the shared fused image loop; the rest of that group then load it
# instead of compiling it again beside it. The other groups compile what no image
# pipeline of the first group needs.
GROUPS = (("train", "val", "train-unfused", "decode-crop", "decode"), ("cifar",))


def build_kernels(jobs: int = 0, quiet: bool = False,
                  groups: tuple[tuple[str, ...], ...] = GROUPS) -> int:
    """Runs every group's pipelines in worker processes (at most ``jobs`` at once, 0 = one
    per group); returns 0, or the first failing worker's exit code."""
    from stoker.cli.make_dataset import make_dataset

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="stoker-kernels-") as data:
        make_dataset(data, images=8, classes=2)
        pending = [list(g) for g in groups]
        running: list[tuple[subprocess.Popen, list[str]]] = []
        failed = 0
        while pending or running:
            while pending and len(running) < (jobs or len(groups)):
                group = pending.pop(0)
                cmd = [sys.executable, "-m", "stoker.cli.build_kernels", data, *group]
                running.append((subprocess.Popen(cmd), group))
            proc, group = running.pop(0)
            code = proc.wait()
            if code and not failed:
                failed = code
                print(f"stoker build-kernels: compiling for {', '.join(group)} failed "
                      f"(exit code {code}; its error is above)", file=sys.stderr)
    if not quiet and not failed:
        where = os.environ.get("NUMBA_CACHE_DIR") or "beside stoker's kernel modules"
        print(f"stoker build-kernels: kernels compiled for this CPU in "
              f"{time.perf_counter() - start:.1f} s (cached {where})")
    return failed


def _compile(data: str, names: list[str]) -> None:
    """Builds and runs each named pipeline for two batches (a worker's job)."""
    import stoker
    from stoker.cli import pipelines

    for name in names:
        pipe = pipelines.build(name, stoker, data, 4, 1)
        for _ in range(2):
            pipe.run()
        pipe.close()


if __name__ == "__main__":
    _compile(sys.argv[1], sys.argv[2:])
