"""What N threads give in one process, beside N processes of one thread each.

N threads of one stoker pipeline share the GIL: the Python that runs per image (header
probe, window, taps, allocation, the calls between native kernels) runs one thread at a
time. N processes of one thread each share nothing but the cores. The gap between the
two is what the GIL costs at N threads; DALI (no Python per image) is measured the same
way for comparison. A pipeline's rate is taken in its steady state, after a warm-up, and
the processes of one measurement start together.

Each measurement runs in fresh processes; rounds alternate between them, and medians of
the rounds are compared (the machine is shared and noisy).

``--gil-share`` (needs py-spy) samples a one-thread stoker pipeline twice, once counting
every sample of its per-sample work and once only those that hold the GIL: the share of
each image's time that no other thread can overlap. N threads can give at most about
1 / share times one thread's rate, whatever the cores.

    cd <checkout>
    env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$PWD /work/bench-venv/bin/python \\
        benchmarks/thread_scaling.py /work/ds200 --pipeline train --threads 2
    PATH=$PWD/.venv/bin:$PATH ... benchmarks/thread_scaling.py /work/ds200 --gil-share
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))  # train_bound's pipeline runner


def _child(lib_name: str, name: str, root: str, threads: int, seconds: float) -> None:
    """Builds and warms the pipeline, says "ready", waits for a line, then prints its rate."""
    from train_bound import run_pipeline

    def ready() -> None:
        print("ready", flush=True)
        sys.stdin.readline()

    print(run_pipeline(lib_name, name, root, threads, seconds, ready), flush=True)


def _measure(lib_name: str, name: str, root: str, procs: int, threads: int,
             seconds: float) -> float:
    """Images/s of ``procs`` processes running at once, ``threads`` threads each (summed)."""
    cmd = [sys.executable, __file__, root, "--pipeline", name, "--child", lib_name,
           "--threads", str(threads), "--seconds", str(seconds)]
    children = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True) for _ in range(procs)]
    for c in children:
        if c.stdout.readline().strip() != "ready":
            sys.exit(f"{lib_name} {name} failed to start")
    for c in children:
        c.stdin.write("go\n")
        c.stdin.flush()
    rates = []
    for c in children:
        out, _ = c.communicate()
        if c.returncode != 0:
            sys.exit(f"{lib_name} {name} failed")
        rates.append(float(out.split()[-1]))
    return sum(rates)


def _gil_share(name: str, root: str, seconds: float) -> float:
    """The share of a one-thread pipeline's per-sample work that holds the GIL (py-spy)."""
    spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(spy):
        sys.exit("--gil-share needs py-spy (pip install py-spy)")
    child = [sys.executable, __file__, root, "--pipeline", name, "--child", "stoker",
             "--threads", "1", "--seconds", str(seconds)]
    counts = []
    for only_gil in ([], ["--gil"]):
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "samples")
            subprocess.run([spy, "record", *only_gil, "-r", "500", "--format", "raw", "-o", raw,
                            "--", *child], input="go\n", capture_output=True, text=True,
                           check=True)
            n = 0
            with open(raw) as f:
                for line in f:
                    stack, count = line.rstrip().rsplit(" ", 1)
                    # the per-sample work, not imports or numba compiling on first use
                    if ("run_chunk" in stack or "_run_shared" in stack) and not any(
                            k in stack for k in ("importlib", "llvmlite", "numba/")):
                        n += int(count)
            counts.append(n)
    return counts[1] / counts[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="JPEGs in class sub-folders (stoker make-dataset)")
    ap.add_argument("--pipeline", default="train")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="N: threads of the one process, and processes of one thread")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--gil-share", action="store_true",
                    help="only measure the share of one thread's work that holds the GIL")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        _child(opts.child, opts.pipeline, opts.folder, opts.threads, opts.seconds)
        return
    if opts.gil_share:
        share = _gil_share(opts.pipeline, opts.folder, opts.seconds)
        print(f"{opts.pipeline}: {share:.1%} of one thread's per-sample work holds the GIL; "
              f"at most {1 / share:.1f}x one thread's rate with any number of threads")
        return
    n = opts.threads
    runs = {"stoker 1 thread": ("stoker", 1, 1), f"stoker {n} threads": ("stoker", 1, n),
            f"stoker {n} processes": ("stoker", n, 1)}
    try:
        import nvidia.dali  # noqa: F401
        runs.update({"dali 1 thread": ("dali", 1, 1), f"dali {n} threads": ("dali", 1, n)})
    except ImportError:
        pass
    rates: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(opts.rounds):
        for key, (lib_name, procs, threads) in runs.items():
            rates[key].append(_measure(lib_name, opts.pipeline, opts.folder, procs, threads,
                                       opts.seconds))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rates.items()),
              flush=True)

    def ratio(a: str, b: str) -> None:
        if a in rates and b in rates:
            each = [x / y for x, y in zip(rates[a], rates[b], strict=True)]
            print(f"  {a} / {b}: {statistics.median(each):.2f}x "
                  f"({min(each):.2f}-{max(each):.2f})")

    print(f"\n{opts.pipeline}, images/s, median of {opts.rounds} rounds:")
    for key, v in rates.items():
        print(f"  {key:22s} {statistics.median(v):9,.0f}")
    print("ratios (per round, median and range):")
    ratio(f"stoker {n} threads", "stoker 1 thread")
    ratio(f"stoker {n} processes", "stoker 1 thread")
    ratio(f"stoker {n} threads", f"stoker {n} processes")
    ratio(f"dali {n} threads", "dali 1 thread")


if __name__ == "__main__":
    main()
