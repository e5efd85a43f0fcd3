"""Sharding arithmetic shared by every reader, as DALI documents and measurably does it.

A dataset of ``n`` samples split into ``num_shards`` shards gives shard ``i`` the samples
``[floor(i * n / num_shards), floor((i + 1) * n / num_shards))``: contiguous, sizes that
differ by at most one. With ``pad_last_batch`` every shard counts as ``ceil(n /
num_shards)`` samples (short shards repeat their last sample), which is DALI's
``epoch_size_padded = num_shards * ceil(n / num_shards)``.
"""

from __future__ import annotations

from typing import Any


def shard_bounds(size: int, num_shards: int, shard: int) -> tuple[int, int]:
    """``[lo, hi)``: the dataset indices of ``shard``."""
    return size * shard // num_shards, size * (shard + 1) // num_shards


def padded_shard_size(size: int, num_shards: int) -> int:
    """What every shard counts as with ``pad_last_batch``: the largest shard's size."""
    return -(-size // num_shards)


def epoch_size_padded(size: int, num_shards: int, pad_last_batch: bool) -> int:
    return num_shards * padded_shard_size(size, num_shards) if pad_last_batch else size


def reader_meta(size: int, num_shards: int, shard_id: int, pad_last_batch: bool,
                stick_to_shard: bool) -> dict[str, Any]:
    """DALI's ``reader_meta`` dictionary: same keys, and the flags as ints, as DALI gives
    them (the framework iterators read these to size epochs)."""
    return {
        "epoch_size": size,
        "epoch_size_padded": epoch_size_padded(size, num_shards, pad_last_batch),
        "number_of_shards": num_shards,
        "shard_id": shard_id,
        "pad_last_batch": int(pad_last_batch),
        "stick_to_shard": int(stick_to_shard),
    }


def check_shards(size: int, num_shards: int, shard_id: int, who: str) -> None:
    """Every shard must hold at least one sample, as DALI requires."""
    if num_shards > size:
        from stoker.readers.index import DatasetError

        # DALI's words are kept so that code matching its message matches this one.
        raise DatasetError(f"{who}: num_shards={num_shards} is more than the {size} samples "
                           "found; every shard needs at least one sample (The number of "
                           f"input samples: {size}, needs to be at least equal to the "
                           f"requested number of shards: {num_shards}.)")
    if not 0 <= shard_id < num_shards:
        from stoker.errors import ArgumentError

        raise ArgumentError(f"{who}: argument 'shard_id' must be in [0, {num_shards - 1}] "
                            f"for num_shards={num_shards}, got {shard_id}")
