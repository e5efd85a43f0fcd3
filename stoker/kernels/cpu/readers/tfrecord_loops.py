"""TFRecord framing and ``tf.train.Example`` features, a batch of records per call (numba,
GIL released).

A TFRecord file is a run of records ``uint64 length | uint32 masked_crc32c(length) |
payload[length] | uint32 masked_crc32c(payload)``, little endian. A payload is a
``tf.train.Example``: ``Example{1: Features}``, ``Features{1: map<string, Feature>}`` (map
entries are messages ``{1: key, 2: value}``), ``Feature{oneof 1: BytesList, 2: FloatList,
3: Int64List}``, each list ``{repeated 1: value}`` (numbers packed or not). Messages that
appear twice are merged and a map key that appears twice keeps its last value, as protobuf
parsers do.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit
from stoker.kernels.cpu.readers.protobuf_loops import (
    LEN,
    copy_fixed,
    copy_varints,
    count_numbers,
    find_bytes,
    read_key,
    read_len,
    skip_value,
)

# Feature kinds (the field number of the list inside tf.train.Feature); 0: missing.
BYTES, FLOATS, INT64S = 1, 2, 3

# CRC32C (Castagnoli, reflected polynomial 0x82F63B78) by table.
_CRC_TABLE = np.zeros(256, np.uint32)
for _b in range(256):
    _c = _b
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE[_b] = _c


@njit(nogil=True, cache=True)
def masked_crc32c(buf, start, end, table):  # pragma: no cover
    # In int64 with explicit masks: numba widens uint32 shifts.
    crc = np.int64(0xFFFFFFFF)
    for q in range(start, end):
        crc = np.int64(table[(crc ^ np.int64(buf[q])) & 0xFF]) ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@njit(nogil=True, cache=True)
def le_u32(buf, pos):  # pragma: no cover
    value = np.int64(0)
    for k in range(4):
        value |= np.int64(buf[pos + k]) << (8 * k)
    return value


@njit(nogil=True, cache=True)
def le_u64(buf, pos):  # pragma: no cover
    value = np.uint64(0)
    for k in range(8):
        value |= np.uint64(buf[pos + k]) << np.uint64(8 * k)
    return value


@njit(nogil=True, cache=True)
def walk_frames(buf, base, file_size, offsets, sizes, count, table):  # pragma: no cover
    """Walks the records whose headers lie in ``buf`` (the file's bytes from ``base`` on),
    appending (offset, framed size) at ``count``. Returns (records found in all, the file
    offset where the walk stopped, status): status 0 when the walk needs the bytes from
    that offset on, 1 at the file's end, 2 when the header there is not a TFRecord header
    (its length's CRC does not match), 3 when the record there runs past the file's end,
    4 when ``offsets`` is full (the caller grows it and calls again)."""
    pos = 0
    n = len(buf)
    while True:
        at = base + pos
        if at == file_size:
            return count, at, 1
        if pos + 12 > n:
            return count, at, 0
        if count == len(offsets):
            return count, at, 4
        length = le_u64(buf, pos)
        if masked_crc32c(buf, pos, pos + 8, table) != le_u32(buf, pos + 8):
            return count, at, 2
        if file_size - at < 16 or length > np.uint64(file_size - at - 16):
            return count, at, 3
        size = np.int64(length) + 16
        offsets[count] = at
        sizes[count] = size
        count += 1
        pos += size


@njit(nogil=True, cache=True)
def frame_lengths(buf, starts, sizes, lengths):  # pragma: no cover
    """Each record's payload length from its header, into ``lengths``; -1 where the
    header claims more than the record's size (from the index) holds."""
    for r in range(len(starts)):
        if sizes[r] < 16:
            lengths[r] = -1
            continue
        length = le_u64(buf, starts[r])
        lengths[r] = -1 if length > np.uint64(sizes[r] - 16) else np.int64(length)


@njit(nogil=True, cache=True)
def _match(buf, a, b, keys, ka, kb):  # pragma: no cover
    if b - a != kb - ka:
        return False
    for q in range(b - a):
        if buf[a + q] != keys[ka + q]:
            return False
    return True


@njit(nogil=True, cache=True)
def _feature(buf, a, b):  # pragma: no cover
    """(kind, body start, body end) of the list a Feature message holds; kind -1 when
    malformed (a oneof set twice keeps the last, as protobuf does)."""
    kind, vs, ve = 0, 0, 0
    pos = a
    while pos < b:
        number, wire, pos = read_key(buf, pos, b)
        if pos < 0:
            return -1, 0, 0
        if 1 <= number <= 3 and wire == LEN:
            s, e = read_len(buf, pos, b)
            if s < 0:
                return -1, 0, 0
            kind, vs, ve = number, s, e
            pos = e
        else:
            pos = skip_value(buf, pos, b, wire)
            if pos < 0:
                return -1, 0, 0
    return kind, vs, ve


@njit(nogil=True, cache=True)
def _entry(buf, a, b):  # pragma: no cover
    """(key start, key end, value start, value end) of a map entry; key start -1 when
    malformed; value start -1 when the entry has no value."""
    ks, ke, vs, ve = -1, -1, -1, -1
    have_key = False
    pos = a
    while pos < b:
        number, wire, pos = read_key(buf, pos, b)
        if pos < 0:
            return -1, -1, -1, -1
        if (number == 1 or number == 2) and wire == LEN:
            s, e = read_len(buf, pos, b)
            if s < 0:
                return -1, -1, -1, -1
            if number == 1:
                ks, ke, have_key = s, e, True
            else:
                vs, ve = s, e
            pos = e
        else:
            pos = skip_value(buf, pos, b, wire)
            if pos < 0:
                return -1, -1, -1, -1
    if not have_key:  # protobuf's default key: the empty string
        ks, ke = a, a
    return ks, ke, vs, ve


@njit(nogil=True, cache=True)
def locate_features(buf, starts, lengths, keys, key_bounds, kinds, vstarts, vends,
                    rows):  # pragma: no cover
    """For records ``r`` (payload ``buf[starts[r]:starts[r] + lengths[r]]``) and each key
    ``k`` (``keys[key_bounds[k]:key_bounds[k + 1]]``), writes row ``rows[r]`` of ``kinds``
    (0 missing, 1 bytes, 2 floats, 3 int64s) and of the list body bounds. Returns the first
    ``r`` whose payload is not an Example, or -1."""
    nk = len(key_bounds) - 1
    for r in range(len(starts)):
        row = rows[r]
        for k in range(nk):
            kinds[row, k] = 0
        pos = starts[r]
        end = pos + lengths[r]
        while pos < end:  # Example
            number, wire, pos = read_key(buf, pos, end)
            if pos < 0:
                return r
            if not (number == 1 and wire == LEN):
                pos = skip_value(buf, pos, end, wire)
                if pos < 0:
                    return r
                continue
            fa, fb = read_len(buf, pos, end)
            if fa < 0:
                return r
            pos = fb
            q = fa
            while q < fb:  # Features
                number, wire, q = read_key(buf, q, fb)
                if q < 0:
                    return r
                if not (number == 1 and wire == LEN):
                    q = skip_value(buf, q, fb, wire)
                    if q < 0:
                        return r
                    continue
                ea, eb = read_len(buf, q, fb)
                if ea < 0:
                    return r
                q = eb
                ks, ke, es, ee = _entry(buf, ea, eb)
                if ks < 0:
                    return r
                for k in range(nk):
                    if _match(buf, ks, ke, keys, key_bounds[k], key_bounds[k + 1]):
                        if es < 0:
                            kinds[row, k] = 0
                        else:
                            kind, vs, ve = _feature(buf, es, ee)
                            if kind < 0:
                                return r
                            kinds[row, k] = kind
                            vstarts[row, k] = vs
                            vends[row, k] = ve
    return -1


@njit(nogil=True, cache=True)
def count_column(buf, kinds, vstarts, vends, rows, k, kind, counts):  # pragma: no cover
    """Values of feature ``k`` in rows ``rows`` (written to ``counts``): -1 where the
    feature is missing or of another kind, -2 where its list is malformed."""
    for r in rows:
        if kinds[r, k] != kind:
            counts[r] = -1
            continue
        if kind == BYTES:
            c = 0
            while True:
                a, _ = find_bytes(buf, vstarts[r, k], vends[r, k], 1, c)
                if a == -2:
                    c = -2
                    break
                if a < 0:
                    break
                c += 1
            counts[r] = c
        else:
            c = count_numbers(buf, vstarts[r, k], vends[r, k], 1, 4 if kind == FLOATS else 0)
            counts[r] = c if c >= 0 else -2


@njit(nogil=True, cache=True)
def decode_column(buf, vstarts, vends, rows, k, kind, firsts, out_bytes,
                  out_ints):  # pragma: no cover
    """Decodes the numbers of feature ``k`` of rows ``rows`` into the flat output, row
    ``r`` from value ``firsts[r]``: floats as raw bytes into ``out_bytes``, int64s into
    ``out_ints``."""
    for r in rows:
        if kind == FLOATS:
            copy_fixed(buf, vstarts[r, k], vends[r, k], 1, 4, out_bytes, 4 * firsts[r])
        else:
            copy_varints(buf, vstarts[r, k], vends[r, k], 1, out_ints, firsts[r])


@njit(nogil=True, cache=True)
def first_bytes(buf, vstarts, vends, rows, k, bounds):  # pragma: no cover
    """(start, end) of the first value of bytes feature ``k`` per row, into ``bounds``."""
    for r in rows:
        a, b = find_bytes(buf, vstarts[r, k], vends[r, k], 1, 0)
        bounds[r, 0] = a
        bounds[r, 1] = b
