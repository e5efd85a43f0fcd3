"""NeMo ASR manifests: JSON lines naming audio files, read as DALI 2.4's nemo_asr reader reads
them (measured; tests/audio/test_nemo_asr.py).

Each line is an object with ``audio_filepath`` (opened as written: a relative path is
relative to the working directory, not to the manifest), and optionally ``duration`` and
``offset`` in seconds and ``text``. The entries of all manifests, in order, make the
dataset. DALI's rules:

* A line that is not a JSON object, or lacks ``audio_filepath``, is skipped with a warning.
  (DALI crashes on a ``text`` or path that is not a string and reads a ``duration`` that
  is not a number as 0; stoker skips such lines with a warning too.)
* ``min_duration`` / ``max_duration`` (0: no limit) drop entries whose manifest duration
  is below / above them; the limits are float32 arguments compared with the duration as
  a double (so a 0.3 s entry is below ``min_duration=0.3``). An entry without a duration
  counts as shorter than any limit.
* ``read_idxs`` gives each entry's position among the kept entries of its own manifest
  (counting restarts at 0 in every manifest).
* The text is the UTF-8 bytes of ``text`` (no terminator); none gives an empty array.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stoker.readers.index import DatasetError

NOT_GIVEN = -1.0  # a duration or offset the manifest line leaves out


@dataclass(frozen=True)
class Manifest:
    """The dataset of one nemo_asr reader: one entry per kept manifest line."""

    paths: list[str]
    durations: np.ndarray  # float64 seconds (NOT_GIVEN: read to the end)
    offsets: np.ndarray  # float64 seconds (NOT_GIVEN / negative: from the start)
    texts: list[bytes]
    indices: np.ndarray  # int64: position among the kept entries of its manifest

    def __len__(self) -> int:
        return len(self.paths)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _entry(line: str) -> tuple[str, float, float, bytes] | str:
    """(path, duration, offset, text) of a manifest line, or why it is skipped."""
    try:
        row = json.loads(line)
    except ValueError:
        return "not a JSON object"
    if not isinstance(row, dict):
        return "not a JSON object"
    path = row.get("audio_filepath")
    if path is None:
        return "no audio_filepath"
    if not isinstance(path, str):
        return "audio_filepath is not a string"
    values = []
    for key in ("duration", "offset"):
        if key not in row:
            values.append(NOT_GIVEN)
            continue
        number = _number(row[key])
        if number is None:
            return f"{key} is not a number"
        values.append(number)
    text = row.get("text", "")
    if not isinstance(text, str):
        return "text is not a string"
    return path, values[0], values[1], text.encode("utf-8")


def read_manifests(files: Sequence[str], min_duration: float, max_duration: float,
                   who: str) -> Manifest:
    """The kept entries of ``files``; raises DatasetError naming a manifest that cannot be
    read, or when no entry is left."""
    low = float(np.float32(min_duration))
    high = float(np.float32(max_duration))
    paths, durations, offsets, texts, indices = [], [], [], [], []
    for manifest in files:
        try:
            with open(manifest, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise DatasetError(f"{who}: cannot read manifest {manifest!r}: "
                               f"{getattr(e, 'strerror', None) or e}") from None
        kept = 0
        for number, line in enumerate(lines, 1):
            entry = _entry(line)
            if isinstance(entry, str):
                warnings.warn(f"{who}: skipping line {number} of manifest {manifest!r} "
                              f"({entry}): {line[:80]!r}", stacklevel=2)
                continue
            path, duration, offset, text = entry
            if (low > 0 and duration < low) or (high > 0 and duration > high):
                continue
            paths.append(path)
            durations.append(duration)
            offsets.append(offset)
            texts.append(text)
            indices.append(kept)
            kept += 1
    if not paths:
        raise DatasetError(f"{who}: no audio file left in the manifests {list(files)!r} "
                           "(empty, or every entry filtered out by min/max_duration)")
    return Manifest(paths, np.asarray(durations), np.asarray(offsets), texts,
                    np.asarray(indices, np.int64))
