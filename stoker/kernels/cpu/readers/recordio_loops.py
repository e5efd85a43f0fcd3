"""MXNet RecordIO framing, compiled (numba, GIL released).

A record is one or more parts, each ``uint32 magic 0xced7230a | uint32 lrec | data``,
padded to 4 bytes; ``lrec``'s top 3 bits are the continuation flag (0 a whole record; 1
first, 2 middle, 3 last part of a split one), its low 29 bits the part's length. MXNet's
writer splits a record where its data holds the magic number and drops those 4 bytes, so
a reader joins the parts with the magic number between them.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit

MAGIC = 0xCED7230A


@njit(nogil=True, cache=True)
def _u32(buf, pos):  # pragma: no cover
    value = np.int64(0)
    for k in range(4):
        value |= np.int64(buf[pos + k]) << (8 * k)
    return value


@njit(nogil=True, cache=True)
def frame(buf, starts, sizes, data_start, data_len, status):  # pragma: no cover
    """For each record (``buf[starts[r]:starts[r] + sizes[r]]``): a whole record's data
    bounds, and ``status[r]``: 0 whole, 1 split (the caller joins its parts), -1 no magic
    number at its start, -2 its length runs past the record's size, -3 a split record
    that does not start with a first part."""
    for r in range(len(starts)):
        pos, end = starts[r], starts[r] + sizes[r]
        if pos + 8 > end:
            status[r] = -2
            continue
        if _u32(buf, pos) != MAGIC:
            status[r] = -1
            continue
        lrec = _u32(buf, pos + 4)
        flag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        if pos + 8 + length > end:
            status[r] = -2
            data_len[r] = length
            continue
        data_start[r] = pos + 8
        data_len[r] = length
        status[r] = 0 if flag == 0 else 1 if flag == 1 else -3


@njit(nogil=True, cache=True)
def parts(buf, start, end, bounds):  # pragma: no cover
    """The parts of the split record at ``start``, as (data start, length) rows of
    ``bounds``; returns how many, -1 when the parts are malformed or run past ``end``, -2
    when ``bounds`` has too few rows."""
    pos = start
    count = 0
    while pos + 8 <= end:
        if count == len(bounds):
            return -2
        if _u32(buf, pos) != MAGIC:
            return -1
        lrec = _u32(buf, pos + 4)
        flag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        if pos + 8 + length > end or (count == 0) != (flag == 1):
            return -1
        bounds[count, 0] = pos + 8
        bounds[count, 1] = length
        count += 1
        if flag == 3:
            return count
        pos += 8 + length + (-length) % 4
    return -1


@njit(nogil=True, cache=True)
def walk(buf, offsets, count):  # pragma: no cover
    """The offsets of the records of a file's bytes (whole or first parts), appended at
    ``count``. Returns (records in all, position where the walk stopped, status): 0 the
    end of the file, 1 no magic number there, 2 a record runs past the end there, 3
    ``offsets`` is full (grow it and call again from that position)."""
    n = len(buf)
    pos = 0 if count == 0 else -1
    if count:
        # Resume after the last record found.
        pos = offsets[count - 1]
        lrec = _u32(buf, pos + 4)
        length = lrec & ((1 << 29) - 1)
        pos += 8 + length + (-length) % 4
    while pos < n:
        if pos + 8 > n:
            return count, pos, 2
        if _u32(buf, pos) != MAGIC:
            return count, pos, 1
        lrec = _u32(buf, pos + 4)
        flag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        if pos + 8 + length > n:
            return count, pos, 2
        if flag <= 1:
            if count == len(offsets):
                return count, pos, 3
            offsets[count] = pos
            count += 1
        pos += 8 + length + (-length) % 4
    return count, pos, 0
