"""What each framework plugin adds to a pipeline's time per batch.

The same pipeline runs through ``pipe.run()`` (the pipeline's own time), the PyTorch
iterator, the JAX iterator and the TF ``DALIDataset``; each figure is the median time per
batch over rounds that alternate between the ways (the machine is shared and noisy: only
ratios to ``run()`` in the same run count). Two pipelines:

* ``decode``: readers.file -> decoders.image -> random_resized_crop 224 ->
  crop_mirror_normalize (float CHW, random mirror), ImageNet-like JPEGs (``stoker
  make-dataset``): a training pipeline's cost per batch.
* ``light``: one preloaded 224x224 image per sample -> crop_mirror_normalize: almost no
  work, so the plugin's share is the largest it gets.

Iterators run without ``reader_name`` (one endless stream, as ``run()``), each on a fresh
pipeline with 3 warm-up batches. "convert" is the consumer-side cost alone: the plugin's
conversion of a batch already made (the pipeline keeps working on the next meanwhile),
as a share of ``run()``'s time. "run+stack" is ``run()`` with each output made one
contiguous array (``as_array()``, DALI's ``as_tensor()``): the copy every framework
hand-off needs when the last operator made its samples separately. ``--dali`` runs DALI
2.4's ``run()``, PyTorch and JAX iterators on the same pipelines in its own process (its
TF plugin needs a GPU build).

    cd <checkout>
    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/plugins_overhead.py \\
        --batches 20 --rounds 3 --dali /work/dali-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

WAYS = ("run", "run+stack", "pytorch", "jax", "tf")


def build(lib: str, kind: str, root: str, bs: int, threads: int):
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from stoker import fn, pipeline_def, types
    image = np.random.default_rng(0).integers(0, 256, (224, 224, 3), dtype=np.uint8)

    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=1)
    def pipe():
        if kind == "decode":
            jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=1)
            img = fn.decoders.image(jpegs, output_type=types.RGB)
            img = fn.random_resized_crop(img, size=(224, 224))
        else:
            img = fn.external_source(source=lambda: [image] * bs, layout="HWC")
            labels = fn.external_source(source=lambda: [np.zeros(1, np.int32)] * bs)
        img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="CHW",
                                       mean=[124.0, 116.0, 104.0], std=[58.0, 57.0, 57.0],
                                       mirror=fn.random.coin_flip())
        return img, labels

    return pipe()


def _timed(step, n: int = 5) -> float:
    step()
    start = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - start) / n


def stream(lib: str, way: str, pipe):
    """A callable returning the next batch in the framework's form, and one timing the
    plugin's conversion of a batch already made (None for run())."""
    if way == "run":
        pipe.build()
        return pipe.run, None
    if way == "run+stack":  # run() and each output made one contiguous array: the copy a
        pipe.build()        # batch of separately made samples needs in any framework

        def run_stacked():
            outs = pipe.run()
            return [o.as_array() if lib == "stoker" else o.as_tensor() for o in outs]
        return run_stacked, None
    if way == "tf":
        import itertools

        import tensorflow as tf

        from stoker.plugin.tf import DALIDataset
        it = iter(DALIDataset(pipe, output_dtypes=(tf.float32, tf.int32)))

        def convert_tf(outs):  # the dataset's own path: a generator's arrays into tensors
            arrays = tuple(o.as_array() for o in outs)
            spec = tuple(tf.TensorSpec(a.shape, tf.as_dtype(a.dtype)) for a in arrays)
            ds = tf.data.Dataset.from_generator(lambda: itertools.repeat(arrays),
                                                output_signature=spec)
            batches = iter(ds)
            return _timed(lambda: next(batches))
        return lambda: next(it), convert_tf
    if lib == "dali":
        mod = __import__(f"nvidia.dali.plugin.{way}", fromlist=["DALIGenericIterator"])
    else:
        mod = __import__(f"stoker.plugin.{way}", fromlist=["DALIGenericIterator"])
    it = mod.DALIGenericIterator([pipe], ["x", "y"])

    def host(o):
        return np.asarray(o.as_tensor()) if lib == "dali" else o.as_array()

    if way == "jax":
        import jax

        def convert(outs):
            return _timed(lambda: [jax.device_put(host(o)).block_until_ready() for o in outs])
    else:
        import torch

        def convert(outs):
            return _timed(lambda: [torch.from_numpy(host(o)) for o in outs])
    return lambda: next(it), convert


def block(batch) -> None:
    """Waits until a framework's asynchronous copy is done."""
    items = batch.values() if isinstance(batch, dict) else \
        [v for d in batch for v in (d.values() if isinstance(d, dict) else [d])] \
        if isinstance(batch, list | tuple) else [batch]
    for v in items:
        if hasattr(v, "block_until_ready"):
            v.block_until_ready()


def measure(lib: str, kind: str, root: str, ways: list[str], args) -> dict:
    times = {w: [] for w in ways}
    convert = {w: [] for w in ways}
    for r in range(args.rounds):
        for way in ways[r % len(ways):] + ways[:r % len(ways)]:  # each way leads a round
            pipe = build(lib, kind, root, args.batch_size, args.threads)
            nxt, conv = stream(lib, way, pipe)
            for _ in range(3):
                block(nxt())
            start = time.perf_counter()
            for _ in range(args.batches):
                block(nxt())
            times[way].append((time.perf_counter() - start) / args.batches)
            if conv is not None:  # the conversion alone, on a batch run() made
                ref = build(lib, kind, root, args.batch_size, args.threads)
                ref.build()
                convert[way].append(conv(ref.run()))
                del ref
            del nxt, pipe
    return {w: {"per_batch": statistics.median(times[w]),
                "convert": statistics.median(convert[w]) if convert[w] else 0.0}
            for w in ways}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--kinds", default="decode,light")
    ap.add_argument("--dali", help="a Python with nvidia.dali, torch and jax: DALI's figures")
    ap.add_argument("--lib", default="stoker", help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    args = ap.parse_args()
    ways = list(WAYS) if args.lib == "stoker" else ["run", "run+stack", "pytorch", "jax"]
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root
        if root is None:
            from stoker.cli.make_dataset import make_dataset
            root = str(pathlib.Path(tmp))
            make_dataset(root, images=args.images, classes=4)
        results = {k: measure(args.lib, k, root, ways, args) for k in args.kinds.split(",")}
        if args.lib != "stoker":
            print(json.dumps(results))
            return
        dali = None
        if args.dali:
            cmd = [args.dali, __file__, "--lib", "dali", "--root", root, *sys.argv[1:]]
            i = cmd.index("--dali")
            del cmd[i:i + 2]
            done = subprocess.run(cmd, capture_output=True, text=True)
            dali = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 \
                else None
            if dali is None:
                print("DALI peer failed:", done.stderr[-2000:])
    for kind, res in results.items():
        base = res["run"]["per_batch"]
        print(f"\n{kind}: batch {args.batch_size}, {args.threads} threads, median of "
              f"{args.rounds} rounds x {args.batches} batches")
        print(f"  {'way':9s} {'ms/batch':>9s} {'vs run()':>9s} {'convert':>8s} "
              f"{'conv/run':>9s}   DALI: {'ms/batch':>9s} {'vs run()':>9s}")
        for way, r in res.items():
            line = (f"  {way:9s} {r['per_batch'] * 1e3:9.2f} {r['per_batch'] / base:9.3f} "
                    f"{r['convert'] * 1e3:8.2f} {r['convert'] / base:9.3f}")
            if dali and way in dali.get(kind, {}):
                d = dali[kind]
                line += (f"         {d[way]['per_batch'] * 1e3:9.2f} "
                         f"{d[way]['per_batch'] / d['run']['per_batch']:9.3f}")
            print(line)


if __name__ == "__main__":
    main()
