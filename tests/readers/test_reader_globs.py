"""file_filters / dir_filters patterns against the C library's fnmatch(3), which is what
POSIX glob matching means (DALI matches with it; flags: none, or FNM_CASEFOLD when the
filter is not case-sensitive).

Not compared: a ``[`` without its ``]``. stoker takes it as a literal ``[``; glibc does
too except when the unclosed expression ends in a range start such as ``[a-``, where it
matches nothing at all (``fnmatch("[a-", "[a-")`` fails)."""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stoker.readers.index import _bracket, glob_matcher

FNM_CASEFOLD = 1 << 4  # glibc
_libc_name = ctypes.util.find_library("c")
libc = ctypes.CDLL(_libc_name) if _libc_name else None


def c_fnmatch(pattern: str, name: str, casefold: bool) -> bool:
    return libc.fnmatch(pattern.encode(), name.encode(), FNM_CASEFOLD if casefold else 0) == 0


@pytest.mark.parametrize("pattern,name,want", [
    ("*.jpg", "a.jpg", True), ("*.jpg", ".jpg", True), ("*.jpg", "a.JPG", True),
    ("?.jpg", "ab.jpg", False), ("[ab]*", "B2", True), ("[!ab]*", "c", True),
    ("[^ab]*", "a", False), ("[]]x", "]x", True), ("a\\*", "a*", True), ("a\\*", "ab", False),
    ("[a-c]", "b", True), ("[", "[", True), ("*/*.jpg", "a.jpg", False),
    ("[\\]]", "]", True), ("[b-a]", "a", False), ("[!b-a]", "a", True), ("a\\", "a\\", False),
])
def test_examples(pattern, name, want):
    assert glob_matcher([pattern], case_sensitive=False)(name) is want


def has_unclosed_bracket(pattern: str) -> bool:
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "[":
            bracket = _bracket(pattern, i + 1)
            if bracket is None:
                return True
            i = bracket[1]
        else:
            i += 1
    return False


@pytest.mark.skipif(libc is None, reason="no C library to compare with")
@settings(max_examples=400, deadline=None)
@given(st.text("ab*?[]!^-\\.A", min_size=1, max_size=8), st.text("abAB.-]^[*\\", max_size=6),
       st.booleans())
def test_matches_like_c_fnmatch(pattern, name, case_sensitive):
    assume(not has_unclosed_bracket(pattern))
    want = c_fnmatch(pattern, name, casefold=not case_sensitive)
    assert glob_matcher([pattern], case_sensitive)(name) is want, (pattern, name)
