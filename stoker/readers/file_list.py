"""Parses a DALI ``file_list``: one ``<path> <label>`` per line, vectorized.

The rules, measured on DALI 2.4: lines end at ``\\n``; trailing whitespace (``\\r`` of
CRLF files included) is dropped; lines that are then empty are skipped; the label is the
last whitespace-separated field and must be a non-negative decimal integer; the path is
everything before the whitespace that precedes the label, so it may contain spaces and
keeps leading whitespace. Anything else, a ``#`` comment included, is an error naming the
line (line numbers count every line, blank ones too).

The parser never builds a Python object per line: it works on the positions of the
whitespace bytes with numpy and returns the paths as offsets into the file's bytes, which
is what makes a million-line list take about a tenth of a second.
"""

from __future__ import annotations

import numpy as np

_WHITESPACE = np.zeros(256, bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_INT32_MAX = (1 << 31) - 1
# Wider labels are parsed one by one in Python (they are overflow errors unless they
# start with many zeros).
_MAX_VECTOR_DIGITS = 18


class FileListError(ValueError):
    """A line of a file list is not ``<path> <label>``; ``line`` is 1-based."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def parse_file_list(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(path_starts, path_ends, labels)`` of each entry: the path of entry ``i`` is
    ``data[path_starts[i]:path_ends[i]]``; labels are int32."""
    n = len(data)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    buf = np.frombuffer(data, np.uint8)
    candidates = np.flatnonzero(buf <= 32)  # every whitespace byte is <= 32
    # The whitespace and newline positions, after a sentinel at -2 that keeps every index
    # below in range and belongs to no line.
    special = np.concatenate([[-2], candidates[_WHITESPACE[buf[candidates]]]])
    is_newline = np.concatenate([[True], buf[special[1:]] == 10])
    end_idx = np.flatnonzero(is_newline[1:]) + 1  # index in `special` of each line's end
    ends = special[end_idx]
    if data[-1:] != b"\n":  # a last line without a newline
        end_idx = np.append(end_idx, len(special))
        ends = np.append(ends, n)
    if len(ends) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    starts = np.concatenate([[0], ends[:-1] + 1])

    # Runs of whitespace: a newline or a gap starts a new one.
    begins = np.empty(len(special), bool)
    begins[0] = True
    begins[1:] = (special[1:] != special[:-1] + 1) | is_newline[1:] | is_newline[:-1]
    run_first = np.maximum.accumulate(np.where(begins, np.arange(len(special)), 0))

    # Drop trailing whitespace: the content ends where the line's last run begins.
    last = end_idx - 1
    trailing = ~is_newline[last] & (special[last] == ends - 1)
    content_end = np.where(trailing, special[run_first[last]], ends)
    blank = content_end <= starts
    # The separator is the last whitespace run before the content's end.
    sep = np.where(trailing, run_first[last] - 1, last)
    has_sep = ~is_newline[sep]
    label_start = special[sep] + 1
    path_end = special[run_first[sep]]
    ok = ~blank & has_sep & (path_end > starts)

    if blank.any():
        lines = np.flatnonzero(~blank)
        ok, starts, path_end, content_end, label_start = (
            a[lines] for a in (ok, starts, path_end, content_end, label_start))
    else:
        lines = None
    label_len = np.where(ok, content_end - label_start, 1)
    labels, digits_ok = _parse_labels(buf, content_end, label_len)
    good = ok & digits_ok & (labels <= _INT32_MAX)
    if not good.all():
        j = int(np.argmin(good))
        bad = j if lines is None else int(lines[j])
        end = data.find(b"\n", int(starts[j]))
        raise _line_error(data, int(starts[j]), n if end < 0 else end, bad,
                          overflow=bool(ok[j] and digits_ok[j]))
    return starts, path_end, labels.astype(np.int32)


def _parse_labels(buf: np.ndarray, end: np.ndarray, length: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Decimal values of the fields ``buf[end-length:end]`` and whether each is all
    digits: one numpy pass per digit column, from the last digit."""
    value = np.zeros(len(end), np.int64)
    valid = length > 0
    if len(end) == 0:
        return value, valid
    width = min(int(length.max()), _MAX_VECTOR_DIGITS)
    last = end - 1
    for col in range(width):
        # Positions left of the field are masked; they stay >= -len(buf), a valid index.
        digit = buf[last - col] - np.uint8(48)  # bytes other than digits wrap above 9
        inside = col < length
        valid &= (digit <= 9) | ~inside
        value += np.where(inside, digit, 0).astype(np.int64) * (10 ** col)
    for i in np.flatnonzero(length > _MAX_VECTOR_DIGITS):
        text = buf[end[i] - length[i]:end[i]].tobytes()
        valid[i] = text.isdigit()
        value[i] = min(int(text), _INT32_MAX + 1) if valid[i] else 0
    return value, valid


def _line_error(data: bytes, start: int, end: int, line: int, overflow: bool) -> FileListError:
    text = data[start:end].decode("utf-8", "replace").rstrip()
    shown = text if len(text) <= 200 else text[:200] + "..."
    if overflow:
        rule = f"the label does not fit in int32 (at most {_INT32_MAX})"
    else:
        rule = ("expected '<path> <label>' with a non-negative integer label after the last "
                "whitespace (comments are not allowed)")
    return FileListError(f"line {line + 1}: {rule}; got {shown!r}", line + 1)
