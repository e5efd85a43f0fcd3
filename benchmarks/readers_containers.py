"""Container readers, reading alone (no decode): stoker vs DALI's CPU readers, side by side.

Writes one dataset per reader from a folder of JPEGs (``stoker make-dataset``; /work/ds200
has 256), repeated to ``--records`` samples of (JPEG bytes, label): TFRecord
(``image/encoded``, ``image/class/label``, with DALI's index files), webdataset tar shards
(``jpg``, ``cls``, with v1.2 index files), MXNet RecordIO (one index), ``.npy`` files of
the JPEG bytes, and Caffe / Caffe2 LMDB databases. Each library then runs a pipeline
whose outputs are the reader's outputs, in a process of its own, runs alternating between
the libraries so that noise hits both; a run is ``--seconds`` of batches after three
uncounted ones. Prints each reader's median records/s per library and the ratio.

``--index`` instead times building the index of one TFRecord file of ``--index-records``
small records (1,000,000 by default): DALI's ``tfrecord2idx`` script against ``stoker
tfrecord-index``, each as the command a user runs, alternating; and DALI's ``wds2idx``
against ``stoker webdataset-index`` on a tar of ``--index-records // 10`` members.

    PYTHONPATH=$PWD /work/dali-venv/bin/python benchmarks/readers_containers.py \\
        --data /work/ds200 --records 8192 --runs 3 --seconds 2
    PYTHONPATH=$PWD /work/dali-venv/bin/python benchmarks/readers_containers.py --index

(the DALI venv has stoker's dependencies; DALI's index tools are its console scripts.)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
READERS = ("tfrecord", "webdataset", "mxnet", "numpy", "caffe", "caffe2")
PER_FILE = 1024  # records per container file


def write_datasets(jpegs: str, out: str, records: int) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import numpy as np
    from container_writers import (
        C2_INT32,
        C2_STRING,
        datum,
        example,
        irheader,
        tensor_proto,
        tensor_protos,
        write_index,
        write_lmdb,
        write_recordio,
        write_tar,
        write_tfrecord,
    )

    files = sorted(glob.glob(os.path.join(jpegs, "*", "*.jpg")))
    data = [open(f, "rb").read() for f in files]
    samples = [(data[i % len(data)], i % 8) for i in range(records)]
    chunks = [samples[a:a + PER_FILE] for a in range(0, records, PER_FILE)]
    os.makedirs(out, exist_ok=True)
    for k, chunk in enumerate(chunks):
        path = os.path.join(out, f"train-{k:03d}.tfrecord")
        spans = write_tfrecord(path, [example({"image/encoded": j, "image/class/label": [c]})
                                      for j, c in chunk])
        write_index(path + ".idx", spans)
        tar = os.path.join(out, f"train-{k:03d}.tar")
        members = []
        for i, (j, c) in enumerate(chunk):
            members += [(f"{k:03d}{i:05d}.jpg", j), (f"{k:03d}{i:05d}.cls", str(c).encode())]
        write_tar(tar, members)
        subprocess.run([sys.executable, "-m", "stoker.cli.main", "webdataset-index", tar],
                       check=True, capture_output=True)
    offsets = write_recordio(os.path.join(out, "train.rec"), None,
                             [irheader(float(c), i) + j for i, (j, c) in enumerate(samples)])
    with open(os.path.join(out, "train.idx"), "w") as f:
        f.writelines(f"{i}\t{o}\n" for i, o in enumerate(offsets))
    os.makedirs(os.path.join(out, "npy"), exist_ok=True)
    for i, (j, _) in enumerate(samples):
        np.save(os.path.join(out, "npy", f"{i:07d}.npy"), np.frombuffer(j, np.uint8))
    size = 2 * sum(len(j) + 64 for j, _ in samples) + (1 << 24)
    write_lmdb(os.path.join(out, "caffe"), [(f"{i:08d}".encode(), datum(j, c))
                                            for i, (j, c) in enumerate(samples)], size)
    write_lmdb(os.path.join(out, "caffe2"), [(f"{i:08d}".encode(), tensor_protos(
        [tensor_proto(C2_STRING, j), tensor_proto(C2_INT32, [c])]))
        for i, (j, c) in enumerate(samples)], size)


def pipeline(lib: str, reader: str, data: str, batch_size: int) -> object:
    if lib == "dali":
        import nvidia.dali.tfrecord as tfrec
        from nvidia.dali import fn, pipeline_def
    else:
        import stoker.tfrecord as tfrec
        from stoker import fn, pipeline_def
    tfrecords = sorted(glob.glob(os.path.join(data, "*.tfrecord")))
    tars = sorted(glob.glob(os.path.join(data, "*.tar")))

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1,
                  prefetch_queue_depth=2)
    def pipe():
        if reader == "tfrecord":
            out = fn.readers.tfrecord(
                path=tfrecords, index_path=[p + ".idx" for p in tfrecords], features={
                    "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                    "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
            return out["image/encoded"], out["image/class/label"]
        if reader == "webdataset":
            return tuple(fn.readers.webdataset(paths=tars, ext=["jpg", "cls"],
                                               index_paths=[p + ".idx" for p in tars]))
        if reader == "mxnet":
            return tuple(fn.readers.mxnet(path=[os.path.join(data, "train.rec")],
                                          index_path=[os.path.join(data, "train.idx")]))
        if reader == "numpy":
            return fn.readers.numpy(file_root=os.path.join(data, "npy"))
        return tuple(getattr(fn.readers, reader)(path=[os.path.join(data, reader)]))

    return pipe()


def worker(lib: str, reader: str, data: str, seconds: float, batch_size: int) -> None:
    pipe = pipeline(lib, reader, data, batch_size)
    pipe.build()
    for _ in range(3):
        pipe.run()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        pipe.run()
        n += batch_size
    print(json.dumps({"rate": n / (time.perf_counter() - start)}))


def bench_readers(args: argparse.Namespace) -> None:
    data = args.out or tempfile.mkdtemp(prefix="stoker-containers-")
    if not os.path.exists(os.path.join(data, "caffe2", "data.mdb")):  # written last
        print(f"writing {args.records} records per reader to {data} ...", flush=True)
        write_datasets(args.data, data, args.records)
    readers = args.readers.split(",")
    print(f"batch {args.batch_size}, 2 threads, {args.runs} runs x {args.seconds} s, "
          f"{args.records} records of ImageNet-like JPEGs")
    try:
        for reader in readers:
            rates: dict[str, list[float]] = {"stoker": [], "dali": []}
            for _ in range(args.runs):
                for lib in rates:
                    done = subprocess.run(
                        [sys.executable, __file__, "--worker", lib, reader, data,
                         str(args.seconds), str(args.batch_size)], capture_output=True,
                        text=True)
                    if done.returncode:
                        raise SystemExit(f"{lib} {reader} failed:\n{done.stderr[-2000:]}")
                    rates[lib].append(json.loads(done.stdout.strip().splitlines()[-1])["rate"])
            s, d = statistics.median(rates["stoker"]), statistics.median(rates["dali"])
            print(f"{reader:10s} stoker {s:9,.0f} rec/s  DALI {d:9,.0f} rec/s  ratio "
                  f"{s / d:5.2f}x   (stoker {', '.join(f'{r:,.0f}' for r in rates['stoker'])};"
                  f" DALI {', '.join(f'{r:,.0f}' for r in rates['dali'])})", flush=True)
    finally:
        if args.out is None:
            shutil.rmtree(data, ignore_errors=True)


def bench_index(args: argparse.Namespace) -> None:
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from container_writers import write_tar, write_tfrecord

    dali_bin = os.path.dirname(sys.executable)
    with tempfile.TemporaryDirectory(prefix="stoker-index-") as tmp:
        rec = os.path.join(tmp, "big.tfrecord")
        n = args.index_records
        write_tfrecord(rec, (bytes([k % 256]) * (64 + k % 64) for k in range(n)))
        tar = os.path.join(tmp, "big.tar")
        m = n // 10
        write_tar(tar, ((f"{k:08d}.{'jpg' if k % 2 else 'cls'}", b"x" * (k % 700))
                        for k in range(m)))
        cases = {
            f"tfrecord, {n:,} records ({os.path.getsize(rec) / 1e6:.0f} MB)": {
                "dali": [os.path.join(dali_bin, "tfrecord2idx"), rec, rec + ".dali.idx"],
                "stoker": [sys.executable, "-m", "stoker.cli.main", "tfrecord-index", rec,
                           rec + ".stoker.idx"]},
            f"webdataset, {m:,} members ({os.path.getsize(tar) / 1e6:.0f} MB)": {
                "dali": [os.path.join(dali_bin, "wds2idx"), tar, tar + ".dali.idx"],
                "stoker": [sys.executable, "-m", "stoker.cli.main", "webdataset-index", tar,
                           tar + ".stoker.idx"]}}
        for name, commands in cases.items():
            times: dict[str, list[float]] = {k: [] for k in commands}
            for _ in range(args.runs):
                for lib, command in commands.items():
                    start = time.perf_counter()
                    subprocess.run(command, check=True, capture_output=True)
                    times[lib].append(time.perf_counter() - start)
            outs = [c[-1] for c in commands.values()]
            same = open(outs[0]).read() == open(outs[1]).read()
            s, d = statistics.median(times["stoker"]), statistics.median(times["dali"])
            print(f"{name}: stoker {s:.2f} s, DALI {d:.2f} s, DALI/stoker {d / s:.1f}x, "
                  f"same index: {same}", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        lib, reader, data, seconds, batch = sys.argv[2:7]
        worker(lib, reader, data, float(seconds), int(batch))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="/work/ds200", help="folder of class folders of "
                        "JPEGs (stoker make-dataset)")
    parser.add_argument("--records", type=int, default=8192)
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--out", help="keep the datasets in this folder (reused if there)")
    parser.add_argument("--index", action="store_true", help="time index building instead")
    parser.add_argument("--index-records", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.index:
        bench_index(args)
    else:
        bench_readers(args)


if __name__ == "__main__":
    main()
