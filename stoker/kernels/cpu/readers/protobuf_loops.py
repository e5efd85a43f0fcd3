"""Protobuf wire-format decoding, compiled (numba, GIL released), for the messages readers
meet: ``tf.train.Example`` (TFRecord), Caffe ``Datum`` and Caffe2 ``TensorProtos`` (LMDB).

The wire format (protobuf's encoding guide): a message is a run of fields, each a varint
key ``field_number << 3 | wire_type`` then the value: a varint (type 0), 8 bytes (1), a
varint length and that many bytes (2: strings, bytes, sub-messages, packed repeated
numbers), or 4 bytes (5). Types 3 and 4 (groups) are obsolete and refused. Repeated
numbers may come packed (one type-2 field) or one field per value, also mixed; a parser
must take both.

Functions return positions or -1 for malformed input, never read outside ``[pos, end)``,
and leave raising to the Python caller, which knows the file and record to name.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit

# Wire types.
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5


@njit(nogil=True, cache=True)
def read_varint(buf, pos, end):  # pragma: no cover
    """(value as uint64, next position); next position -1 if the varint is cut short or
    longer than 10 bytes."""
    value = np.uint64(0)
    shift = np.uint64(0)
    while pos < end:
        b = np.uint64(buf[pos])
        pos += 1
        value |= (b & np.uint64(0x7F)) << shift
        if b < np.uint64(0x80):
            return value, pos
        shift += np.uint64(7)
        if shift >= np.uint64(70):
            return value, -1
    return value, -1


@njit(nogil=True, cache=True)
def skip_value(buf, pos, end, wire):  # pragma: no cover
    """The position after a value of ``wire`` type starting at ``pos``, or -1."""
    if wire == VARINT:
        _, pos = read_varint(buf, pos, end)
        return pos
    if wire == FIXED64:
        return pos + 8 if pos + 8 <= end else -1
    if wire == FIXED32:
        return pos + 4 if pos + 4 <= end else -1
    if wire == LEN:
        n, pos = read_varint(buf, pos, end)
        if pos < 0 or n > np.uint64(end - pos):
            return -1
        return pos + np.int64(n)
    return -1


@njit(nogil=True, cache=True)
def read_key(buf, pos, end):  # pragma: no cover
    """(field number, wire type, next position); next position -1 when malformed."""
    key, pos = read_varint(buf, pos, end)
    if pos < 0:
        return 0, 0, -1
    return np.int64(key >> np.uint64(3)), np.int64(key & np.uint64(7)), pos


@njit(nogil=True, cache=True)
def read_len(buf, pos, end):  # pragma: no cover
    """(start, end) of a length-delimited value at ``pos``; start -1 when malformed."""
    n, pos = read_varint(buf, pos, end)
    if pos < 0 or n > np.uint64(end - pos):
        return -1, -1
    return pos, pos + np.int64(n)


@njit(nogil=True, cache=True)
def count_numbers(buf, start, end, field, fixed):  # pragma: no cover
    """How many values of repeated number field ``field`` a message body holds (packed or
    not); ``fixed`` is the value width in bytes (4: float/fixed32) or 0 (varints).
    -1 when malformed."""
    count = 0
    pos = start
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if pos < 0:
            return -1
        if number == field and wire == LEN:
            a, b = read_len(buf, pos, end)
            if a < 0:
                return -1
            if fixed:
                if (b - a) % fixed:
                    return -1
                count += (b - a) // fixed
            else:
                for q in range(a, b):
                    if buf[q] < 0x80:
                        count += 1
                if b > a and buf[b - 1] >= 0x80:
                    return -1
            pos = b
        elif number == field and ((fixed == 4 and wire == FIXED32)
                                  or (fixed == 8 and wire == FIXED64)
                                  or (fixed == 0 and wire == VARINT)):
            count += 1
            pos = skip_value(buf, pos, end, wire)
        else:
            pos = skip_value(buf, pos, end, wire)
        if pos < 0:
            return -1
    return count


@njit(nogil=True, cache=True)
def copy_fixed(buf, start, end, field, width, out, at):  # pragma: no cover
    """Copies the raw bytes of the fixed-width values of ``field`` into ``out`` (a uint8
    view of the output) from byte ``at``; returns the byte after the last one written."""
    pos = start
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if number == field and wire == LEN:
            a, b = read_len(buf, pos, end)
            for q in range(a, b):
                out[at] = buf[q]
                at += 1
            pos = b
        elif number == field and ((width == 4 and wire == FIXED32)
                                  or (width == 8 and wire == FIXED64)):
            for q in range(pos, pos + width):
                out[at] = buf[q]
                at += 1
            pos += width
        else:
            pos = skip_value(buf, pos, end, wire)
    return at


@njit(nogil=True, cache=True)
def copy_varints(buf, start, end, field, out, at):  # pragma: no cover
    """Decodes the varint values of ``field`` (packed or not) into ``out`` (int64) from
    index ``at``; int64 and int32 negatives (ten-byte varints) come out negative."""
    pos = start
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if number == field and wire == LEN:
            a, b = read_len(buf, pos, end)
            q = a
            while q < b:
                v, q = read_varint(buf, q, b)
                out[at] = np.int64(v)
                at += 1
            pos = b
        elif number == field and wire == VARINT:
            v, pos = read_varint(buf, pos, end)
            out[at] = np.int64(v)
            at += 1
        else:
            pos = skip_value(buf, pos, end, wire)
    return at


@njit(nogil=True, cache=True)
def find_bytes(buf, start, end, field, which):  # pragma: no cover
    """(start, end) of occurrence number ``which`` (0-based) of length-delimited ``field``
    in a message body, or (-1, -1) when there is none; (-2, -2) when malformed."""
    pos = start
    seen = 0
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if pos < 0:
            return -2, -2
        if number == field and wire == LEN:
            a, b = read_len(buf, pos, end)
            if a < 0:
                return -2, -2
            if seen == which:
                return a, b
            seen += 1
            pos = b
        else:
            pos = skip_value(buf, pos, end, wire)
            if pos < 0:
                return -2, -2
    return -1, -1


@njit(nogil=True, cache=True)
def last_varint(buf, start, end, field, default):  # pragma: no cover
    """The last value of scalar varint ``field`` (protobuf: the last one wins), or
    ``default``. Malformed bodies give ``default`` too (the caller validated them)."""
    pos = start
    value = default
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if pos < 0:
            return default
        if number == field and wire == VARINT:
            v, pos = read_varint(buf, pos, end)
            value = np.int64(v)
        else:
            pos = skip_value(buf, pos, end, wire)
        if pos < 0:
            return default
    return value


@njit(nogil=True, cache=True)
def well_formed(buf, start, end):  # pragma: no cover
    """Whether ``[start, end)`` parses as a run of fields (not whether they make sense)."""
    pos = start
    while pos < end:
        _, wire, pos = read_key(buf, pos, end)
        if pos < 0:
            return False
        pos = skip_value(buf, pos, end, wire)
        if pos < 0:
            return False
    return True


@njit(nogil=True, cache=True)
def last_bytes(buf, start, end, field):  # pragma: no cover
    """(start, end) of the last occurrence of length-delimited ``field`` (protobuf: the
    last one wins for a singular field), (-1, -1) when there is none, (-2, -2) when the
    body is malformed."""
    pos = start
    a, b = -1, -1
    while pos < end:
        number, wire, pos = read_key(buf, pos, end)
        if pos < 0:
            return -2, -2
        if number == field and wire == LEN:
            s, e = read_len(buf, pos, end)
            if s < 0:
                return -2, -2
            a, b = s, e
            pos = e
        else:
            pos = skip_value(buf, pos, end, wire)
            if pos < 0:
                return -2, -2
    return a, b
