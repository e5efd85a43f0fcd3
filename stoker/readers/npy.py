"""``.npy`` files for ``fn.readers.numpy``: the dataset listing, the header, the array.

The format (numpy's ``numpy.lib.format`` documentation): the magic ``\\x93NUMPY``, a major
and minor version byte, the header length (2 bytes little endian in version 1, 4 bytes in
versions 2 and 3), then the header, a Python dict literal ``{'descr': '<f4',
'fortran_order': False, 'shape': (3, 4), }`` padded with spaces and a newline so that the
data starts at a multiple of 16 (64 in recent numpy), then the data.

A small file is read whole with one ``pread``; a larger one is memory-mapped
copy-on-write, so the array is a view whose pages load when first touched (by whichever
worker thread reads them: the region-of-interest copy, a later operator). Fortran-order
arrays are converted to C order, as DALI does; big-endian ones to native order (DALI
refuses them).
"""

from __future__ import annotations

import ast
import math
import mmap
import os
import re
from dataclasses import dataclass

import numpy as np

from stoker.readers.index import DatasetError, _is_dir, _scandir_sorted, glob_matcher

MAGIC = b"\x93NUMPY"
# Files up to this size are read with one pread; bigger ones are mapped.
READ_WHOLE = 64 << 10
# The header almost always fits here: one pread gives header and (small) data.
HEAD = 4096
_FAST = re.compile(rb"\{'descr': '([^']+)', 'fortran_order': (True|False), "
                   rb"'shape': \(([0-9, ]*)\), \}")


class NpyError(ValueError):
    """A file is not a readable .npy file; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Header:
    dtype: np.dtype
    shape: tuple[int, ...]
    fortran: bool
    offset: int  # where the data starts

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


# Headers seen, by their bytes: a dataset's files mostly share one (a few us per file).
_SEEN: dict[bytes, Header] = {}


def parse_header(head: bytes, path: str) -> Header:
    """The header at the start of a file (``head``: its first bytes, at least the header)."""
    end = _header_end(head)
    if end and end <= len(head):
        known = _SEEN.get(head[:end])
        if known is not None:
            return known
    header = _parse_header(head, path)
    if len(_SEEN) < 4096:
        _SEEN[head[:header.offset]] = header
    return header


def _parse_header(head: bytes, path: str) -> Header:
    if len(head) < 10 or not head.startswith(MAGIC):
        raise NpyError(f"{path!r} is not a .npy file (it does not start with the .npy magic "
                       "bytes \\x93NUMPY)")
    major = head[6]
    if major == 1:
        length, start = int.from_bytes(head[8:10], "little"), 10
    elif major in (2, 3):
        length, start = int.from_bytes(head[8:12], "little"), 12
    else:
        raise NpyError(f"{path!r}: .npy format version {major}.{head[7]} is not supported "
                       "(versions 1, 2 and 3 are)")
    if len(head) < start + length:
        raise NpyError(f"{path!r}: the file ends inside its .npy header ({len(head)} bytes, "
                       f"the header claims {start + length})")
    text = head[start:start + length]
    fast = _FAST.match(text)
    try:
        if fast is not None:
            descr = fast.group(1).decode("ascii")
            fortran = fast.group(2) == b"True"
            shape = tuple(int(v) for v in fast.group(3).split(b",") if v.strip())
        else:
            d = ast.literal_eval(text.decode("latin-1"))
            descr, fortran, shape = d["descr"], bool(d["fortran_order"]), tuple(d["shape"])
        dtype = np.dtype(descr)
    except (ValueError, SyntaxError, KeyError, TypeError) as e:
        raise NpyError(f"{path!r}: malformed .npy header at offset {start} "
                       f"({type(e).__name__}): {text[:80]!r}") from None
    if dtype.hasobject or dtype.fields is not None or dtype.kind not in "biufc":
        raise NpyError(f"{path!r}: arrays of dtype {dtype} are not supported (numbers and "
                       "booleans are)")
    if any(not isinstance(v, int) or v < 0 for v in shape):
        raise NpyError(f"{path!r}: the header's shape {shape} is not a shape")
    return Header(dtype, shape, fortran, start + length)


def _header_end(head: bytes) -> int:
    """Where the header that ``head`` starts with ends (0 when unknown)."""
    if len(head) < 12 or not head.startswith(MAGIC):
        return 0
    if head[6] == 1:
        return 10 + int.from_bytes(head[8:10], "little")
    return 12 + int.from_bytes(head[8:12], "little")


def read(path: str, use_mmap: bool) -> tuple[np.ndarray, Header]:
    """The array stored in ``path`` (C order, native byte order) and its header. Raises
    OSError (naming the path) or NpyError."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        whole = size <= READ_WHOLE or not use_mmap
        buf = np.empty(size if whole else min(size, HEAD), np.uint8)
        got = os.preadv(fd, [buf], 0)
        head = buf[:got].tobytes()
        need = _header_end(head)
        if need > len(head):  # a header longer than HEAD bytes
            head = os.pread(fd, need, 0)
        header = parse_header(head, path)
        if size - header.offset < header.nbytes:
            raise NpyError(f"{path!r}: the header's shape {header.shape} of "
                           f"{header.dtype} needs {header.nbytes} bytes of data from offset "
                           f"{header.offset}, the file has {size - header.offset} (is it "
                           "truncated?)")
        if whole:
            while got < size:  # preadv may return less than asked
                more = os.preadv(fd, [memoryview(buf)[got:]], got)
                if more == 0:
                    raise NpyError(f"{path!r} shrank while being read")
                got += more
            data = buf[header.offset:header.offset + header.nbytes]
        else:
            mapped = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
            data = np.frombuffer(mapped, np.uint8, header.nbytes, header.offset)
    finally:
        os.close(fd)
    return as_array(data, header), header


def as_array(data: np.ndarray, header: Header) -> np.ndarray:
    """The raw bytes ``data`` viewed as the header's array, in C order and native bytes."""
    dtype, shape = header.dtype, header.shape
    if header.offset % dtype.alignment:
        data = data.copy()  # a data offset that is not aligned (hand-made files)
    arr = data if dtype == np.uint8 else data.view(dtype)
    arr = arr.reshape(shape[::-1] if header.fortran else shape)
    if header.fortran:
        arr = np.ascontiguousarray(arr.T)
    if not dtype.isnative:
        arr = arr.astype(dtype.newbyteorder("="))
    return arr


def list_root(root: str, pattern: str, who: str) -> list[str]:
    """DALI's listing of a numpy ``file_root``: the root's matching files (as
    ``./name``), then each sub-folder's, folders and files sorted by name, one level down;
    the pattern matches the bare file name, case-sensitively."""
    if not os.path.isdir(root):
        raise DatasetError(f"{who}: file_root {root!r} is not a folder" if os.path.exists(root)
                           else f"{who}: file_root {root!r} does not exist")
    match = glob_matcher([pattern], case_sensitive=True)
    names: list[str] = []
    folders = []
    for entry in _scandir_sorted(root, who):
        if _is_dir(entry, who):
            folders.append(entry.name)
        elif match(entry.name):
            names.append(f"./{entry.name}")
    for folder in folders:
        for entry in _scandir_sorted(os.path.join(root, folder), who):
            if not _is_dir(entry, who) and match(entry.name):
                names.append(f"{folder}/{entry.name}")
    if not names:
        raise DatasetError(f"{who}: no file matching file_filter={pattern!r} in {root!r} or "
                           "its sub-folders")
    return names


def read_list(path: str, who: str) -> list[str]:
    """A numpy ``file_list``: one path per line (the whole line), empty lines skipped."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            names = [line.rstrip("\r\n") for line in f]
    except FileNotFoundError:
        raise DatasetError(f"{who}: file_list {path!r} does not exist") from None
    except OSError as e:
        raise DatasetError(f"{who}: cannot read file_list {path!r}: {e.strerror}") from None
    names = [n for n in names if n.strip()]
    if not names:
        raise DatasetError(f"{who}: file_list {path!r} has no entries")
    return names
