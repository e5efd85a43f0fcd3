"""The JAX iterator cases replayed on DALI 2.4 (tests/data/record/jax_iterator.py) and on
stoker (tests/plugin/test_jax_vs_dali.py): the same code drives either library.

Each case reads ``n`` one-byte files (byte ``i`` in file ``i``) with ``readers.file`` in
``pipes`` pipelines (one shard each) and iterates a few epochs; the outcome is, per step,
each output's shape, dtype and the sample ids in order, and ``len()`` per epoch, or the
error's type. ``mode``: "single" (one pipeline), "stack" (several, no sharding: the
``(pipelines, batch, ...)`` form), "sharding" (a NamedSharding over the devices),
"decorator" (``data_iterator`` with sharding and a global batch size).
"""

from __future__ import annotations

import itertools
import pathlib

import numpy as np

DEVICES = 4  # XLA_FLAGS=--xla_force_host_platform_device_count=4 for the multi-device cases
XLA_FLAGS = f"--xla_force_host_platform_device_count={DEVICES}"

CASES = []
for n, bs, policy, pad in itertools.product((10, 13), (3, 4), ("FILL", "DROP"), (False, True)):
    CASES.append(dict(mode="single", n=n, bs=bs, pipes=1, policy=policy, pad=pad, epochs=3))
for mode, n, policy, pad in itertools.product(("stack", "sharding", "decorator"), (16, 18),
                                              ("FILL", "DROP"), (False, True)):
    CASES.append(dict(mode=mode, n=n, bs=2, pipes=DEVICES, policy=policy, pad=pad, epochs=2))
ERROR_CASES = ["partial", "output_map_short", "shard_shapes_differ"]


def case_id(c: dict) -> str:
    return f"{c['mode']}-n{c['n']}-bs{c['bs']}-{c['policy']}-pad{int(c['pad'])}"


def write_files(root: pathlib.Path, n: int) -> str:
    """``n`` one-byte files (byte ``i`` in file ``i``) in one class folder under ``root``,
    written once; the file_root. The PyTorch iterator replay reads them too."""
    folder = root / f"n{n}" / "c0"
    if not folder.exists():
        folder.mkdir(parents=True)
        for i in range(n):
            (folder / f"{i:03d}.bin").write_bytes(bytes([i]))
    return str(folder.parent)


def run_case(lib, root: pathlib.Path, c: dict) -> dict:
    """``lib``: namespace with fn, pipeline_def, DALIGenericIterator, data_iterator,
    LastBatchPolicy, jax."""
    jax = lib.jax
    files = write_files(root, c["n"])
    policy = getattr(lib.LastBatchPolicy, c["policy"])

    def graph(shard_id=0, num_shards=1):
        data, _ = lib.fn.readers.file(file_root=files, name="Reader", file_filters=["*.bin"],
                                      shard_id=shard_id, num_shards=num_shards,
                                      pad_last_batch=c["pad"])
        return data, lib.fn.cast(data, dtype=lib.types.FLOAT)

    sharding = None
    if c["mode"] in ("sharding", "decorator"):
        mesh = jax.sharding.Mesh(jax.devices(), ("batch",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    if c["mode"] == "decorator":
        make = lib.data_iterator(graph, output_map=["data", "f"], reader_name="Reader",
                                 last_batch_policy=policy, sharding=sharding)
        it = make(batch_size=c["bs"] * c["pipes"])
    else:
        pipes = []
        for s in range(c["pipes"]):
            pipes.append(lib.pipeline_def(graph, batch_size=c["bs"], num_threads=1,
                                          device_id=None)(shard_id=s, num_shards=c["pipes"]))
        it = lib.DALIGenericIterator(pipes, ["data", "f"], reader_name="Reader",
                                     last_batch_policy=policy, sharding=sharding)
    epochs, lens = [], []
    for _ in range(c["epochs"]):
        lens.append(len(it))
        steps = []
        for batch in it:
            steps.append({k: dict(shape=list(v.shape), dtype=str(v.dtype),
                                  ids=[int(x) for x in np.asarray(v).ravel()])
                          for k, v in batch.items()})
        epochs.append(steps)
        it.reset()
    return dict(epochs=epochs, lens=lens)


def run_error(lib, root: pathlib.Path, name: str) -> str:
    """The error type a bad use raises, or "none"."""
    files = write_files(root, 8)

    def reader():
        return lib.fn.readers.file(file_root=files, file_filters=["*.bin"], name="Reader")

    try:
        if name == "partial":
            pipe = lib.pipeline_def(lambda: tuple(reader()), batch_size=2, num_threads=1,
                                    device_id=None)()
            lib.DALIGenericIterator([pipe], ["data", "label"], reader_name="Reader",
                                    last_batch_policy=lib.LastBatchPolicy.PARTIAL)
        elif name == "output_map_short":
            pipe = lib.pipeline_def(lambda: tuple(reader()), batch_size=2, num_threads=1,
                                    device_id=None)()
            it = lib.DALIGenericIterator([pipe], ["data"], reader_name="Reader")
            next(it)
        elif name == "shard_shapes_differ":
            pipes = []
            for k in (1, 2):
                def graph(k=k):
                    return lib.fn.external_source(
                        source=lambda: [np.zeros((k,), np.uint8)] * 2, batch=True)
                pipes.append(lib.pipeline_def(graph, batch_size=2, num_threads=1,
                                              device_id=None)())
            it = lib.DALIGenericIterator(pipes, ["x"], size=8)
            next(it)
    except Exception as e:  # the outcome recorded is the error's type
        return type(e).__name__
    return "none"
