"""Webdataset shards and reader cases, shared by the DALI recorder
(tests/data/record/webdataset_reader.py) and the replay
(tests/readers/test_webdataset_vs_dali.py).

Index files are written here from ``tarfile``'s own member offsets (v1.2 as DALI's wds2idx
writes them, and v1.1), independently of stoker's tar walker.
"""

from __future__ import annotations

import os
import tarfile
from typing import Any

import numpy as np
from container_writers import write_tar

MEMBERS = [("s0.jpg", b"J0"), ("s0.cls", b"0"), ("s0.seg.png", b"P0"),
           ("s1.jpg", b"J1x"), ("s1.cls", b"1"),
           ("dir/s2.JPG", b"J2"), ("dir/s2.cls", b"2"),
           ("s3.cls", b"3"),
           ("s4.jpeg", b"J4"), ("s4.cls", b"4"), ("s4.jpg", b"JJ4"),
           ("a.b/s5.jpg", b"J5"), ("a.b/s5.cls", b"5"),
           ("s6.jpg", b"J6"), ("s7.jpg", b"J7"), ("s6.cls", b"6")]


def write_index(tar_path: str, index_path: str, version: str = "v1.2") -> None:
    """DALI's index of ``tar_path`` from tarfile's member list."""
    samples: list[list[str]] = []
    last = None
    with tarfile.open(tar_path) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            base = m.name.rsplit("/", 1)[-1]
            if base.startswith("."):
                continue
            cut = m.name.find(".", m.name.rfind("/") + 1)
            key, ext = m.name[:cut], m.name[cut + 1:]
            entry = f"{ext} {m.offset_data} {m.size}" + (f" {m.name}" if version == "v1.2"
                                                          else "")
            if key != last:
                samples.append([])
                last = key
            samples[-1].append(entry)
    with open(index_path, "w") as f:
        f.write(f"{version} {len(samples)}\n" + "".join(" ".join(s) + "\n" for s in samples))


def write_datasets(folder: str) -> dict[str, tuple[list[str], list[str] | None]]:
    """{name: (tar paths, index paths or None)}."""
    sets: dict[str, tuple[list[str], list[str] | None]] = {}
    for fmt in ("gnu", "pax", "ustar"):
        path = os.path.join(folder, f"{fmt}.tar")
        write_tar(path, MEMBERS, fmt)
        sets[fmt] = ([path], None)
    gnu = sets["gnu"][0][0]
    for version in ("v1.1", "v1.2"):
        write_index(gnu, f"{gnu}.{version}.idx", version)
        sets[f"gnu_{version}"] = ([gnu], [f"{gnu}.{version}.idx"])
    numbers = []
    for k in range(3):
        numbers += [(f"n{k}.f4", np.arange(k + 1, dtype=np.float32).tobytes()),
                    (f"n{k}.i2", np.arange(2 * k, dtype=np.int16).tobytes())]
    path = os.path.join(folder, "numbers.tar")
    write_tar(path, numbers)
    sets["numbers"] = ([path], None)
    odd = os.path.join(folder, "odd.tar")
    write_tar(odd, [("a.f4", b"12345")])
    sets["odd"] = ([odd], None)
    shards = []
    for f in range(3):
        path = os.path.join(folder, f"shard{f}.tar")
        write_tar(path, [(f"x{f}_{i}.v", bytes([10 * f + i])) for i in range(f + 2)])
        shards.append(path)
    sets["shards"] = (shards, None)
    for name, text in {"v10": "v1.0 1\njpg 512 2 s0.jpg\n",
                       "not512": "v1.2 1\njpg 513 2 s0.jpg\n",
                       "short": "v1.2 2\njpg 512 2 s0.jpg\n"}.items():
        path = os.path.join(folder, f"{name}.idx")
        with open(path, "w") as f:
            f.write(text)
        sets[f"bad_{name}"] = ([gnu], [path])
    return sets


TWO = ["jpg;jpeg", "cls"]
# (name, dataset, reader kwargs, batch size, iterations)
CASES: list[tuple[str, str, dict, int, int]] = [
    ("gnu", "gnu", {"ext": TWO}, 3, 3),
    ("pax", "pax", {"ext": TWO}, 9, 1),
    ("ustar", "ustar", {"ext": TWO}, 9, 1),
    ("index_v12", "gnu_v1.2", {"ext": TWO}, 4, 3),
    ("index_v11", "gnu_v1.1", {"ext": TWO}, 9, 1),
    ("skip_missing", "gnu", {"ext": TWO, "missing_component_behavior": "skip"}, 3, 3),
    ("error_missing", "gnu", {"ext": TWO, "missing_component_behavior": "error"}, 3, 1),
    ("case_insensitive", "gnu", {"ext": ["jpg", "seg.png"],
                                 "case_sensitive_extensions": False}, 9, 1),
    ("shared_member", "gnu", {"ext": ["jpg", "jpg;cls"]}, 9, 1),
    ("dtypes", "numbers", {"ext": ["f4", "i2"], "dtypes": ["FLOAT", "INT16"]}, 3, 1),
    ("dtype_size_mismatch", "odd", {"ext": ["f4"], "dtypes": ["FLOAT"]}, 1, 1),
    ("shards_in_order", "shards", {"ext": ["v"]}, 4, 3),
    ("shard_1_of_2", "shards", {"ext": ["v"], "shard_id": 1, "num_shards": 2}, 2, 4),
    ("shard_0_of_2_padded", "shards", {"ext": ["v"], "shard_id": 0, "num_shards": 2,
                                       "pad_last_batch": True}, 3, 3),
    ("shard_2_of_3_sticky", "shards", {"ext": ["v"], "shard_id": 2, "num_shards": 3,
                                       "stick_to_shard": True}, 3, 3),
    ("index_v10", "bad_v10", {"ext": TWO}, 1, 1),
    ("index_not_512", "bad_not512", {"ext": TWO}, 1, 1),
    ("index_too_short", "bad_short", {"ext": TWO}, 1, 1),
]


def run_case(lib: Any, sets: dict, case: tuple, folder: str) -> dict:
    from reader_cases import run_reader

    name, dataset, kwargs, batch_size, iterations = case
    paths, idxs = sets[dataset]
    kwargs = dict(kwargs)
    if "dtypes" in kwargs:
        kwargs["dtypes"] = [getattr(lib.types, t) for t in kwargs["dtypes"]]

    def define() -> list:
        out = lib.fn.readers.webdataset(paths=paths, index_paths=idxs, name="R", **kwargs)
        return list(out) if isinstance(out, list | tuple) else [out]

    return run_reader(lib, folder, define, batch_size, iterations)
