"""One of two JAX processes (two CPU devices each, four in all, joined through
``jax.distributed`` with gloo) running tests/jax_cases.py's sharded cases as a multi-host
job runs them: each process builds the pipelines of its own devices only. Prints, per case,
epoch and step, the rows of the global array this process holds (their first row and
sample ids) and the global array's sum computed by a jitted function over both processes.
tests/plugin/test_jax_multiprocess.py starts two and compares with DALI's recording."""

from __future__ import annotations

import json
import os
import pathlib
import sys

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[i]) for i in (1, 2)]  # tests/, repo

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax  # noqa: E402

jax.config.update("jax_cpu_collectives_implementation", "gloo")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax_cases import write_files  # noqa: E402

from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, LastBatchPolicy, data_iterator  # noqa: E402

CASES = ("sharding-n16-bs2-FILL-pad0", "sharding-n18-bs2-DROP-pad1",
         "decorator-n18-bs2-FILL-pad0", "decorator-n16-bs2-DROP-pad1")


def run(name: str, root: pathlib.Path) -> list:
    mode, n, bs, policy, pad = name.split("-")
    n, bs, pad = int(n[1:]), int(bs[2:]), pad == "pad1"
    files = write_files(root, n)

    def graph(shard_id=0, num_shards=1):
        data, _ = fn.readers.file(file_root=files, name="Reader", file_filters=["*.bin"],
                                  shard_id=shard_id, num_shards=num_shards, pad_last_batch=pad)
        return data

    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    last = getattr(LastBatchPolicy, policy)
    if mode == "decorator":
        it = data_iterator(graph, output_map=["data"], reader_name="Reader",
                           last_batch_policy=last, sharding=sharding)(batch_size=bs * 4)
    else:
        # Shard k of the four feeds the k-th device by id (ids are not 0..3 across
        # processes: the second process's start at 2048 here).
        rank = {d: k for k, d in enumerate(sorted(jax.devices(), key=lambda d: d.id))}
        mine = sorted(jax.local_devices(), key=lambda d: d.id)
        pipes = [pipeline_def(graph, batch_size=bs, num_threads=1, device_id=None)(
            shard_id=rank[d], num_shards=jax.device_count()) for d in mine]
        it = DALIGenericIterator(pipes, ["data"], reader_name="Reader", last_batch_policy=last,
                                 sharding=sharding)
    total = jax.jit(jnp.sum)
    epochs = []
    for _ in range(2):
        steps = []
        for batch in it:
            array = batch["data"]
            rows = sorted((s.index[0].start or 0, np.asarray(s.data).ravel().tolist())
                          for s in array.addressable_shards)
            steps.append({"shape": list(array.shape), "rows": rows,
                          "sum": int(total(array.astype(jnp.int32)))})
        epochs.append(steps)
        it.reset()
    return epochs


if __name__ == "__main__":
    pid, port, root = int(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=2,
                               process_id=pid)
    out = {"process": jax.process_index(), "devices": jax.device_count(),
           "cases": {name: run(name, root / str(pid)) for name in CASES}}
    print(json.dumps(out))
