"""``.npy`` datasets and fn.readers.numpy cases, shared by the DALI recorder
(tests/data/record/numpy_reader.py) and the replay (tests/readers/test_numpy_vs_dali.py).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def write_datasets(folder: str) -> str:
    """Writes the files; returns the dataset root."""
    root = os.path.join(folder, "npy")
    for sub in ("B", "a/x", "a.b", ".h"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    # The same dtype and rank everywhere: DALI wants one per batch.
    for k, name in enumerate(["z", "B/1", "a/x/2", "a/3", "a.b/4", ".h/5", "A", "_", "a/.6",
                              "B"]):
        np.save(os.path.join(root, f"{name}.npy"),
                np.arange(4 * (k + 1), dtype=np.int16).reshape(4, k + 1) + k)
    np.save(os.path.join(root, "a.b/odd.NPY.txt"), np.zeros((1, 1), np.int16))
    grid = np.arange(60, dtype=np.float32).reshape(6, 10)
    np.save(os.path.join(folder, "grid.npy"), grid)
    np.save(os.path.join(folder, "grid_f.npy"), np.asfortranarray(grid))
    np.save(os.path.join(folder, "cube.npy"), np.arange(4 * 5 * 6, dtype=np.uint8)
            .reshape(4, 5, 6))
    with open(os.path.join(folder, "list.txt"), "w") as f:
        f.write("npy/B/1.npy\n\nnpy/a/3.npy\n")
    return root


GRID = ["grid.npy"]
# (name, reader kwargs (paths relative to the folder), batch size, iterations)
CASES: list[tuple[str, dict, int, int]] = [
    ("file_root_listing", {"file_root": "npy"}, 3, 4),
    ("file_root_filter", {"file_root": "npy", "file_filter": "[AB]*"}, 2, 2),
    ("files_relative", {"file_root": ".", "files": ["grid.npy", "grid_f.npy"]}, 2, 1),
    ("file_list", {"file_list": "list.txt"}, 2, 1),
    ("roi", {"files": GRID, "roi_start": [1, 2], "roi_end": [3, 7]}, 1, 1),
    ("roi_shape", {"files": GRID, "roi_start": [1, 2], "roi_shape": [2, 3]}, 1, 1),
    ("roi_axes", {"files": GRID, "roi_start": [2], "roi_end": [5], "roi_axes": [1]}, 1, 1),
    ("roi_axes_reversed", {"files": GRID, "roi_start": [2, 1], "roi_end": [5, 3],
                           "roi_axes": [1, 0]}, 1, 1),
    ("rel_roi", {"files": GRID, "rel_roi_start": [0.25, 0.15],
                 "rel_roi_end": [0.75, 0.85]}, 1, 1),
    ("rel_roi_shape", {"files": GRID, "rel_roi_start": [0.14, 0.14],
                       "rel_roi_shape": [0.14, 0.33]}, 1, 1),
    ("rel_roi_halves", {"files": GRID, "rel_roi_start": [0.25, 0.05],
                        "rel_roi_end": [0.75, 0.45]}, 1, 1),
    ("start_and_rel_end", {"files": GRID, "roi_start": [1, 1], "rel_roi_end": [0.5, 0.5]},
     1, 1),
    ("end_only", {"files": GRID, "roi_end": [2, 3]}, 1, 1),
    ("fortran_roi", {"files": ["grid_f.npy"], "roi_start": [1, 1], "roi_end": [4, 3]}, 1, 1),
    ("cube_roi", {"files": ["cube.npy"], "roi_start": [1, 0, 2], "roi_shape": [2, 5, 3]},
     1, 1),
    ("out_of_bounds_error", {"files": GRID, "roi_start": [-1, 2], "roi_end": [3, 12]}, 1, 1),
    ("out_of_bounds_pad", {"files": GRID, "roi_start": [-1, 8], "roi_end": [3, 12],
                           "out_of_bounds_policy": "pad", "fill_value": -5.0}, 1, 1),
    ("out_of_bounds_trim", {"files": GRID, "roi_start": [-1, 8], "roi_end": [3, 12],
                            "out_of_bounds_policy": "trim_to_shape"}, 1, 1),
    ("roi_too_many_values", {"files": GRID, "roi_start": [1, 1, 1], "roi_end": [2, 2, 2]},
     1, 1),
    ("roi_end_before_start", {"files": GRID, "roi_start": [3, 1], "roi_end": [1, 3]}, 1, 1),
    ("two_ends", {"files": GRID, "roi_start": [1, 1], "roi_end": [2, 2],
                  "roi_shape": [1, 1]}, 1, 1),
    ("bad_policy", {"files": GRID, "roi_start": [1, 1], "roi_end": [2, 2],
                    "out_of_bounds_policy": "wrap"}, 1, 1),
    ("sharded", {"file_root": "npy", "shard_id": 1, "num_shards": 3, "pad_last_batch": True},
     2, 4),
    ("mixed_dtypes", {"files": ["grid.npy", "cube.npy"]}, 2, 1),
]


def run_case(lib: Any, folder: str, case: tuple) -> dict:
    from reader_cases import run_reader

    name, kwargs, batch_size, iterations = case
    kwargs = dict(kwargs)
    for key in ("file_root", "file_list"):
        if key in kwargs:
            kwargs[key] = os.path.join(folder, kwargs[key])
    if "files" in kwargs and "file_root" not in kwargs:
        kwargs["files"] = [os.path.join(folder, f) for f in kwargs["files"]]

    def define() -> list:
        return [lib.fn.readers.numpy(name="R", **kwargs)]

    return run_reader(lib, folder, define, batch_size, iterations)
