"""Tar archives (ustar, GNU, PAX) walked header by header, and webdataset samples made of
their members, compiled (numba, GIL released).

A tar is a run of 512-byte headers, each followed by its member's data padded to 512
bytes; a zero block ends it. Header fields used (POSIX ustar, GNU tar's manual): name
(0-100), size (124-136: octal, or GNU base-256 when the first byte has its top bit set),
checksum (148-156: octal sum of the header's bytes with the checksum field as spaces),
type (156), magic (257: "ustar\\0" POSIX, "ustar " GNU) and, in POSIX headers only, a name
prefix (345-500). Types: regular files ("0", NUL, "7") are members; a GNU "L" entry holds
the next member's long name; a PAX "x" entry holds records ``"<len> path=<name>\\n"`` and
``"<len> size=<n>\\n"`` for the next member; everything else (folders, links, "g", "K") is
skipped.

webdataset: a member's key is its name up to the first dot after the last "/", its
extension the rest; consecutive members with the same key form a sample; a member whose
base name starts with a dot (empty key part) belongs to no sample (as DALI's wds2idx).
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit

BLOCK = 512


@njit(nogil=True, cache=True)
def _octal(buf, a, b):  # pragma: no cover
    """An octal field's value (spaces and NULs around it allowed); -1 if it is not one.
    GNU base-256: a first byte with its top bit set."""
    if buf[a] & 0x80:
        value = np.int64(buf[a] & 0x7F)
        for q in range(a + 1, b):
            value = (value << 8) | np.int64(buf[q])
        return value
    value = np.int64(0)
    seen = False
    q = a
    while q < b and (buf[q] == 32 or buf[q] == 0):
        q += 1
    while q < b and 48 <= buf[q] <= 55:
        value = value * 8 + np.int64(buf[q] - 48)
        seen = True
        q += 1
    while q < b:
        if buf[q] != 32 and buf[q] != 0:
            return -1
        q += 1
    return value if seen else -1


@njit(nogil=True, cache=True)
def _cstr_end(buf, a, b):  # pragma: no cover
    """The end of a NUL-terminated field."""
    q = a
    while q < b and buf[q] != 0:
        q += 1
    return q


@njit(nogil=True, cache=True)
def _pax_value(buf, a, b, key):  # pragma: no cover
    """(start, end) of the value of ``key`` in PAX records ``buf[a:b]`` (the last one
    wins), or (-1, -1); (-2, -2) when the records are malformed."""
    vs, ve = -1, -1
    q = a
    while q < b:
        if buf[q] == 0:  # padding after the records
            break
        length = 0
        r = q
        while r < b and 48 <= buf[r] <= 57:
            length = length * 10 + (buf[r] - 48)
            r += 1
        if r >= b or buf[r] != 32 or length <= 0 or q + length > b:
            return -2, -2
        rec_end = q + length  # the record ends with "\n" at rec_end - 1
        r += 1
        eq = r
        while eq < rec_end and buf[eq] != 61:  # "="
            eq += 1
        if eq - r == len(key):
            same = True
            for k in range(len(key)):
                if buf[r + k] != key[k]:
                    same = False
                    break
            if same:
                vs, ve = eq + 1, rec_end - 1
        q = rec_end
    return vs, ve


@njit(nogil=True, cache=True)
def walk_tar(buf, fill, offsets, sizes, name_starts, name_ends, names):  # pragma: no cover
    """Walks the archive ``buf``. With ``fill`` False only counts: returns (members, name
    bytes, status, position); with ``fill`` True also writes each member's data offset,
    size and name (into ``names``, bounds in ``name_starts``/``name_ends``). Status: 0 the
    archive ended (zero block or end of file), 1 a header's checksum or size field is
    not valid at ``position``, 2 a PAX header there is malformed, 3 the file ends inside
    the header at ``position`` (a truncated archive)."""
    path_key = np.array([112, 97, 116, 104], np.uint8)  # "path"
    size_key = np.array([115, 105, 122, 101], np.uint8)  # "size"
    n = len(buf)
    pos = 0
    count = 0
    used = 0
    long_a, long_b = -1, -1  # a name given by a GNU "L" or PAX "x" entry
    pax_size = -1
    while pos + BLOCK <= n:
        zero = True
        for q in range(pos, pos + BLOCK):
            if buf[q] != 0:
                zero = False
                break
        if zero:
            return count, used, 0, pos
        total = 0
        for q in range(pos, pos + BLOCK):
            total += 32 if pos + 148 <= q < pos + 156 else np.int64(buf[q])
        check = _octal(buf, pos + 148, pos + 156)
        size = _octal(buf, pos + 124, pos + 136)
        if check < 0 or size < 0:
            return count, used, 1, pos
        if check != total:
            signed = 0  # some old tars summed signed bytes
            for q in range(pos, pos + BLOCK):
                b = np.int64(buf[q])
                signed += 32 if pos + 148 <= q < pos + 156 else (b - 256 if b > 127 else b)
            if check != signed:
                return count, used, 1, pos
        kind = buf[pos + 156]
        data = pos + BLOCK
        if kind == 120 or kind == 103:  # "x" / "g": PAX records
            end = min(data + size, n)
            if kind == 120:
                a, b = _pax_value(buf, data, end, path_key)
                if a == -2:
                    return count, used, 2, pos
                if a >= 0:
                    long_a, long_b = a, b
                a, b = _pax_value(buf, data, end, size_key)
                if a >= 0:
                    value = 0
                    for q in range(a, b):
                        value = value * 10 + (buf[q] - 48)
                    pax_size = value
        elif kind == 76:  # "L": GNU long name
            long_a, long_b = data, _cstr_end(buf, data, min(data + size, n))
        elif kind == 48 or kind == 0 or kind == 55:  # a regular file
            if pax_size >= 0:
                size = pax_size
            if long_a >= 0:
                la, lb, pa, pb = long_a, long_b, 0, 0
            else:
                la, lb = pos, _cstr_end(buf, pos, pos + 100)
                pa, pb = 0, 0
                posix = (buf[pos + 257] == 117 and buf[pos + 262] == 0)  # "ustar\0"
                if posix:
                    pa, pb = pos + 345, _cstr_end(buf, pos + 345, pos + 500)
            length = (lb - la) + ((pb - pa) + 1 if pb > pa else 0)
            if fill:
                offsets[count] = data
                sizes[count] = size
                name_starts[count] = used
                q = used
                if pb > pa:
                    for r in range(pa, pb):
                        names[q] = buf[r]
                        q += 1
                    names[q] = 47  # "/"
                    q += 1
                for r in range(la, lb):
                    names[q] = buf[r]
                    q += 1
                name_ends[count] = q
            used += length
            count += 1
            long_a, long_b, pax_size = -1, -1, -1
        else:  # folders, links, GNU specials: no member (a pending long name is dropped)
            if kind != 75:  # "K" (long link name) belongs to the entry after it
                long_a, long_b, pax_size = -1, -1, -1
        pos = data + (size + BLOCK - 1) // BLOCK * BLOCK
    for q in range(pos, n):  # bytes after the last member that are no whole header
        if buf[q] != 0:
            return count, used, 3, pos
    return count, used, 0, pos


@njit(nogil=True, cache=True)
def split_names(names, starts, ends, key_ends, ext_starts):  # pragma: no cover
    """Each member's key end and extension start in ``names``: the first dot after the
    last "/" (no dot: an empty extension at the end)."""
    for m in range(len(starts)):
        a, b = starts[m], ends[m]
        slash = a - 1
        for q in range(b - 1, a - 1, -1):
            if names[q] == 47:
                slash = q
                break
        dot = b
        for q in range(slash + 1, b):
            if names[q] == 46:
                dot = q
                break
        key_ends[m] = dot
        ext_starts[m] = dot + 1 if dot < b else b


@njit(nogil=True, cache=True)
def group_samples(names, starts, key_ends, sample):  # pragma: no cover
    """The sample of each member (-1: a hidden one); returns the number of samples."""
    count = 0
    prev_a, prev_b = -1, -1
    for m in range(len(starts)):
        a, b = starts[m], key_ends[m]
        if b == a or names[b - 1] == 47:  # empty base name: ".name" or "dir/.name"
            sample[m] = -1
            continue
        same = prev_a >= 0 and (b - a) == (prev_b - prev_a)
        if same:
            for q in range(b - a):
                if names[a + q] != names[prev_a + q]:
                    same = False
                    break
        if not same:
            count += 1
        sample[m] = count - 1
        prev_a, prev_b = a, b
    return count


@njit(nogil=True, cache=True)
def _lower(c):  # pragma: no cover
    return c + 32 if 65 <= c <= 90 else c


@njit(nogil=True, cache=True)
def match_outputs(names, ext_starts, ends, sample, wanted, bounds, owner, case_sensitive,
                  component):  # pragma: no cover
    """``component[s, o]``: the first member of sample ``s`` whose extension is one of
    output ``o``'s (``wanted[bounds[j]:bounds[j + 1]]`` for each j with ``owner[j] ==
    o``), or -1. Returns how many samples had a second match for some output."""
    component[:] = -1
    doubles = 0
    counted = -1
    for m in range(len(ext_starts)):
        s = sample[m]
        if s < 0:
            continue
        a, b = ext_starts[m], ends[m]
        for j in range(len(owner)):
            o = owner[j]
            wa, wb = bounds[j], bounds[j + 1]
            if wb - wa != b - a:
                continue
            same = True
            for q in range(b - a):
                x, y = names[a + q], wanted[wa + q]
                if x != y and (case_sensitive or _lower(x) != _lower(y)):
                    same = False
                    break
            if not same:
                continue
            if component[s, o] < 0:
                component[s, o] = m
            elif component[s, o] != m and counted != s:
                doubles += 1
                counted = s
    return doubles
