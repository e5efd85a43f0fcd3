"""Sample indexes: which files a dataset has, in which order, with which labels.

An index is a ``PathTable`` (the paths as the user's dataset names them, plus the root
they are relative to) and an int32 label per sample. Three ways to build one, with DALI
2.4's measured rules:

* ``index_from_file_root``: ``root/<class>/<file>``, one level of sub-folders (files
  directly in ``root`` and deeper folders are ignored). Sub-folders are sorted by name
  (byte order, hidden ones included, symlinks followed) and a file's label is its folder's
  index in that list, counted after ``dir_filters`` and before dropping folders with no
  matching file. Files are sorted by name within their folder, folder by folder.
* ``index_from_file_list``: lines ``<path> <label>`` (see ``file_list.py``), paths
  relative to ``file_root``, or to the list's own folder when there is no ``file_root``.
* ``index_from_files``: the given paths in the given order; labels given or 0..n-1.

Filters are POSIX ``fnmatch`` patterns matched against the bare file (or folder) name:
``*`` also matches a leading dot; matching ignores ASCII case unless ``case_sensitive``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stoker.errors import StokerError
from stoker.readers.file_list import FileListError, parse_file_list

# DALI 2.4's default file_filters: image and audio formats.
DEFAULT_FILE_FILTERS = ("*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm",
                        "*.ppm", "*.pgm", "*.pbm", "*.jp2", "*.webp", "*.flac", "*.ogg",
                        "*.wav")


class DatasetError(StokerError, ValueError, RuntimeError):
    """The dataset description is unusable: nothing found, a malformed list, bad labels.

    Raised by build(), where DALI raises a RuntimeError for the same problems, so
    ``except RuntimeError`` catches it as there (``except ValueError`` too, as before)."""


class PathTable:
    """``n`` paths, stored as Python strings or, for big lists, as offsets into one bytes
    object (a million paths then cost two int64 arrays instead of a million objects)."""

    def __init__(self, root: str | None, names: Sequence[str] | None = None,
                 blob: bytes | None = None, starts: np.ndarray | None = None,
                 ends: np.ndarray | None = None):
        self.root = root or None
        self._names = list(names) if names is not None else None
        self._blob, self._starts, self._ends = blob, starts, ends
        self._absolute: bool | None = None  # whether a name is an absolute path

    def __len__(self) -> int:
        return len(self._names) if self._names is not None else len(self._starts)

    def name(self, i: int) -> str:
        """The path as the dataset gives it (DALI's source_info)."""
        if self._names is not None:
            return self._names[i]
        return self._blob[self._starts[i]:self._ends[i]].decode("utf-8", "surrogateescape")

    def names(self, ids: list[int]) -> list[str]:
        """``[name(i) for i in ids]`` without a Python call per path (a batch's names are
        the producer thread's serial work)."""
        if self._names is not None:
            return list(map(self._names.__getitem__, ids))
        blob = self._blob
        return [blob[a:b].decode("utf-8", "surrogateescape")
                for a, b in zip(self._starts[ids].tolist(), self._ends[ids].tolist(),
                                strict=True)]

    def _any_absolute(self) -> bool:
        """Whether any name is an absolute path (looked at once)."""
        if self._absolute is None:
            if self._names is not None:
                self._absolute = any(n.startswith("/") for n in self._names)
            else:
                first = np.frombuffer(self._blob, np.uint8)[self._starts[self._ends >
                                                                        self._starts]]
                self._absolute = bool((first == ord("/")).any())
        return self._absolute

    def full(self, i: int) -> str:
        """The path to open: joined to the root unless absolute."""
        return self.joined([self.name(i)])[0]

    def joined(self, names: list[str]) -> list[str]:
        """``names`` (from ``name()``) as paths to open."""
        if not self.root:
            return names
        root = self.root
        if os.sep == "/" and os.altsep is None:  # POSIX: os.path.join's result, 5x faster
            prefix = root if root.endswith("/") else root + "/"
            if not self._any_absolute():
                return list(map(prefix.__add__, names))
            return [name if name.startswith("/") else prefix + name for name in names]
        join = os.path.join
        return [join(root, name) for name in names]


@dataclass(frozen=True)
class SampleIndex:
    paths: PathTable
    labels: np.ndarray  # int32, one per path

    def __len__(self) -> int:
        return len(self.labels)


# -- glob patterns -----------------------------------------------------------------------------


def _glob_to_regex(pattern: str) -> str:
    """POSIX fnmatch (no FNM_PATHNAME, no FNM_PERIOD) as a regular expression: ``*``,
    ``?``, bracket expressions with ``!`` or ``^`` negation and ranges, and backslash
    escapes (also inside brackets). A ``[`` without its ``]`` is a literal ``[``; a
    trailing lone backslash makes the pattern match nothing, as in glibc.

    Every piece between two stars matches exactly one character per token, so taking its
    first occurrence is never wrong (a later one leaves less room for the rest). Those
    pieces become atomic groups, ``(?>.*?piece)``: without them, ``*a*a*a*a*a*a*a*a*a*b``
    against thirty a's backtracks for seconds, with them it is linear."""
    pieces: list[str | None] = []  # regex of one character, or None for a star
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not pieces or pieces[-1] is not None:
                pieces.append(None)
        elif c == "?":
            pieces.append(".")
        elif c == "\\":
            if i == n:
                return "(?!)"
            pieces.append(re.escape(pattern[i]))
            i += 1
        elif c == "[" and (bracket := _bracket(pattern, i)) is not None:
            regex, i = bracket
            pieces.append(regex)
        else:
            pieces.append(re.escape(c))
    # Split at the stars: head * middle * ... * tail.
    runs: list[str] = [""]
    for piece in pieces:
        if piece is None:
            runs.append("")
        else:
            runs[-1] += piece
    if len(runs) == 1:
        return runs[0]
    head, *middle, tail = runs
    return head + "".join(f"(?>.*?{run})" for run in middle) + ".*" + tail


def _bracket(pattern: str, i: int) -> tuple[str, int] | None:
    """The bracket expression starting after the ``[`` at ``i - 1``: (regex, index after
    its ``]``), or None when it is not closed."""
    n = len(pattern)
    negate = i < n and pattern[i] in "!^"
    i += negate
    members: list[str] = []
    first = True
    while i < n and (pattern[i] != "]" or first):
        first = False
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            i += 1
            c = pattern[i]
        i += 1
        if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
            hi = pattern[i + 1]
            i += 2
            if hi == "\\" and i < n:
                hi = pattern[i]
                i += 1
            if c <= hi:  # a reversed range is empty, as in glibc
                members.append(f"{re.escape(c)}-{re.escape(hi)}")
        else:
            members.append(re.escape(c))
    if i >= n:
        return None
    if not members:
        return ("." if negate else "(?!)"), i + 1
    return f"[{'^' if negate else ''}{''.join(members)}]", i + 1


def glob_matcher(patterns: Sequence[str], case_sensitive: bool):
    """A function name -> bool: does ``name`` match any of ``patterns``?"""
    flags = re.DOTALL | (0 if case_sensitive else re.IGNORECASE | re.ASCII)
    regex = re.compile("|".join(f"(?:{_glob_to_regex(p)})" for p in patterns) or "(?!)", flags)
    return lambda name: regex.fullmatch(name) is not None


# -- builders ----------------------------------------------------------------------------------


def _scandir_sorted(path: str, who: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        raise FileNotFoundError(f"{who}: folder {path!r} does not exist") from None
    except NotADirectoryError:
        raise NotADirectoryError(f"{who}: {path!r} is not a folder") from None
    except PermissionError as e:
        raise PermissionError(f"{who}: cannot list folder {path!r}: {e.strerror}") from None


def _is_dir(entry: os.DirEntry, who: str) -> bool:
    try:
        return entry.is_dir()
    except OSError as e:
        raise OSError(f"{who}: cannot access {entry.path!r}: {e.strerror}") from None


def index_from_file_root(root: str, file_filters: Sequence[str], dir_filters: Sequence[str] |
                         None, case_sensitive: bool, who: str) -> SampleIndex:
    if not os.path.exists(root):
        raise FileNotFoundError(f"{who}: file_root {root!r} does not exist")
    if not os.path.isdir(root):
        raise NotADirectoryError(f"{who}: file_root {root!r} is not a folder")
    folders = []
    for entry in _scandir_sorted(root, who):
        if entry.is_symlink() and not os.path.exists(entry.path):
            # A dangling link may be a missing class folder: skipping it would silently
            # shift every later label, so it is an error (DALI refuses it too).
            raise FileNotFoundError(f"{who}: {entry.path!r} in file_root is a broken "
                                    "symbolic link")
        if _is_dir(entry, who):
            folders.append(entry.name)
    listed = len(folders)
    if dir_filters:
        dir_match = glob_matcher(dir_filters, case_sensitive)
        folders = [d for d in folders if dir_match(d)]
    file_match = glob_matcher(file_filters, case_sensitive)
    names: list[str] = []
    labels: list[np.ndarray] = []
    for label, folder in enumerate(folders):
        found = [e.name for e in _scandir_sorted(os.path.join(root, folder), who)
                 if file_match(e.name) and not _is_dir(e, who)]
        names.extend(f"{folder}/{name}" for name in found)
        labels.append(np.full(len(found), label, np.int32))
    if not names:
        where = f"{listed} sub-folder(s)" if listed else "no sub-folders"
        if dir_filters:
            where += f", {len(folders)} of them matching dir_filters={list(dir_filters)}"
        raise DatasetError(
            f"{who}: no files found under file_root {root!r} ({where}); the reader takes "
            f"files one level down, <file_root>/<class>/<file>, whose names match "
            f"file_filters={list(file_filters)}")
    return SampleIndex(PathTable(root, names), np.concatenate(labels))


def index_from_file_list(file_list: str, root: str | None, who: str) -> SampleIndex:
    try:
        with open(file_list, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{who}: file_list {file_list!r} does not exist") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{who}: file_list {file_list!r} is a folder, not a "
                                "file") from None
    except OSError as e:
        raise OSError(f"{who}: cannot read file_list {file_list!r}: {e.strerror}") from None
    try:
        starts, ends, labels = parse_file_list(data)
    except FileListError as e:
        raise DatasetError(f"{who}: file_list {file_list!r}, {e}") from None
    if len(labels) == 0:
        raise DatasetError(f"{who}: file_list {file_list!r} has no entries")
    if root is None:
        root = os.path.dirname(file_list)
    return SampleIndex(PathTable(root, blob=data, starts=starts, ends=ends), labels)


def index_from_files(files: Sequence[str], labels: Sequence[int] | None, root: str | None,
                     who: str) -> SampleIndex:
    if not files:
        raise DatasetError(f"{who}: argument 'files' is an empty list")
    if labels is None:
        values = np.arange(len(files), dtype=np.int32)
    else:
        if len(labels) != len(files):
            raise DatasetError(f"{who}: argument 'labels' has {len(labels)} values for "
                               f"{len(files)} files; give one label per file")
        values = np.asarray(labels, dtype=np.int64)
        if values.size and (values.min() < -(1 << 31) or values.max() >= 1 << 31):
            raise DatasetError(f"{who}: argument 'labels' must fit in int32")
        values = values.astype(np.int32)
    return SampleIndex(PathTable(root, files), values)
