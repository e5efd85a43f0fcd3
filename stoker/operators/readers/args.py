"""The arguments every DALI reader takes, with DALI 2.4's defaults, and their checks.

One definition for all readers, so that a reader's schema lists only what is its own.
"""

from __future__ import annotations

from stoker.errors import ArgumentError
from stoker.operators.machinery.schema import Arg


def reader_args(*, shuffle_after_epoch: bool = True, containers: bool = True) -> tuple[Arg, ...]:
    """DALI's common reader arguments; ``containers``: shuffle_after_epoch permutes whole
    files (TFRecord, webdataset, RecordIO) rather than samples."""
    shuffled = ("the order of the files (each file's records stay in order)" if containers
                else "the whole dataset")
    args = (
        Arg("random_shuffle", "bool", False, "Deliver each epoch's shard in a random order: "
            "an exact permutation per epoch, reproducible from 'seed'."),
        Arg("initial_fill", "int", 1024, "Accepted for portability: DALI's shuffle buffer "
            "size; stoker's shuffle is an exact permutation and needs no buffer.",
            range=(1, None)),
        Arg("shard_id", "int", 0, "Which shard this reader reads.", range=(0, None)),
        Arg("num_shards", "int", 1, "Number of shards the dataset is split into.",
            range=(1, None)),
        Arg("stick_to_shard", "bool", False, "Read the same shard every epoch instead of "
            "moving on to the next one."),
        Arg("pad_last_batch", "bool", False, "Repeat the shard's last sample so every shard "
            "counts the same and no batch mixes two epochs."),
        Arg("lazy_init", "bool", False, "Index the dataset on first use instead of at "
            "build()."),
        Arg("read_ahead", "bool", False, "Accepted for portability."),
        Arg("dont_use_mmap", "bool", False, "Read the files with preadv into memory instead "
            "of mapping them (mapped records are zero-copy views). The readers that map "
            "files (tfrecord, mxnet, webdataset, numpy) use it; the others ignore it."),
        Arg("prefetch_queue_depth", "int", 1, "Accepted for portability.", range=(1, None)),
        Arg("skip_cached_images", "bool", False, "Accepted for portability."),
        Arg("tensor_init_bytes", "int", 1048576, "Accepted for portability."),
    )
    if shuffle_after_epoch:
        args += (
            Arg("shuffle_after_epoch", "bool", False, f"Permute {shuffled} every epoch, the "
                "same way on every shard, and read this shard's slice of it."),
            Arg("shuffle_after_epoch_seed", "int", None, "Seed of shuffle_after_epoch's "
                "permutations; shared by all shards (default: a fixed constant)."),
        )
    return args


def check_reader_args(fn_name: str, args: dict, *, random_with_epoch_shuffle: bool) -> None:
    """The combinations DALI refuses. ``random_with_epoch_shuffle``: whether
    random_shuffle may go with shuffle_after_epoch (container readers: yes)."""
    if not args["shard_id"] < args["num_shards"]:
        raise ArgumentError(f"{fn_name}: argument 'shard_id' must be less than num_shards="
                            f"{args['num_shards']}, got {args['shard_id']}")
    if args.get("shuffle_after_epoch"):
        if args.get("random_shuffle") and not random_with_epoch_shuffle:
            raise ArgumentError(f"{fn_name}: 'random_shuffle' and 'shuffle_after_epoch' "
                                "cannot both be True")
        if args.get("stick_to_shard"):
            raise ArgumentError(f"{fn_name}: 'stick_to_shard' and 'shuffle_after_epoch' "
                                "cannot both be True (shuffle_after_epoch already keeps each "
                                "reader on its shard)")
    if args.get("use_o_direct") and not args.get("dont_use_mmap"):
        raise ArgumentError(f"{fn_name}: 'use_o_direct' needs dont_use_mmap=True (DALI: "
                            "Cannot use use_o_direct with dont_use_mmap=False)")
