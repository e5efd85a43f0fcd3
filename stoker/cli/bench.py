"""``stoker bench``: the same pipeline in stoker and its peers, side by side, alternating.

Each peer (stoker; DALI's CPU backend when nvidia-dali is installed; torchvision's
DataLoader recipe) runs in its own worker process (bench_worker.py). A user's pipeline
file (``file.py[:function]``) runs with stoker and with DALI, whichever of the two it
imports (``pipelines.load_user_pipeline``). Peers start one after
another, so time to first batch is measured uncontended; then measured runs alternate
between peers, so a noisy machine hurts all of them alike (each run after an uncounted
warm-in, and the next one once its peer is idle: bench_worker.py). The table gives
medians, the ratio of stoker to each peer, CPU use (of all cores), time to first batch
and peak memory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any


class Peer:
    def __init__(self, name: str, args: Any, threads: int, env: dict[str, str]):
        self.name = name
        cmd = [sys.executable, "-m", "stoker.cli.bench_worker", "--peer", name,
               "--pipeline", args.pipeline, "--batch-size", str(args.batch_size),
               "--threads", str(threads)]
        if args.data:
            cmd += ["--data", args.data]
        launched = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self.runs: list[dict[str, float]] = []
        self.ready = self._reply() is not None
        # Time to first batch as a user sees it: from launching the process (interpreter,
        # every import, build) until the first batch is out. The worker module's own
        # package, stoker, is imported inside this span, as is each peer's library.
        self.first_batch_s = time.perf_counter() - launched

    def _reply(self) -> dict[str, Any] | None:
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def ask(self, command: str) -> dict[str, Any]:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply = self._reply()
        if reply is None:
            raise RuntimeError(f"stoker bench: the {self.name} worker stopped "
                               f"(exit code {self.proc.wait()})")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            self.proc.wait(timeout=30)


def available(peer: str) -> bool:
    module = {"dali": "nvidia.dali", "torchvision": "torchvision", "decord": "decord"}.get(peer)
    return module is None or importlib.util.find_spec(module.split(".")[0]) is not None and \
        importlib.util.find_spec(module) is not None


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // max(total, 1)
    return "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total}"


def run_bench(args: Any) -> int:
    return 0 if measure(args) is not None else 1


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def measure(args: Any) -> dict[str, Any] | None:
    """Runs the peers side by side and prints the table; returns {"medians": samples/s per
    peer, "stats": each peer's stats} (None when stoker did not start)."""
    from stoker.cli import pipelines

    threads = args.threads or os.cpu_count() or 1
    names = ["stoker"] + [p.strip() for p in args.compare.split(",") if p.strip()]
    print(f"stoker bench {args.pipeline}: batch {args.batch_size}, {threads} threads, "
          f"{args.runs} runs of {args.seconds:.1f} s per peer, alternating")
    env = dict(os.environ)
    if getattr(args, "cold", False) or getattr(args, "uncompiled", False):
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="stoker-cold-")
    if getattr(args, "cold", False):  # a fresh install: its install step builds the kernels
        start = time.perf_counter()
        built = subprocess.run([sys.executable, "-m", "stoker.cli.main", "build-kernels"],
                               env=env, stdout=subprocess.DEVNULL)
        print(f"  install step (stoker build-kernels): {time.perf_counter() - start:.1f} s"
              + ("" if built.returncode == 0 else f", failed ({built.returncode})"))
    peers = []
    for name in names:
        if name in ("torchvision", "decord") and pipelines.is_user_pipeline(args.pipeline):
            print(f"  {name}: no recipe for a user's pipeline file, skipped")
            continue
        if name in ("torchvision", "decord") and (name == "decord") != (args.pipeline
                                                                        == "video"):
            print(f"  {name}: no recipe for {args.pipeline}, skipped")
            continue
        if not available(name):
            print(f"  {name}: not installed, skipped"
                  + (" (pip install nvidia-dali-cuda130)" if name == "dali" else ""))
            continue
        peer = Peer(name, args, threads, env)
        if not peer.ready:
            print(f"  {name}: failed to start (exit code {peer.proc.wait()}), skipped")
            continue
        peer.ask(f"run {min(1.0, args.seconds)}")  # warm-up: queues full, caches hot
        peers.append(peer)
    if not peers or peers[0].name != "stoker":
        for p in peers:
            p.close()
        print("stoker bench: stoker did not start (its error is above): nothing to compare")
        return None
    total = args.runs * len(peers)
    for i in range(args.runs):
        for k, peer in enumerate(peers):
            peer.runs.append(peer.ask(f"run {args.seconds}"))
            if sys.stdout.isatty():
                print("\r  " + _bar(i * len(peers) + k + 1, total), end="", flush=True)
        rates = "  ".join(f"{p.name} {_rate(p.runs[-1]['images'] / p.runs[-1]['seconds']):>9}"
                          for p in peers)
        print(f"\r  run {i + 1}: {rates}  {unit(args.pipeline)}/s" + " " * 10, flush=True)
        each_round = getattr(args, "each_round", None)  # (a benchmark's own measure, taken
        if each_round is not None:  # between the peers' runs: the same machine's moment)
            each_round()
    stats = {p.name: p.ask("stats") for p in peers}
    for p in peers:
        p.close()
    medians = print_table(peers, stats, threads, unit(args.pipeline))
    amp = stats["stoker"].get("decode_amplification")
    if amp:
        print(f"\n  stoker's decode amplification: {amp:.2f} frames decoded per frame "
              "delivered")
    return {"medians": medians, "stats": stats}


def unit(pipeline: str) -> str:
    return "clips" if pipeline == "video" else "images"


def print_table(peers: list[Peer], stats: dict[str, dict], threads: int,
                what: str = "images") -> dict[str, float]:
    medians = {p.name: statistics.median(r["images"] / r["seconds"] for r in p.runs)
               for p in peers}
    base = medians.get("stoker")
    print(f"\n  {'peer':<12} {what + '/s':>10} {'stoker/peer':>12} {'CPU used':>9} "
          f"{'1st batch':>10} {'peak RSS':>9}")
    for p in peers:
        cpu = statistics.median(r["cpu_seconds"] / (r["seconds"] * threads) for r in p.runs)
        ratio = f"{base / medians[p.name]:.2f}x" if base else "-"
        s = stats[p.name]
        print(f"  {p.name:<12} {_rate(medians[p.name]):>10} {ratio:>12} {cpu:>8.0%} "
              f"{p.first_batch_s:>9.2f}s {s['peak_rss_mb']:>7.0f}MB")
    return medians
