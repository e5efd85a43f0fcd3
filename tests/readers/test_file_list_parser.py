"""The file_list parser against the rules measured on DALI 2.4 (each case below was run
through ``fn.readers.file(file_list=...)`` there; the outcome is in the comment) and
against a plain-Python reference on random lists."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker.readers.file_list import FileListError, parse_file_list


def parse(data: bytes) -> list[tuple[bytes, int]]:
    starts, ends, labels = parse_file_list(data)
    assert labels.dtype == np.int32
    return [(data[a:b], int(v)) for a, b, v in zip(starts, ends, labels, strict=True)]


@pytest.mark.parametrize("data,want", [
    (b"a.jpg 0\nb.jpg 1\n", [(b"a.jpg", 0), (b"b.jpg", 1)]),
    (b"a.jpg 0\nb.jpg 1", [(b"a.jpg", 0), (b"b.jpg", 1)]),  # no final newline: fine
    (b"a.jpg 0\n\nb.jpg 1\n\n", [(b"a.jpg", 0), (b"b.jpg", 1)]),  # blank lines skipped
    (b"a.jpg 0\n  \t \nb.jpg 1\n", [(b"a.jpg", 0), (b"b.jpg", 1)]),  # so are blank-ish ones
    (b"a.jpg\t5\nb.jpg  7\n", [(b"a.jpg", 5), (b"b.jpg", 7)]),  # tabs, several spaces
    (b"a.jpg 0   \nb.jpg 1\n", [(b"a.jpg", 0), (b"b.jpg", 1)]),  # trailing spaces dropped
    (b"a.jpg 0\r\nb.jpg 1\r\n", [(b"a.jpg", 0), (b"b.jpg", 1)]),  # CRLF
    (b"  a.jpg 0\n", [(b"  a.jpg", 0)]),  # leading spaces stay in the path (DALI then
                                          # failed to open '<root>/  a.jpg')
    (b"c d.jpg 3\n", [(b"c d.jpg", 3)]),  # spaces inside the path
    (b"a.jpg 0 1\n", [(b"a.jpg 0", 1)]),  # the LAST field is the label
    (b"a.jpg 007\n", [(b"a.jpg", 7)]),  # leading zeros
    (b"/abs/a.jpg 4\n", [(b"/abs/a.jpg", 4)]),
    (b"a 2147483647\n", [(b"a", 2147483647)]),
    (b"", []),  # no entries: the reader then reports an empty list (DALI: "No files found")
    (b"\n\n", []),
])
def test_lines_parse_as_dali_reads_them(data, want):
    assert parse(data) == want


@pytest.mark.parametrize("data,line", [
    (b"# comment\na.jpg 0\n", 1),  # DALI: "Incorrect format of the list file ...:1"
    (b"a.jpg\nb.jpg 1\n", 1),  # no label
    (b"a.jpg x\n", 1),
    (b"a.jpg 1.5\n", 1),
    (b"a.jpg -3\n", 1),  # DALI refuses signs in file lists (labels=[-5] is fine)
    (b"a.jpg +4\n", 1),
    (b"a.jpg 3x\n", 1),
    (b" 0\n", 1),  # no path
    (b"a.jpg 0\n\nb.jpg x\n", 3),  # line numbers count blank lines (DALI said :3)
    (b"a.jpg 0\n\n  \t \nb.jpg x\n", 4),  # DALI said :4
])
def test_malformed_line_is_named_by_its_number(data, line):
    with pytest.raises(FileListError, match=f"^line {line}: expected '<path> <label>'") as e:
        parse_file_list(data)
    assert e.value.line == line


def test_label_beyond_int32_is_an_error():
    # DALI 2.4 wraps it silently (99999999999 came back as 1215752191); stoker refuses.
    with pytest.raises(FileListError, match="line 2: the label does not fit in int32"):
        parse_file_list(b"a 1\nb 99999999999\n")
    with pytest.raises(FileListError, match="does not fit in int32"):
        parse_file_list(b"a 2147483648\n")
    assert parse(b"a " + b"0" * 30 + b"12\n") == [(b"a", 12)]


def reference(data: bytes) -> list[tuple[bytes, int]]:
    out = []
    for line in data.split(b"\n"):
        line = line.rstrip(b" \t\r\v\f")
        if not line:
            continue
        path, _, label = line.rstrip().rpartition(b" ")
        out.append((path.rstrip(b" "), int(label)))
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text("ab/._- 0123456789", min_size=1, max_size=12)
                          .filter(lambda s: s.strip(" ") == s),
                          st.integers(0, 2**31 - 1), st.sampled_from([" ", "  ", " \r"]),
                          st.booleans()), max_size=30))
def test_random_lists_match_a_plain_python_reference(entries):
    text = "".join(f"{path} {label}{end}\n" + ("\n" if blank else "")
                   for path, label, end, blank in entries)
    data = text.encode()
    assert parse(data) == reference(data)
