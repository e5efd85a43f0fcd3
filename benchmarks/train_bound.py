"""How fast train could go with no glue at all, beside stoker's and DALI's pipelines.

The bound decodes the train pipeline's kind of crop windows (random_area 0.08-1, aspect
3/4-4/3; windows drawn before timing) with libjpeg-turbo through ctypes, a handful of calls
per image, and resamples them to 224x224 CHW float32 with stoker's own exact kernels
(taps worked out before timing): what the fused train chain computes, without the
pipeline, the header probe, the window draw or any layer of Python between the native
calls. "bound-decode" decodes the same windows only. Threads share the images as the
pipelines' threads do.

Each peer runs in its own process; rounds alternate between peers, and medians of the
rounds are compared (the machine is shared and noisy). DALI's peers run where
``nvidia.dali`` imports (``device_id=None``: its CPU backend).

    cd <checkout>
    env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$PWD /work/bench-venv/bin/python \\
        benchmarks/train_bound.py /work/ds200 --rounds 3 --seconds 4
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

PEERS = ("bound-train", "bound-decode", "stoker-train", "stoker-decode-crop", "dali-train",
         "dali-decode-crop")


def _bound_jobs(files: list[np.ndarray]) -> list[tuple]:
    """Per image and epoch (4): what the timed loop needs, worked out beforehand."""
    from stoker.cli.pipelines import MEAN, STD
    from stoker.kernels.cpu.image import resize as R
    from stoker.kernels.cpu.image import resize_geometry as G
    from stoker.kernels.cpu.image import turbojpeg
    from stoker.kernels.cpu.image.crop_window import random_crop_window
    from stoker.kernels.cpu.image.resize_normalize import normalize_stage

    norm = normalize_stage(np.array(MEAN, np.float32), np.array(STD, np.float32), 1.0, 0.0,
                           True, np.dtype(np.float32), True)
    jobs = []
    for i, data in enumerate(files):
        hdr = turbojpeg.header(data)
        for epoch in range(4):
            y, x, h, w = random_crop_window(epoch, i, hdr.height, hdr.width, [0.08, 1.0],
                                            [0.75, 4 / 3], 100)
            geom = G.ResizeGeometry(224, 224, 0.0, 0.0, float(h), float(w))
            taps = R.resize_taps((h, w), geom).window(0, 0, 224, 224, (i + epoch) % 2 == 1)
            ty, tx, th, tw = taps.source_region()
            ry, rx = y + ty, x + tx
            x0, x1 = turbojpeg.decoded_columns(rx, tw, hdr.mcu[0], hdr.width)
            jobs.append((data, data.ctypes.data, data.nbytes,  # (data: keeps the address valid)
                         turbojpeg._Region(x0, ry, x1 - x0, th),
                         (th, x1 - x0, 3), rx - x0, tw, taps.shifted(ty, tx), norm))
    return jobs


def _run_bound(files: list[np.ndarray], threads: int, seconds: float, resample: bool) -> float:
    from stoker.kernels.cpu.image import turbojpeg
    from stoker.kernels.cpu.image.resize_normalize import resample_normalized

    lib = turbojpeg.library()
    jobs = _bound_jobs(files)
    counts = [0] * threads

    def work(k: int, until: float) -> None:
        j, n = k, 0
        while time.perf_counter() < until:
            _, src, size, region, shape, left, width, taps, norm = jobs[j % len(jobs)]
            j += threads
            handle = lib.tj3Init(1)
            lib.tj3DecompressHeader(handle, src, size)
            lib.tj3SetCroppingRegion(handle, region)
            image = np.empty(shape, np.uint8)
            rc = lib.tj3Decompress8(handle, src, size, image.ctypes.data, 0, 0)
            lib.tj3Destroy(handle)
            if rc != 0:
                raise RuntimeError("libjpeg-turbo failed on a benchmark image")
            if resample:
                resample_normalized(image[:, left:left + width], taps, norm)
            n += 1
        counts[k] = n

    work(0, time.perf_counter() + 0.3)  # warm-up: numba's kernels load
    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(k, start + seconds)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def run_pipeline(lib_name: str, name: str, root: str, threads: int, seconds: float,
                 ready: Callable[[], None] | None = None) -> float:
    """Images/s of a benchmark pipeline (stoker's or DALI's) over ``seconds`` after a
    warm-up; ``ready()``, if given, is called between the two."""
    from stoker.cli.pipelines import build

    if lib_name == "dali":
        import nvidia.dali as lib
        import nvidia.dali.fn  # noqa: F401
    else:
        import stoker as lib
    pipe = build(name, lib, root, 64, threads)
    pipe.build()
    for _ in range(6):
        pipe.run()
    if ready is not None:
        ready()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        pipe.run()
        n += 64
    return n / (time.perf_counter() - start)


def _peer(peer: str, root: str, threads: int, seconds: float) -> float:
    lib_name, _, name = peer.partition("-")
    if lib_name == "bound":
        files = sorted(glob.glob(os.path.join(root, "**", "*.jp*g"), recursive=True))
        datas = [np.fromfile(f, np.uint8) for f in files]
        return _run_bound(datas, threads, seconds, resample=name == "train")
    return run_pipeline(lib_name, name, root, threads, seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="JPEGs in class sub-folders (stoker make-dataset)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.peer:
        print(_peer(opts.peer, opts.folder, opts.threads, opts.seconds))
        return
    try:
        import nvidia.dali  # noqa: F401
        peers = PEERS
    except ImportError:
        peers = tuple(p for p in PEERS if not p.startswith("dali"))
    rates: dict[str, list[float]] = {p: [] for p in peers}
    for r in range(opts.rounds):
        for peer in peers:
            out = subprocess.run([sys.executable, __file__, opts.folder, "--peer", peer,
                                  "--threads", str(opts.threads), "--seconds",
                                  str(opts.seconds)], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{peer} failed:\n{out.stderr}")
            rates[peer].append(float(out.stdout.split()[-1]))
        print(f"round {r + 1}: " + ", ".join(f"{p} {rates[p][-1]:,.0f}" for p in peers),
              flush=True)
    med = {p: statistics.median(v) for p, v in rates.items()}
    print(f"\nimages/s, median of {opts.rounds} rounds, {opts.threads} threads:")
    for p in peers:
        print(f"  {p:20s} {med[p]:9,.0f}")

    def ratio(a: str, b: str) -> None:
        if a in med and b in med:
            each = [x / y for x, y in zip(rates[a], rates[b], strict=True)]
            print(f"  {a} / {b}: {statistics.median(each):.2f}x "
                  f"({min(each):.2f}-{max(each):.2f})")

    print("ratios (per round, median and range):")
    ratio("bound-train", "dali-train")
    ratio("stoker-train", "dali-train")
    ratio("stoker-train", "bound-train")
    ratio("bound-decode", "dali-decode-crop")
    ratio("stoker-decode-crop", "bound-decode")
    ratio("stoker-decode-crop", "dali-decode-crop")


if __name__ == "__main__":
    main()
