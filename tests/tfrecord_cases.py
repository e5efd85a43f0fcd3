"""TFRecord datasets and reader cases, shared by the DALI recorder
(tests/data/record/tfrecord_reader.py) and the replay (tests/readers/test_tfrecord_vs_dali.py).

``write_datasets(folder)`` writes the same files every time; a case names files, features
(as plain lists, so the recorder can build DALI's Feature objects and the replay
stoker's), reader arguments, a batch size and a number of iterations.
"""

from __future__ import annotations

import os
from typing import Any

from container_writers import example, write_index, write_tfrecord


def _simple(i: int) -> dict[str, Any]:
    return {"img": bytes([i % 256]) * (i % 5 + 1), "lab": [i], "fl": [i / 2] * (i % 3),
            "iv": list(range(i % 4)), "f1": [1.5 + i], "even": list(range(2 * (i % 3)))}


def write_datasets(folder: str) -> dict[str, tuple[list[str], list[str]]]:
    """{name: (tfrecord paths, index paths)}."""
    sets: dict[str, tuple[list[str], list[str]]] = {}

    def put(name: str, files: list[list[bytes]]) -> None:
        paths, idxs = [], []
        for k, records in enumerate(files):
            path = os.path.join(folder, f"{name}{k}.tfrecord")
            spans = write_tfrecord(path, records)
            write_index(path + ".idx", spans)
            paths.append(path)
            idxs.append(path + ".idx")
        sets[name] = (paths, idxs)

    # One file, every record has every feature; odd records use unpacked number lists.
    put("one", [[example(_simple(i), packed=i % 2 == 0) for i in range(7)]])
    # Four files of 2, 3, 4, 5 records: sharding runs across file boundaries.
    put("four", [[example({"v": [100 * f + i]}) for i in range(f + 2)] for f in range(4)])
    return sets


# Feature specs: ("fixed", shape, dtype, default) or ("var", partial_shape | None, dtype,
# default); dtype is "int64", "float32" or "string".
IMAGENET = {"img": ("fixed", [], "string", ""), "lab": ("fixed", [1], "int64", -1)}
NUMBERS = {"lab": ("fixed", [], "int64", -1), "fl": ("var", None, "float32", 0.0),
           "iv": ("var", None, "int64", 0), "f1": ("fixed", [1, 1], "float32", 0.0)}
V = {"v": ("fixed", [], "int64", 0)}

# (name, dataset, features, reader kwargs, batch size, iterations)
CASES: list[tuple[str, str, dict, dict, int, int]] = [
    ("imagenet_features", "one", IMAGENET, {}, 7, 1),
    ("number_features", "one", NUMBERS, {}, 3, 3),
    ("fixed_scalar_float", "one", {"f1": ("fixed", [], "float32", 0.0)}, {}, 7, 1),
    ("string_shape_1", "one", {"img": ("fixed", [1], "string", "")}, {}, 7, 1),
    ("partial_shape", "one", {"even": ("var", [2], "int64", 0)}, {}, 7, 1),
    ("partial_shape_2x1", "one", {"even": ("var", [2, 1], "int64", 0)}, {}, 7, 1),
    ("files_in_order", "four", V, {}, 5, 4),
    ("shard_1_of_3", "four", V, {"shard_id": 1, "num_shards": 3}, 4, 4),
    ("shard_2_of_3_padded", "four", V, {"shard_id": 2, "num_shards": 3,
                                         "pad_last_batch": True}, 3, 5),
    ("shard_0_of_2_sticky", "four", V, {"shard_id": 0, "num_shards": 2,
                                         "stick_to_shard": True}, 3, 4),
    ("three_values_for_2x1", "one", {"iv": ("fixed", [2, 1], "int64", 0)}, {}, 7, 1),
    ("odd_count_partial", "one", {"iv": ("var", [2], "int64", 0)}, {}, 7, 1),
    ("string_varlen", "one", {"img": ("var", None, "string", "")}, {}, 7, 1),
    ("string_two_values", "one", {"img": ("fixed", [2], "string", "")}, {}, 7, 1),
]


def features(spec: dict, tfrec: Any) -> dict:
    """A case's features as ``tfrec``'s (DALI's or stoker's) Feature objects."""
    out = {}
    for name, (kind, shape, dtype, default) in spec.items():
        t = getattr(tfrec, dtype)
        if kind == "fixed":
            out[name] = tfrec.FixedLenFeature(shape, t, default)
        elif shape is None:
            out[name] = tfrec.VarLenFeature(t, default)
        else:
            out[name] = tfrec.VarLenFeature(shape, t, default)
    return out


def run_case(lib: Any, tfrec: Any, sets: dict, case: tuple, folder: str) -> dict:
    """The case's outcome on ``lib`` (reader_cases.run_reader)."""
    from reader_cases import run_reader

    name, dataset, spec, kwargs, batch_size, iterations = case
    paths, idxs = sets[dataset]

    def define() -> list:
        out = lib.fn.readers.tfrecord(path=paths, index_path=idxs,
                                      features=features(spec, tfrec), name="R", **kwargs)
        return [out[k] for k in spec]

    return run_reader(lib, folder, define, batch_size, iterations)
