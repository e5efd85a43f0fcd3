"""How long ``fn.readers.file`` takes to build over a big ``file_list``: stoker vs DALI.

Writes a list of fake paths (``train/n00000123/img_00000123.JPEG 123``; neither library
opens a file before the first run) and times ``pipeline.build()`` including the
``fn.readers.file`` call, with a fresh pipeline per repetition, for stoker and, when
``nvidia.dali`` is importable (``/work/bench-venv/bin/python``), for DALI. Prints the
median of each and the ratio.

``--reads`` instead times reading a batch of real files serially and on the reader's
thread pool (the measurement behind ``stoker/readers/files.py``'s choice).

    /work/bench-venv/bin/python benchmarks/reader_file_list.py [--lines 1000000] [--reps 5]
    .venv/bin/python benchmarks/reader_file_list.py --reads
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time


def write_list(path: str, lines: int) -> None:
    with open(path, "w") as f:
        for i in range(lines):
            f.write(f"train/n{i % 1000:08d}/img_{i:08d}.JPEG {i % 1000}\n")


def time_build(lib, file_list: str, root: str) -> tuple[float, int]:
    """Seconds for one fresh pipeline's fn.readers.file call + build(); the epoch size."""
    fn, pipeline_def = lib.fn, lib.pipeline_def

    @pipeline_def(batch_size=32, num_threads=1, device_id=None)
    def pipe():
        data, label = fn.readers.file(file_list=file_list, file_root=root, name="Reader")
        return data, label

    gc.collect()  # earlier pipelines must not be freed inside the timed part
    t0 = time.perf_counter()
    p = pipe()
    p.build()
    elapsed = time.perf_counter() - t0
    size = p.reader_meta("Reader")["epoch_size"]
    del p
    gc.collect()
    return elapsed, size


def bench_build(lines: int, reps: int) -> None:
    import types

    import stoker

    libs = {"stoker": types.SimpleNamespace(fn=stoker.fn, pipeline_def=stoker.pipeline_def)}
    try:
        import nvidia.dali.fn as dali_fn
        from nvidia.dali import pipeline_def as dali_pipeline_def

        libs["DALI"] = types.SimpleNamespace(fn=dali_fn, pipeline_def=dali_pipeline_def)
    except ImportError:
        print("nvidia.dali is not importable here: timing stoker only")
    with tempfile.TemporaryDirectory(prefix="stoker-list-") as tmp:
        path = os.path.join(tmp, "list.txt")
        write_list(path, lines)
        print(f"file_list of {lines} lines, {os.path.getsize(path) / 1e6:.1f} MB; "
              f"{reps} builds each")
        times: dict[str, list[float]] = {name: [] for name in libs}
        for _ in range(reps):  # alternate, so load changes hit both alike
            for name, lib in libs.items():
                elapsed, size = time_build(lib, path, os.path.join(tmp, "root"))
                assert size == lines, (name, size)
                times[name].append(elapsed)
        medians = {}
        for name, ts in times.items():
            medians[name] = statistics.median(ts)
            print(f"{name:7s} build: median {medians[name]:.3f} s  "
                  f"(all: {', '.join(f'{t:.3f}' for t in ts)})")
        if "DALI" in medians:
            print(f"stoker / DALI = {medians['stoker'] / medians['DALI']:.2f}")


def bench_reads(files: int, reps: int) -> None:
    import numpy as np

    from stoker.readers.files import FileBatchReader, read_file

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="stoker-reads-") as tmp:
        for label, lo, hi in (("3 KB", 3000, 3001), ("60-160 KB", 60_000, 160_000)):
            paths = []
            for i in range(files):
                p = os.path.join(tmp, f"{label[:1]}{i}.bin")
                with open(p, "wb") as f:
                    f.write(rng.integers(0, 256, int(rng.integers(lo, hi)), np.uint8).tobytes())
                paths.append(p)
            pool = FileBatchReader(max_threads=os.cpu_count() or 1)
            pool._files, pool._bytes = 1, 1 << 30  # force the pool on
            serial, pooled = [], []
            for _ in range(reps):
                t0 = time.perf_counter()
                [read_file(p) for p in paths]
                serial.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                pool.read(paths)
                pooled.append(time.perf_counter() - t0)
            pool.close()
            print(f"{files} files of {label}: serial {min(serial) / files * 1e6:.1f} us/file, "
                  f"pool of {pool.threads}: {min(pooled) / files * 1e6:.1f} us/file")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--reads", action="store_true", help="time file reads instead")
    args = ap.parse_args()
    if args.reads:
        bench_reads(256, args.reps)
    else:
        bench_build(args.lines, args.reps)


if __name__ == "__main__":
    main()
