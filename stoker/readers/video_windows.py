"""Which frames make each sample of DALI's video readers (measured on DALI 2.4).

A reader's dataset is a list of *entries* (a file, a label and a frame range); each entry
is cut into windows of ``sequence_length`` frames ``stride`` apart whose starts are
``step`` apart. The two readers cut differently:

* ``experimental.readers.video``: a full window needs ``stride * L`` frames (``s + stride*L
  <= end``); ``step <= 0`` means ``stride * L``; with ``pad_mode`` other than ``"none"``
  one more window starts at the next start still inside the range, its frames past the
  end padded: ``constant`` (frame -1, filled), ``edge`` (the last frame), ``reflect_1001``
  / ``symmetric`` (the edge repeated: 2N-1-k) and ``reflect_101`` / ``reflect`` (2N-2-k).
  ``uniform_sample``: one window per entry, ``floor(x + 0.5)`` of ``linspace(start,
  end - 1, L)``.
* ``readers.video`` (legacy): a full window needs ``1 + (L-1) * stride`` frames; with
  ``pad_sequences`` every remaining start becomes a window, its missing frames -1.

The frame count is the index's (packets found), as the new reader counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PAD_MODES = {"none": "none", "constant": "constant", "edge": "edge", "repeat": "edge",
             "reflect_1001": "reflect_1001", "symmetric": "reflect_1001",
             "reflect_101": "reflect_101", "reflect": "reflect_101"}


@dataclass(frozen=True)
class Entry:
    """One file of a reader's dataset and the frame range [start, end) it contributes."""

    path: str
    label: int
    start: int = 0
    end: int | None = None  # None: to the last frame


def pad_frames(frames: np.ndarray, lo: int, hi: int, mode: str) -> np.ndarray:
    """Frame numbers outside [lo, hi) replaced per ``mode`` (-1 for ``constant``)."""
    frames = np.asarray(frames, np.int64)
    out = frames.copy()
    past = frames >= hi
    if not past.any():
        return out
    mode = PAD_MODES[mode]
    if mode == "constant":
        out[past] = -1
    elif mode == "edge":
        out[past] = hi - 1
    else:
        n = hi - lo
        period = 2 * n if mode == "reflect_1001" else max(2 * n - 2, 1)
        rel = (frames[past] - lo) % period
        if mode == "reflect_1001":
            rel = np.where(rel >= n, period - 1 - rel, rel)
        else:
            rel = np.where(rel >= n, period - rel, rel)
        out[past] = lo + rel
    return out


def window_starts(start: int, end: int, length: int, stride: int, step: int,
                  pad: bool) -> list[int]:
    """Starts of the new reader's windows in [start, end)."""
    span = stride * length
    step = span if step <= 0 else step
    starts = list(range(start, end - span + 1, step)) if end - start >= span else []
    if pad:
        nxt = starts[-1] + step if starts else start
        if nxt < end:
            starts.append(nxt)
    return starts


def uniform_frames(start: int, end: int, length: int) -> np.ndarray:
    return np.floor(np.linspace(start, end - 1, length) + 0.5).astype(np.int64)


def legacy_starts(start: int, end: int, length: int, stride: int, step: int,
                  pad: bool) -> list[int]:
    """Starts of the legacy reader's windows: full ones need 1 + (L-1)*stride frames."""
    need = 1 + (length - 1) * stride
    step = length * stride if step <= 0 else step
    starts = list(range(start, end - need + 1, step)) if end - start >= need else []
    if pad:
        nxt = starts[-1] + step if starts else start
        starts += list(range(nxt, end, step))
    return starts


def resolve_range(entry: Entry, n_frames: int) -> tuple[int, int]:
    """An entry's [start, end) in frames; negative values count from the end."""
    start = entry.start + n_frames if entry.start < 0 else entry.start
    end = n_frames if entry.end is None else (entry.end + n_frames if entry.end < 0
                                              else entry.end)
    return max(0, start), min(n_frames, end)


def seconds_to_frames(pts_seconds: np.ndarray, start: float, end: float | None,
                      rounding: str, include_end: bool) -> tuple[int, int | None]:
    """A file_list line's [start, end) seconds as frame numbers, through the frames'
    times (seconds from the first frame): ``start_down_end_up`` takes the frame shown at
    ``start`` (the last one starting at or before it) and ends after the frame shown at
    ``end``; ``..._up`` rounds to the next frame starting at or after the time."""
    times = np.asarray(pts_seconds, np.float64)
    start_up = rounding in ("start_up_end_down", "all_up")
    end_up = rounding in ("start_down_end_up", "all_up")

    def frame_at(t: float, up: bool) -> int:
        if up:
            return int(np.searchsorted(times, t - 1e-9, side="left"))
        return max(0, int(np.searchsorted(times, t + 1e-9, side="right")) - 1)

    first = frame_at(start, start_up)
    if end is None:
        return first, None
    last = frame_at(end, end_up)
    return first, last + 1 if include_end else last


def frames_count_to_range(start: float, end: float | None, include_end: bool,
                          n_frames: int) -> tuple[int, int | None]:
    """A ``file_list_format="frames"`` line's numbers (negative from the end)."""
    s = int(math.floor(start))
    if end is None:
        return s, None
    e = int(math.floor(end))
    if e < 0:
        e += n_frames
    return s, e + 1 if include_end else e
