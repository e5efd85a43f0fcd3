"""RecordIO datasets and fn.readers.mxnet cases, shared by the DALI recorder
(tests/data/record/mxnet_reader.py) and the replay (tests/readers/test_mxnet_vs_dali.py).
"""

from __future__ import annotations

import os
import struct
from typing import Any

from container_writers import RECORDIO_MAGIC, irheader, write_recordio

MAGIC = struct.pack("<I", RECORDIO_MAGIC)


def write_datasets(folder: str) -> dict[str, tuple[list[str], list[str]]]:
    """{name: (.rec paths, [index path])}."""
    a, b = os.path.join(folder, "a.rec"), os.path.join(folder, "b.rec")
    records = [irheader(1.5, 0) + b"IMG0", irheader([2.0, 3.0, 4.0], 1) + b"IMG11",
               irheader(7.0, 2) + b"AB" + MAGIC + b"CD" + MAGIC + b"EF",
               irheader(8.0, 3) + b"X" * 7, irheader(9.0, 4), irheader([], 5) + b"Z"]
    offsets = write_recordio(a, None, records, splits={2: [26, 32]})
    more = write_recordio(b, None, [irheader(10.0 + k, 6 + k) + bytes([k]) * k
                                    for k in range(5)], start=os.path.getsize(a))
    sets = {}
    for name, offs in {"a": offsets, "ab": offsets + more,
                       "ab_shuffled": (offsets + more)[::-1] + offsets[:2]}.items():
        path = os.path.join(folder, f"{name}.idx")
        with open(path, "w") as f:
            f.writelines(f"{k}\t{o}\n" for k, o in enumerate(offs))
        sets[name] = ([a] if name == "a" else [a, b], [path])
    bad = os.path.join(folder, "bad.idx")
    with open(bad, "w") as f:
        f.write(f"0\t{offsets[0]}\n1\t{offsets[1] + 4}\n")
    sets["bad_offset"] = ([a], [bad])
    return sets


# (name, dataset, reader kwargs, batch size, iterations)
CASES: list[tuple[str, str, dict, int, int]] = [
    ("one_file", "a", {}, 3, 3),
    ("two_files", "ab", {}, 4, 3),
    ("unsorted_index_with_repeats", "ab_shuffled", {}, 11, 1),
    ("shard_1_of_3", "ab", {"shard_id": 1, "num_shards": 3}, 2, 4),
    ("shard_0_of_2_padded", "ab", {"shard_id": 0, "num_shards": 2, "pad_last_batch": True},
     4, 3),
    ("sticky", "ab", {"shard_id": 1, "num_shards": 2, "stick_to_shard": True}, 4, 3),
    ("wrong_offset", "bad_offset", {}, 2, 1),
    ("two_index_files", "ab", {"index_path": "twice"}, 2, 1),
]


def run_case(lib: Any, sets: dict, case: tuple, folder: str) -> dict:
    from reader_cases import run_reader

    name, dataset, kwargs, batch_size, iterations = case
    paths, idx = sets[dataset]
    kwargs = dict(kwargs)
    if kwargs.get("index_path") == "twice":
        kwargs["index_path"] = idx * 2
    kwargs.setdefault("index_path", idx)

    def define() -> list:
        return list(lib.fn.readers.mxnet(path=paths, name="R", **kwargs))

    return run_reader(lib, folder, define, batch_size, iterations)
