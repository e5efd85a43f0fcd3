"""A video reader's dataset: its entries (file, label, frame range) and its samples.

Entries come from ``filenames`` (+ ``labels``), ``file_root`` (class folders, label =
folder index, as readers.file) or ``file_list`` (lines ``file label [start [end]]``). Each
file is indexed (``video_index``, cached) on a few threads; a file that cannot be opened
or has no frames is left out with a warning, as DALI 2.4 does. The samples are then the
windows of every entry (``video_windows``), held as two int64 arrays (entry, start) so
that a million clips cost 16 MB.
"""

from __future__ import annotations

import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from stoker.readers.index import DatasetError, index_from_file_root
from stoker.readers.video_index import VideoError, VideoIndex, index_file
from stoker.readers.video_windows import (
    Entry,
    legacy_starts,
    pad_frames,
    resolve_range,
    uniform_frames,
    window_starts,
)

# What file_root takes: every file (DALI's video readers filter nothing).
ALL_FILES = ("*",)


def entries_from_args(a: dict, who: str) -> tuple[list[Entry], bool]:
    """The entries and whether the reader has a label output."""
    if a.get("file_list"):
        return _file_list_entries(a, who), True
    if a.get("file_root"):
        index = index_from_file_root(a["file_root"], ALL_FILES, None, False, who)
        return [Entry(index.paths.full(i), int(index.labels[i])) for i in
                range(len(index))], True
    files = list(a.get("filenames") or [])
    labels = a.get("labels")
    if labels is not None and len(labels) == 0 and not a.get("_legacy"):
        raise DatasetError(f"{who}: argument 'labels' is empty; give one label per file "
                           "(DALI 2.4 refuses it too)")
    if labels is not None and len(labels) and len(labels) != len(files):
        raise DatasetError(f"{who}: argument 'labels' has {len(labels)} values for "
                           f"{len(files)} files; give one label per file")
    values = list(labels) if labels else list(range(len(files)))
    return [Entry(f, int(v)) for f, v in zip(files, values, strict=True)], labels is not None


def _file_list_entries(a: dict, who: str) -> list[Entry]:
    path = a["file_list"]
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DatasetError(f"{who}: cannot read file_list {path!r}: {e.strerror}") from None
    root = os.path.dirname(path)
    out = []
    for number, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 2 or len(parts) > 4:
            raise DatasetError(f"{who}: file_list {path!r} line {number}: expected 'file "
                               f"label [start [end]]', got {line!r}")
        name = parts[0] if os.path.isabs(parts[0]) else os.path.join(root, parts[0])
        try:
            label = int(parts[1])
            nums = [float(p) for p in parts[2:]]
        except ValueError:
            raise DatasetError(f"{who}: file_list {path!r} line {number}: label and frame "
                               f"range must be numbers, got {line!r}") from None
        out.append(_ranged(name, label, nums, a, who))
    if not out:
        raise DatasetError(f"{who}: file_list {path!r} has no entries")
    return out


@dataclass(frozen=True)
class RangedEntry(Entry):
    """A file_list entry whose range is resolved against the file's frames later."""

    raw: tuple[float, ...] = ()
    fmt: str = "frames"
    rounding: str = "start_down_end_up"
    include_end: bool = True


def _ranged(name: str, label: int, nums: list[float], a: dict, who: str) -> Entry:
    if a.get("_legacy"):
        fmt = "frames" if a.get("file_list_frame_num") else "timestamps"
        rounding = ("start_down_end_up" if a.get("file_list_include_preceding_frame")
                    else "start_up_end_down")
        include = True
    else:
        fmt, rounding = a["file_list_format"], a["file_list_rounding"]
        include = a["file_list_include_end"]
    if fmt == "timestamps" and any(v < 0 for v in nums):
        raise DatasetError(f"{who}: file_list entry {name!r}: negative timestamps "
                           f"{nums} (give seconds from the video's start)")
    return RangedEntry(name, label, raw=tuple(nums), fmt=fmt, rounding=rounding,
                       include_end=include)


def entry_range(entry: Entry, index: VideoIndex) -> tuple[int, int]:
    """[start, end) frames of an entry in its file."""
    n = index.n_frames
    if not isinstance(entry, RangedEntry) or not entry.raw:
        return resolve_range(entry, n)
    raw = entry.raw
    start_up = entry.rounding in ("start_up_end_down", "all_up")
    end_up = entry.rounding in ("start_down_end_up", "all_up")
    if entry.fmt == "frames":
        start = math.ceil(raw[0]) if start_up else math.floor(raw[0])
        if len(raw) < 2:
            return resolve_range(Entry(entry.path, entry.label, start, 0), n)
        end = math.ceil(raw[1]) if end_up else math.floor(raw[1])
        return resolve_range(Entry(entry.path, entry.label, start, end), n)
    # Seconds: as DALI 2.4 measurably does, a time becomes a timestamp (floor); a start
    # rounded up is the first frame shown at or after it, rounded down the last one at or
    # before it; an end rounded up stops before the first frame at or after it, rounded
    # down after the last one at or before it.
    pts = index.pts
    tb = float(index.time_base)

    def at(t: float) -> int:
        return int(pts[0] + math.floor(t / tb + 1e-9))

    def first_at_or_after(t: float) -> int:
        return int(np.searchsorted(pts, at(t), side="left"))

    def last_at_or_before(t: float) -> int:
        return max(0, int(np.searchsorted(pts, at(t), side="right")) - 1)

    start = first_at_or_after(raw[0]) if start_up else last_at_or_before(raw[0])
    if len(raw) < 2:
        end = n
    else:
        end = first_at_or_after(raw[1]) if end_up else last_at_or_before(raw[1]) + 1
    return start, min(end, n)


class VideoDataset:
    """Entries with their indexes, and the sample table (entry, first frame)."""

    def __init__(self, entries: list[Entry], args: dict, who: str, threads: int,
                 legacy: bool = False):
        self.who = who
        self.args = args
        self.legacy = legacy
        self.entries: list[Entry] = []
        self.indexes: list[VideoIndex] = []
        self.ranges: list[tuple[int, int]] = []
        with ThreadPoolExecutor(max(1, min(threads, 8))) as pool:
            found = list(pool.map(_try_index, [e.path for e in entries]))
        for entry, got in zip(entries, found, strict=True):
            if isinstance(got, VideoError):
                warnings.warn(f"{who}: skipping {got}", RuntimeWarning, stacklevel=2)
                continue
            lo, hi = entry_range(entry, got)
            if hi <= lo:
                warnings.warn(f"{who}: skipping {entry.path!r}: its frame range "
                              f"[{lo}, {hi}) is empty", RuntimeWarning, stacklevel=2)
                continue
            self.entries.append(entry)
            self.indexes.append(got)
            self.ranges.append((lo, hi))
        self._build_samples()

    def _build_samples(self) -> None:
        a = self.args
        length, stride, step = a["sequence_length"], a["stride"], a["step"]
        ent: list[np.ndarray] = []
        starts: list[np.ndarray] = []
        for e, (lo, hi) in enumerate(self.ranges):
            if self.legacy:
                s = legacy_starts(lo, hi, length, stride, step, a["pad_sequences"])
            elif a.get("uniform_sample"):
                s = [lo]
            else:
                s = window_starts(lo, hi, length, stride, step, a["pad_mode"] != "none")
            ent.append(np.full(len(s), e, np.int64))
            starts.append(np.asarray(s, np.int64))
        self.sample_entry = np.concatenate(ent) if ent else np.zeros(0, np.int64)
        self.sample_start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        if len(self.sample_entry) == 0:
            raise DatasetError(
                f"{self.who}: no samples: {len(self.entries)} usable file(s) hold no window "
                f"of sequence_length={length} with stride={stride} (pad_mode='none' or "
                "pad_sequences=False needs that many frames)")

    def __len__(self) -> int:
        return len(self.sample_entry)

    def frames(self, sample: int) -> tuple[int, np.ndarray]:
        """(entry, frame numbers) of a sample; -1 marks constant padding."""
        e = int(self.sample_entry[sample])
        lo, hi = self.ranges[e]
        a = self.args
        length = a["sequence_length"]
        if not self.legacy and a.get("uniform_sample"):
            return e, uniform_frames(lo, hi, length)
        s = int(self.sample_start[sample])
        frames = s + a["stride"] * np.arange(length, dtype=np.int64)
        mode = "constant" if self.legacy else a["pad_mode"]
        if mode == "none":
            return e, frames
        return e, pad_frames(frames, lo, hi, mode)


def _try_index(path: str) -> VideoIndex | VideoError:
    try:
        return index_file(path)
    except VideoError as e:
        return e
