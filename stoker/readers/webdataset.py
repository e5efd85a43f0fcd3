"""Webdataset tar shards: their members, DALI's index files (v1.1, v1.2), and the samples
a reader's ``ext`` sets pick from them.

Without an index file a shard is walked header by header (``tar_loops.walk_tar``: GNU,
PAX and ustar archives). DALI's index (what its ``wds2idx`` writes) is text: a line
``v1.2 <samples>`` (or ``v1.1``), then one line per sample, each component as ``<ext>
<offset> <size> <member name>`` (v1.1: no name); offsets point at the member's data and
are multiples of 512.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.readers.index import DatasetError

VERSIONS = ("v1.1", "v1.2")


@dataclass
class Members:
    """A shard's members: data offset, size, the sample each belongs to (-1: none), and
    name and extension as byte ranges of ``blob``."""

    offset: np.ndarray
    size: np.ndarray
    sample: np.ndarray
    samples: int
    blob: np.ndarray
    name_start: np.ndarray
    name_end: np.ndarray
    ext_start: np.ndarray
    ext_end: np.ndarray

    def name(self, m: int) -> str:
        return self.blob[self.name_start[m]:self.name_end[m]].tobytes().decode("utf-8",
                                                                                "replace")


def walk(data: np.ndarray, path: str) -> Members:
    """The members of a shard's bytes."""
    tar = loops("readers.tar_loops")
    empty = np.zeros(0, np.int64)
    count, used, status, pos = tar.walk_tar(data, False, empty, empty, empty, empty,
                                            np.zeros(0, np.uint8))
    if status == 3:
        warnings.warn(f"{path!r} ends inside a tar header at offset {pos}: the archive is "
                      f"truncated; its {count} whole members are read", stacklevel=3)
    elif status:
        what = "a PAX header is malformed" if status == 2 else \
            "a header's checksum or size field is not valid"
        raise DatasetError(f"{path!r} is not a valid tar archive: {what} at offset {pos}")
    offset, size = np.empty(count, np.int64), np.empty(count, np.int64)
    starts, ends = np.empty(count, np.int64), np.empty(count, np.int64)
    blob = np.empty(max(used, 1), np.uint8)
    tar.walk_tar(data, True, offset, size, starts, ends, blob)
    key_ends, ext_starts = np.empty(count, np.int64), np.empty(count, np.int64)
    tar.split_names(blob, starts, ends, key_ends, ext_starts)
    sample = np.empty(count, np.int64)
    samples = tar.group_samples(blob, starts, key_ends, sample)
    return Members(offset, size, sample, int(samples), blob, starts, ends, ext_starts, ends)


def parse_index(text: bytes, path: str) -> Members:
    """The members an index file lists (one Python split per line; numbers converted by
    numpy)."""
    lines = text.split(b"\n")
    head = lines[0].split()
    if len(head) != 2 or head[0].decode("ascii", "replace") not in VERSIONS \
            or not head[1].isdigit():
        raise DatasetError(f"index file {path!r}, line 1: expected '<version> <samples>' "
                           f"with version v1.1 or v1.2, got {lines[0][:60]!r} (DALI: "
                           "Unsupported version of the index file)")
    named = head[0] == b"v1.2"
    per = 4 if named else 3
    want = int(head[1])
    rows = [(k + 2, r) for k, r in enumerate(ln.split() for ln in lines[1:]) if r]
    if len(rows) != want:
        raise DatasetError(f"index file {path!r} announces {want} samples and lists "
                           f"{len(rows)}")
    counts = np.array([len(r) for _, r in rows], np.int64)
    bad = counts % per != 0
    if bad.any():
        line = rows[int(np.argmax(bad))][0]
        raise DatasetError(
            f"index file {path!r}, line {line}: each component needs "
            f"{'<ext> <offset> <size> <name>' if named else '<ext> <offset> <size>'}")
    tokens = list(itertools.chain.from_iterable(r for _, r in rows))
    samples = np.repeat(np.arange(want, dtype=np.int64), counts // per)
    try:
        offsets = np.array(tokens[1::per], np.bytes_).astype(np.int64) if tokens \
            else np.zeros(0, np.int64)
        sizes = np.array(tokens[2::per], np.bytes_).astype(np.int64) if tokens \
            else np.zeros(0, np.int64)
        if (offsets < 0).any() or (sizes < 0).any():
            raise ValueError
    except ValueError:
        for c in range(0, len(tokens), per):
            if not (tokens[c + 1].isdigit() and tokens[c + 2].isdigit()):
                line = rows[int(samples[c // per])][0]
                raise DatasetError(f"index file {path!r}, line {line}: offset "
                                   f"{tokens[c + 1]!r} and size {tokens[c + 2]!r} must be "
                                   "non-negative integers") from None
        raise
    misplaced = offsets % 512 != 0
    if misplaced.any():
        c = int(np.argmax(misplaced))
        raise DatasetError(f"index file {path!r}, line {rows[int(samples[c])][0]}: offset "
                           f"{int(offsets[c])} is not a multiple of the tar block size (512)")
    exts = tokens[0::per]
    names = tokens[3::per] if named else [b""] * len(exts)
    blob = b"".join(itertools.chain.from_iterable(zip(exts, names, strict=True)))
    ext_len = np.fromiter(map(len, exts), np.int64, len(exts))
    name_len = np.fromiter(map(len, names), np.int64, len(names))
    ext_start = np.cumsum(ext_len + name_len) - ext_len - name_len
    return Members(offsets, sizes, samples, want, np.frombuffer(blob or b"\0", np.uint8),
                   ext_start + ext_len, ext_start + ext_len + name_len, ext_start,
                   ext_start + ext_len)


def format_index(m: Members) -> bytes:
    """DALI's v1.2 index of the members (what wds2idx writes)."""
    text = loops("readers.text_loops")
    out = np.empty(len(m.blob) * 2 + 44 * len(m.offset) + 2, np.uint8)
    n = text.webdataset_lines(m.blob, m.sample, m.ext_start, m.ext_end, m.name_start,
                              m.name_end, m.offset, m.size, out)
    return f"v1.2 {m.samples}\n".encode() + out[:n].tobytes()


@dataclass
class Outputs:
    """Which member feeds each output of each sample (-1: none) and how many samples had
    two members for one output."""

    component: np.ndarray  # (samples, outputs)
    doubles: int


def pick(m: Members, ext: Sequence[str], case_sensitive: bool) -> Outputs:
    """For each output (an ``ext`` entry: extensions separated by ";"), each sample's first
    member with one of its extensions."""
    tar = loops("readers.tar_loops")
    wanted, owner = [], []
    for o, entry in enumerate(ext):
        for e in entry.split(";"):
            wanted.append(e.encode())
            owner.append(o)
    bounds = np.cumsum([0] + [len(w) for w in wanted]).astype(np.int64)
    blob = np.frombuffer(b"".join(wanted) or b"\0", np.uint8)
    component = np.empty((m.samples, len(ext)), np.int64)
    doubles = tar.match_outputs(m.blob, m.ext_start, m.ext_end, m.sample, blob, bounds,
                                np.array(owner, np.int64), case_sensitive, component)
    return Outputs(component, int(doubles))
