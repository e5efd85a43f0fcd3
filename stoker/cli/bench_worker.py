"""One benchmark peer in its own process, driven by ``stoker bench`` over stdin/stdout.

Its own process so that peak memory and CPU time belong to it alone (a DataLoader's
workers are its child processes and are counted with it), and so peers never share a GIL.
Commands, one per line: ``run SECONDS`` -> JSON {images, seconds, cpu_seconds};
``stats`` -> JSON {peak_rss_mb}; ``quit``. The first line out, ``{"ready": true}``, comes
after the first batch.

A run is fair to the peers around it. It starts with WARM_IN seconds not counted: the
batches a peer made ahead while it waited (its prefetch queue; a DataLoader's workers'
batches) come at once and would count as made in no time. It answers only once the
peer's processes are idle again, so the work they go on with after the run (those
batches ahead) does not fall into the next peer's run: a DataLoader's two workers went
on for about half a second, and the stoker runs that followed used 90% of the CPU where
they used 96% after DALI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

WARM_IN = 0.5  # seconds of each run not counted
IDLE_WAIT = 5.0  # at most this long for the peer to go idle after a run
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, following /proc/<pid>/task/*/children: a scan of all of
    /proc would hold the GIL long enough to slow the peer being measured."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(_children(p))
    return out


def tree_usage(pid: int) -> tuple[float, float]:
    """(CPU seconds, resident MB) of a process tree."""
    cpu = rss = 0.0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / _TICK
            with open(f"/proc/{p}/statm") as f:
                rss += int(f.read().split()[1]) * _PAGE / 2**20
        except (OSError, IndexError, ValueError):
            continue
    return cpu, rss


def settle(pid: int) -> None:
    """Waits (at most IDLE_WAIT s) until the process tree of ``pid`` used at most one clock
    tick of CPU time in a tenth of a second (10% of a core)."""
    deadline = time.perf_counter() + IDLE_WAIT
    last = tree_usage(pid)[0]
    while time.perf_counter() < deadline:
        time.sleep(0.1)
        now = tree_usage(pid)[0]
        if now - last <= 1.5 / _TICK:
            return
        last = now


class PeakMemory:
    """Samples the process tree's resident memory every 100 ms; keeps the peak."""

    def __init__(self) -> None:
        self.peak = 0.0
        thread = threading.Thread(target=self._loop, daemon=True, name="bench-rss")
        thread.start()

    def _loop(self) -> None:
        pid = os.getpid()
        while True:
            self.peak = max(self.peak, tree_usage(pid)[1])
            time.sleep(0.1)


def make_step(peer: str, pipeline: str, root: str | None, batch_size: int,
              threads: int) -> Any:
    from stoker.cli import pipelines

    if peer in ("torchvision", "decord"):
        make = pipelines.decord_loader if peer == "decord" else pipelines.torchvision_loader
        loader = make(pipeline, root, batch_size, threads)
        state = {"it": iter(loader)}

        def step() -> None:
            try:
                next(state["it"])
            except StopIteration:
                state["it"] = iter(loader)
                next(state["it"])

        return step
    if pipelines.is_user_pipeline(pipeline):
        pipe = pipelines.load_user_pipeline(pipeline, batch_size, threads, peer)
    else:
        if peer == "dali":
            import nvidia.dali as lib
            import nvidia.dali.fn  # noqa: F401
            import nvidia.dali.types  # noqa: F401
        else:
            import stoker as lib
        pipe = pipelines.build(pipeline, lib, root, batch_size, threads)
    pipe.build()
    return pipe.run


def video_stats() -> dict[str, float]:
    """Decode amplification (frames decoded per frame delivered) of stoker's video readers,
    when the pipeline decoded video."""
    import sys

    decode = sys.modules.get("stoker.kernels.cpu.video.decode")
    if decode is None or not decode.STATS.delivered:
        return {}
    return {"decode_amplification": decode.STATS.amplification,
            "frames_delivered": decode.STATS.delivered, "frames_decoded": decode.STATS.decoded}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", required=True)
    parser.add_argument("--pipeline", required=True)
    parser.add_argument("--data")
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    memory = PeakMemory()
    step = make_step(args.peer, args.pipeline, args.data, args.batch_size, args.threads)
    step()
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    for line in sys.stdin:
        command = line.split()
        if not command or command[0] == "quit":
            break
        if command[0] == "run":
            seconds = float(command[1])
            start = time.perf_counter()
            while time.perf_counter() - start < WARM_IN:
                step()
            cpu0 = tree_usage(os.getpid())[0]
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                step()
                n += 1
            elapsed = time.perf_counter() - start
            cpu = tree_usage(os.getpid())[0] - cpu0
            settle(os.getpid())
            print(json.dumps({"images": n * args.batch_size, "seconds": elapsed,
                              "cpu_seconds": cpu}), file=out, flush=True)
        elif command[0] == "stats":
            stats = {"peak_rss_mb": memory.peak}
            if args.peer == "stoker":
                stats.update(video_stats())
            print(json.dumps(stats), file=out, flush=True)
    os._exit(0)  # peers' own threads and workers must not delay the next measurement


if __name__ == "__main__":
    main()
