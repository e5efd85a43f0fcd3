"""What ``readers.numpy`` and ``experimental.readers.fits`` share: a dataset of whole files
given as ``file_root`` (``file_filter`` matches in the root and one level of sub-folders,
DALI's listing), ``file_list`` or ``files``, each file read into one array per output on
the reader's thread pool, and DALI's rule that the samples of one output agree in type
and number of dimensions within a batch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.schema import Arg
from stoker.operators.readers.base import IndexedReader
from stoker.readers.index import PathTable
from stoker.readers.npy import list_root, read_list
from stoker.readers.order import SampleIds
from stoker.readers.pool import ChunkPool


def check_dataset(fn: str, args: dict) -> None:
    """The dataset arguments as DALI checks them."""
    if args.get("files") is not None and args.get("file_list") is not None:
        raise ArgumentError(f"{fn}: give the files through 'files' or 'file_list', not both")
    if all(args.get(key) is None for key in ("file_root", "files", "file_list")):
        raise ArgumentError(f"{fn}: give the dataset as 'file_root', 'file_list' or 'files'")
    if args.get("files") is not None and not args["files"]:
        raise ArgumentError(f"{fn}: argument 'files' is an empty list")


def dataset_args(what: str, pattern: str) -> tuple[Arg, ...]:
    """The arguments that name a listed-files reader's dataset: ``file_root`` (files
    that ``file_filter``, default ``pattern``, matches), ``file_list`` or ``files``;
    ``what`` names the files in the documentation ("FITS files")."""
    return (
        Arg("file_root", "str", None, f"Folder of {what} (and one level of sub-folders); "
            "with files or file_list, the folder their relative paths start from."),
        Arg("file_filter", "str", pattern, "Glob pattern of the file names to take under "
            "file_root (case-sensitive)."),
        Arg("file_list", "str", None, "Text file with one path per line."),
        Arg("files", "strs", None, "Paths of the files, in reading order."),
    )


class ListedFilesReader(IndexedReader):
    """A reader of listed files: subclasses say how a file becomes its outputs."""

    POOL_NAME = "stoker-files"  # the pool threads' name
    ERRORS: tuple[type[Exception], ...] = (OSError,)  # a file's own errors (a failed row)

    def __init__(self, op: Any, pipeline: Any):
        self._pool = ChunkPool(getattr(pipeline, "num_threads", 1) or 1, self.POOL_NAME)
        super().__init__(op, pipeline)

    def read_file(self, path: str) -> list[np.ndarray]:
        """The file's outputs, one array each."""
        raise NotImplementedError

    def output_count(self) -> int:
        return 1

    def output_label(self, o: int) -> str:
        """How a batch error names output ``o`` ('' with one output)."""
        return ""

    def _build_index(self) -> PathTable:
        a, who = self.args, self._who()
        root = a.get("file_root")
        if a.get("files") is not None:
            return PathTable(root, a["files"])
        if a.get("file_list") is not None:
            names = read_list(a["file_list"], who)
            return PathTable(root or os.path.dirname(a["file_list"]), names)
        return PathTable(root, list_root(root, a["file_filter"], who))

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        from stoker.executor.context import FAILED

        paths = self.index
        names = paths.names(ids.index.tolist())

        def read_all(chunk: Sequence[str]) -> list:
            out: list = []
            for path in chunk:
                try:
                    out.append(self.read_file(path))
                except self.ERRORS as e:
                    out.append(e)
            return out

        got = self._pool.map(read_all, paths.joined(names))
        outputs: list[list] = [[None] * len(names) for _ in range(self.output_count())]
        first: list[tuple[str, np.ndarray] | None] = [None] * len(outputs)
        for row, (name, arrays) in enumerate(zip(names, got, strict=True)):
            if isinstance(arrays, Exception):
                e = arrays
                why = (f"cannot read {e.filename or name!r}: {e.strerror or e}"
                       if isinstance(e, OSError) else str(e))
                if bctx.failures is None:
                    raise self.sample_error(why, name) from e
                bctx.fail(row, str(self.sample_error(why, name)))
                for out in outputs:
                    out[row] = FAILED
                continue
            for o, arr in enumerate(arrays):
                outputs[o][row] = arr
                ref = first[o]
                if ref is None:
                    first[o] = (name, arr)
                elif arr.dtype != ref[1].dtype or arr.ndim != ref[1].ndim:
                    # DALI's rule: per output, one type and one number of dimensions a batch.
                    what = "data type" if arr.dtype != ref[1].dtype else "number of dimensions"
                    raise self.sample_error(
                        f"all samples of a batch must have the same {what}"
                        f"{self.output_label(o)}: {ref[0]!r} has {ref[1].dtype} "
                        f"{ref[1].shape}, {name!r} has {arr.dtype} {arr.shape} (DALI: "
                        "Inconsistent data)", name)
        return outputs, names

    def close(self) -> None:
        self._pool.close()
