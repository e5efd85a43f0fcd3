"""fn.experimental.readers.fits against astropy reading the same files in a loop.

DALI 2.4's CPU fits reader needs CUDA (it fails on a machine without a GPU), so the
comparison is astropy, what a CPU user reads FITS files with today. Writes ``--files``
FITS files per kind (a primary HDU and one image extension of ``--size`` pixels square):
``int16`` (plain), ``float32`` (plain), ``rice`` (int16, RICE_1 tiles of a row each,
astropy's default), ``rice_float`` (float32 quantized and dithered, RICE_1), ``gzip``
(int16, GZIP_2). stoker runs a pipeline whose output is the reader's (``--threads``
threads, batch ``--batch``); astropy opens each file, takes HDU 2's data and makes it a
native-order array (what stoker hands out). Runs alternate between the two; each run
reads every file once. Prints median files/s and the ratio (stoker / astropy).

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/reader_fits.py \\
        --files 128 --size 256 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

KINDS = ("int16", "float32", "rice", "rice_float", "gzip")


def write(folder: str, kind: str, n: int, size: int) -> list[str]:
    from astropy.io import fits

    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(folder, kind), exist_ok=True)
    paths = []
    for i in range(n):
        smooth = np.cumsum(rng.integers(-20, 21, (size, size)), axis=1)
        if kind in ("float32", "rice_float"):
            data = (smooth / 7 + rng.normal(size=(size, size))).astype(np.float32)
        else:
            data = np.clip(smooth, -32768, 32767).astype(np.int16)
        hdu = {"int16": fits.ImageHDU, "float32": fits.ImageHDU}.get(kind)
        if hdu is not None:
            ext = hdu(data)
        else:
            ext = fits.CompImageHDU(data, compression_type="GZIP_2" if kind == "gzip"
                                    else "RICE_1")
        path = os.path.join(folder, kind, f"{i:05d}.fits")
        fits.HDUList([fits.PrimaryHDU(), ext]).writeto(path, overwrite=True)
        paths.append(path)
    return paths


def run_stoker(paths: list[str], batch: int, threads: int) -> float:
    from stoker import fn, pipeline_def

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None,
                  prefetch_queue_depth=1)
    def pipe():
        return fn.experimental.readers.fits(files=paths)

    p = pipe()
    p.build()
    p.run()  # the first batch compiles/loads kernels: not counted
    t = time.perf_counter()
    for _ in range(len(paths) // batch):
        p.run()
    took = time.perf_counter() - t
    p.close()
    return (len(paths) // batch) * batch / took


def run_astropy(paths: list[str]) -> float:
    from astropy.io import fits

    t = time.perf_counter()
    for path in paths:
        with fits.open(path) as f:
            d = f[1].data
            np.ascontiguousarray(d, d.dtype.newbyteorder("="))
    return len(paths) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=128)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{args.files} files of {args.size}x{args.size}, batch {args.batch}, "
              f"{args.threads} stoker thread(s), {args.runs} runs; files/s (median)")
        for kind in args.kinds.split(","):
            paths = write(folder, kind, args.files, args.size)
            run_astropy(paths[:4])
            rates: dict[str, list[float]] = {"stoker": [], "astropy": []}
            for _ in range(args.runs):
                rates["stoker"].append(run_stoker(paths, args.batch, args.threads))
                rates["astropy"].append(run_astropy(paths))
            s, a = statistics.median(rates["stoker"]), statistics.median(rates["astropy"])
            print(f"{kind:>11}: stoker {s:9.0f}  astropy {a:9.0f}  ratio {s / a:5.2f}")


if __name__ == "__main__":
    main()
