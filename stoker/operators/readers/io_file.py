"""``fn.io.file.read``: a file's bytes, from its path given as data.

The path arrives as a 1-D array of its UTF-8 bytes (``np.frombuffer(path.encode(),
np.uint8)``; int8 works too), as DALI's DataLoader proxy recipe sends it: a torch
``ImageFolder`` whose loader returns the path, then ``fn.external_source`` and this
operator, then the decoders. Each sample is read on the pipeline's worker threads (the
read releases the GIL), so a batch's files are read in parallel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.readers.files import read_file


def path_of(encoded: Any) -> str:
    """The path a sample of encoded bytes names."""
    arr = np.asarray(encoded)
    if arr.ndim != 1 or arr.dtype.kind not in "iub" or arr.dtype.itemsize != 1:
        raise TypeError("a file path must be a 1-D array of its UTF-8 bytes (uint8 or int8), "
                        f"got a {arr.ndim}-D {arr.dtype} array; encode it with "
                        "np.frombuffer(path.encode(), np.uint8)")
    return arr.tobytes().decode("utf-8")


def read_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    # An empty file is an empty sample (DALI's memory mapping refuses it).
    return read_file(path_of(ins[0]))


def _encoded(path: str) -> np.ndarray:
    return np.frombuffer(path.encode(), np.uint8)


register(OpSchema(
    name="io.file.read",
    doc="Reads the whole file each sample names: the input is the path as a 1-D array of "
        "its UTF-8 bytes (np.frombuffer(path.encode(), np.uint8)); the output is the file's "
        "bytes, uint8.",
    inputs=(Input("filepaths", "File paths, each a 1-D uint8 or int8 array of its bytes."),),
    args=(Arg("dont_use_mmap", "bool", False, "Accepted for portability: stoker reads "
              "files with plain reads (one copy, no mapping)."),
          Arg("use_o_direct", "bool", False, "Accepted for portability: reads go through "
              "the page cache.")),
    kernel=read_kernel,
    layout=lambda layouts, args: "",
    dtype=lambda dtypes, args: np.dtype(np.uint8),
    examples=(
        Example(inputs=([_encoded(__file__), _encoded(read_file.__code__.co_filename)],)),
        Example(inputs=([_encoded(__file__).view(np.int8)],)),
        Example(inputs=([_encoded(__file__ + ".missing")],), raises=RuntimeError,
                match="No such file or directory"),
        Example(inputs=([np.array([[47, 116]], np.uint8)],), raises=RuntimeError,
                match="a file path must be a 1-D array"),
    ),
))
