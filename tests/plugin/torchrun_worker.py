"""Run by torchrun in tests/plugin/test_torchrun.py: each rank reads its shard through the
iterator for 3 epochs; rank 0 gathers every rank's sample ids and writes them as JSON."""

import json
import sys

import torch.distributed as dist

from stoker import fn, pipeline_def
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
from stoker.plugin.pytorch.distributed import shard_info

root, out, policy, shuffle, pad = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", \
    sys.argv[5] == "1"
dist.init_process_group("gloo")
info = shard_info()


@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=7)
def pipe():
    data, _ = fn.readers.file(file_root=root, file_filters=["*.bin"], name="Reader",
                              shard_id=info.shard_id, num_shards=info.num_shards,
                              random_shuffle=shuffle, pad_last_batch=pad, seed=11)
    return data


it = DALIGenericIterator(pipe(), ["data"], reader_name="Reader", auto_reset=True,
                         last_batch_policy=LastBatchPolicy[policy])
epochs = []
for _ in range(3):
    ids = [int(v) for batch in it for v in batch[0]["data"][:, 0]]
    gathered = [None] * info.num_shards
    dist.all_gather_object(gathered, ids)
    epochs.append(gathered)
if info.shard_id == 0:
    with open(out, "w") as f:
        json.dump({"epochs": epochs, "len": len(it), "world": info.num_shards}, f)
dist.destroy_process_group()
