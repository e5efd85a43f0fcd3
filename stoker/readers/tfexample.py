"""The features of a batch of ``tf.train.Example`` records, as ``fn.readers.tfrecord``
outputs them.

The compiled loops (``kernels/cpu/readers/tfrecord_loops.py``) find every wanted feature
of every record in one call per buffer and decode each numeric feature's values for the
whole batch in one more; Python only cuts the results into samples. A string feature is
a view of the record's bytes (no copy); a FixedLenFeature of numbers is one array with
the batch on its first axis.

Rules, measured on DALI 2.4 where DALI defines them:

* FixedLenFeature: the record must hold exactly ``prod(shape)`` values; more is an error
  in DALI too, fewer leaves DALI's output partly uninitialised (an error here). A record
  without the feature gives ``default_value`` in the feature's shape (DALI gives a 0-d
  tensor of uninitialised memory; TensorFlow gives the default, as here). A feature stored
  with another type (floats read as int64) is an error (DALI: garbage).
* VarLenFeature: all the values, ``[n]`` or ``[n / m, *partial_shape]`` (``n`` must divide
  by ``m = prod(partial_shape)``: an error otherwise, as in DALI); a record without it,
  or with another type, gives an empty array (DALI: the same for another type; garbage
  when missing).
* string: the first value's bytes (a missing one: ``default_value``'s bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.tfrecord import Feature, float32, string

# Feature kinds in a record (tfrecord_loops).
_KIND = {string: 1, float32: 2}
_KIND_INT64 = 3
_KIND_NAMES = {0: "missing", 1: "bytes", 2: "floats", 3: "int64s"}


@dataclass
class Parsed:
    """Where each wanted feature is in each record of a batch (rows = batch positions)."""

    buffers: list[np.ndarray]
    segment: np.ndarray  # which buffer each row's record is in (-1: failed)
    kinds: np.ndarray  # (n, k): 0 missing, 1 bytes, 2 floats, 3 int64s
    vstarts: np.ndarray
    vends: np.ndarray


class ExampleDecoder:
    """Decodes the features ``names`` (in that order) of batches of Example payloads."""

    def __init__(self, features: dict[str, Feature]):
        self.names = list(features)
        self.features = [features[k] for k in self.names]
        encoded = [k.encode() for k in self.names]
        self._keys = np.frombuffer(b"".join(encoded), np.uint8) if any(encoded) \
            else np.zeros(1, np.uint8)
        self._key_bounds = np.cumsum([0] + [len(k) for k in encoded]).astype(np.int64)
        self._defaults = [_default(f) for f in self.features]

    def locate(self, n: int, segments: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
               lengths: np.ndarray, failures: dict[int, str]) -> Parsed:
        """Finds the features in the payloads: segment ``(buffer, rows, starts)`` holds row
        ``rows[j]``'s payload at ``buffer[starts[j]:starts[j] + lengths[rows[j]]]``. A
        payload that is not an Example is added to ``failures``."""
        tf = loops("readers.tfrecord_loops")
        k = len(self.names)
        kinds = np.zeros((n, k), np.int64)
        vstarts = np.zeros((n, k), np.int64)
        vends = np.zeros((n, k), np.int64)
        segment = np.full(n, -1, np.int64)
        buffers = []
        for s, (buf, rows, starts) in enumerate(segments):
            buffers.append(buf)
            todo_rows, todo_starts = rows, starts
            while len(todo_rows):
                bad = tf.locate_features(buf, todo_starts, lengths[todo_rows], self._keys,
                                         self._key_bounds, kinds, vstarts, vends, todo_rows)
                done = len(todo_rows) if bad < 0 else bad
                segment[todo_rows[:done]] = s
                if bad < 0:
                    break
                failures[int(todo_rows[bad])] = ("the record's payload is not a "
                                                 "tf.train.Example (malformed protobuf)")
                todo_rows, todo_starts = todo_rows[bad + 1:], todo_starts[bad + 1:]
        return Parsed(buffers, segment, kinds, vstarts, vends)

    def outputs(self, p: Parsed, failures: dict[int, str]) -> list:
        """One batch value per feature; rows that fail are added to ``failures`` (their
        place in array outputs holds zeros, in list outputs an empty array)."""
        return [self._column(p, k, failures) for k in range(len(self.names))]

    def _column(self, p: Parsed, k: int, failures: dict[int, str]) -> list | np.ndarray:
        f, name = self.features[k], self.names[k]
        n = len(p.segment)
        if f.dtype == string:
            return self._strings(p, k, failures)
        kind = _KIND.get(f.dtype, _KIND_INT64)
        tf = loops("readers.tfrecord_loops")
        counts = np.full(n, -1, np.int64)
        per_segment = [np.flatnonzero(p.segment == s) for s in range(len(p.buffers))]
        for s, rows in enumerate(per_segment):
            if len(rows):
                tf.count_column(p.buffers[s], p.kinds, p.vstarts, p.vends, rows, k, kind,
                                counts)
        for r in np.flatnonzero(counts == -2).tolist():
            failures.setdefault(r, f"feature {name!r}: its value list is malformed")
        have = counts >= 0
        if f.fixed:
            for r in np.flatnonzero(have & (counts != f.volume)).tolist():
                failures.setdefault(r, f"feature {name!r} has {int(counts[r])} values; "
                                       f"{f!r} wants {f.volume}")
            other = (p.kinds[:, k] != 0) & (p.kinds[:, k] != kind) & (p.segment >= 0)
            for r in np.flatnonzero(other).tolist():
                failures.setdefault(r, f"feature {name!r} holds "
                                       f"{_KIND_NAMES[int(p.kinds[r, k])]}; {f!r} wants "
                                       f"{_KIND_NAMES[kind]}")
            counts = np.where(have & (counts == f.volume), counts, 0)
        else:
            counts = np.maximum(counts, 0)
            if f.shape is not None:
                bad = counts % max(f.volume, 1) != 0 if f.volume else counts != 0
                for r in np.flatnonzero(bad).tolist():
                    failures.setdefault(r, f"feature {name!r} has {int(counts[r])} values, "
                                           f"not a multiple of the partial shape "
                                           f"{list(f.shape)} ({f.volume} values)")
                counts = np.where(bad, 0, counts)
        firsts = np.cumsum(counts) - counts
        flat = np.empty(int(counts.sum()), f.numpy_dtype)
        for s, rows in enumerate(per_segment):
            rows = rows[counts[rows] > 0]
            if len(rows):
                tf.decode_column(p.buffers[s], p.vstarts, p.vends, rows, k, kind, firsts,
                                 flat.view(np.uint8), flat if kind == _KIND_INT64 else
                                 np.zeros(0, np.int64))
        if f.fixed:
            out = np.empty((n, *f.shape), f.numpy_dtype)
            full = counts == f.volume
            if f.volume:
                out[full] = flat.reshape(-1, *f.shape)
            out[~full] = self._defaults[k]
            return out
        shape = (-1, *f.shape) if f.shape is not None and f.volume else None
        pieces = np.split(flat, firsts[1:]) if n else []
        if shape is not None:
            return [a.reshape(shape) for a in pieces]
        if f.shape is not None:  # a partial shape with a zero: only empty samples
            return [a.reshape(0, *f.shape) for a in pieces]
        return pieces

    def _strings(self, p: Parsed, k: int, failures: dict[int, str]) -> list:
        tf = loops("readers.tfrecord_loops")
        n = len(p.segment)
        bounds = np.full((n, 2), -1, np.int64)
        for s in range(len(p.buffers)):
            rows = np.flatnonzero((p.segment == s) & (p.kinds[:, k] == 1))
            if len(rows):
                tf.first_bytes(p.buffers[s], p.vstarts, p.vends, rows, k, bounds)
        out: list = []
        default = self._defaults[k]
        name = self.names[k]
        for r, (seg, a, b) in enumerate(zip(p.segment.tolist(), bounds[:, 0].tolist(),
                                            bounds[:, 1].tolist(), strict=True)):
            if a >= 0:
                out.append(p.buffers[seg][a:b])
                continue
            if a == -2:
                failures.setdefault(r, f"feature {name!r}: its bytes list is malformed")
            elif seg >= 0 and p.kinds[r, k] not in (0, 1):
                failures.setdefault(r, f"feature {name!r} holds "
                                       f"{_KIND_NAMES[int(p.kinds[r, k])]}, not bytes")
            out.append(default.copy())
        return out


def _default(f: Feature) -> np.ndarray:
    """The value a record without the feature gives (FixedLenFeature), or the empty value
    (VarLenFeature)."""
    value = f.default_value
    if f.dtype == string:
        if f.fixed and value is not None:
            data = value.encode() if isinstance(value, str) else bytes(value)
            return np.frombuffer(data, np.uint8).copy()
        return np.zeros(0, np.uint8)
    if not f.fixed:
        return np.zeros((0, *(f.shape or ())), f.numpy_dtype)
    try:
        return np.broadcast_to(np.asarray(value, f.numpy_dtype), f.shape).copy()
    except (TypeError, ValueError):
        raise TypeError(f"{f!r}: default_value {value!r} does not fit the shape "
                        f"{list(f.shape)}") from None
