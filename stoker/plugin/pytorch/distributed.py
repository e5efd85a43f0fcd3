"""Sharding from PyTorch's distributed setup: which shard this process reads.

Use the *global* rank as ``shard_id`` and the world size as ``num_shards``. On several
machines, ``LOCAL_RANK`` restarts at 0 on every machine: using it as the shard would make
every machine read the same shards and skip the others. ``LOCAL_RANK`` picks the GPU
(``device_id``), never the shard.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class ShardInfo(NamedTuple):
    shard_id: int  # the global rank
    num_shards: int  # the world size
    local_rank: int  # the GPU on this machine (device_id)


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def shard_info() -> ShardInfo:
    """Rank and world size from ``torch.distributed`` when it is initialized, else from the
    variables torchrun sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``), else one shard."""
    rank, world = None, None
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            rank, world = dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    if rank is None:
        rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    if rank is None or world is None:
        rank, world = 0, 1
    if not 0 <= rank < world:
        raise ValueError(f"rank {rank} is outside the world size {world}")
    local = _env_int("LOCAL_RANK")
    return ShardInfo(rank, world, rank if local is None else local)
