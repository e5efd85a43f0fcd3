"""stoker's libjpeg-turbo (the pylibjxl wheel's, through ctypes) against DALI's CPU decoder
on the same files, one thread, every pixel, same settings (accurate IDCT, smooth
upsampling: the pixels are identical). Batches of each alternate and the fastest batch of
each counts, so load from other jobs on a shared machine hurts both alike.

stoker is timed twice: each image dropped once decoded (its buffer is reused at once,
still in cache), and the batch's images all kept until the batch ends, as a pipeline
keeps them (fresh memory: page faults and cache misses). DALI reuses its batch buffers.

    /work/bench-venv/bin/python benchmarks/jpeg_vs_dali.py DIR [--rounds 12]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="JPEG files, in class sub-folders or not")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--batch", type=int, default=64)
    opts = ap.parse_args()
    files = sorted(glob.glob(os.path.join(opts.folder, "**", "*.jp*g"), recursive=True))
    datas = [np.fromfile(f, np.uint8) for f in files[:opts.batch]]

    import nvidia.dali as dali
    import nvidia.dali.fn  # noqa: F401

    @dali.pipeline_def(batch_size=len(datas), num_threads=1, device_id=None,
                       prefetch_queue_depth=1, exec_async=False, exec_pipelined=False)
    def pipe():  # noqa: ANN202
        return dali.fn.decoders.image(dali.fn.external_source(source=lambda: datas,
                                                              batch=True))

    p = pipe()
    p.build()
    theirs = [np.array(t) for t in p.run()[0]]

    from stoker.kernels.cpu.image import turbojpeg

    ours = [turbojpeg.decode(d) for d in datas]
    same = all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    times: dict[str, list[float]] = {"DALI": [], "stoker, each dropped": [],
                                     "stoker, batch kept": []}
    for _ in range(opts.rounds):
        t = time.perf_counter()
        p.run()
        times["DALI"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for d in datas:
            turbojpeg.decode(d)
        times["stoker, each dropped"].append(time.perf_counter() - t)
        t = time.perf_counter()
        kept = [turbojpeg.decode(d) for d in datas]
        times["stoker, batch kept"].append(time.perf_counter() - t)
        del kept
    print(f"{len(datas)} JPEGs, identical pixels: {same}; fastest of {opts.rounds} batches:")
    for name, ts in times.items():
        print(f"  {name:<22} {min(ts) / len(datas) * 1e3:.3f} ms per image")
    print(f"  stoker's library libjpeg-turbo via {turbojpeg.library_origin()}")


if __name__ == "__main__":
    main()
