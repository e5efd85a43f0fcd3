"""LMDB databases as a reader's dataset: every entry of every database, in key order,
database after database (DALI's Caffe and Caffe2 readers), read a batch at a time.

Keys are kept as one bytes blob plus offsets (a million keys cost two int64 arrays, not a
million objects). Reads go through one long-lived read-only transaction per database;
each value is copied once out of LMDB's map (a view would dangle once the transaction
ends), and the decoders' outputs are slices of that copy.
``lmdb`` (PyPI) is imported on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from stoker.readers.index import DatasetError


def _lmdb(who: str) -> Any:
    try:
        import lmdb
    except ImportError:
        raise DatasetError(f"{who}: reading LMDB databases needs the 'lmdb' package (pip "
                           "install lmdb, or stoker[lmdb])") from None
    return lmdb


# LMDB allows one environment per database per process: pipelines share them.
_ENVS: dict[str, list] = {}  # real path -> [environment, users]
_ENVS_LOCK = threading.Lock()
# Releases that found the lock taken. A pipeline's __del__ may run (garbage collection) on
# a thread inside _open_env, which holds the lock: waiting there would deadlock, so the
# release is left here and done by the next holder of the lock.
_PENDING: list = []


def _drain_pending() -> None:
    """Does the releases left in _PENDING (the caller holds _ENVS_LOCK)."""
    while _PENDING:
        env = _PENDING.pop()
        for key, entry in list(_ENVS.items()):
            if entry[0] is env:
                entry[1] -= 1
                if entry[1] == 0:
                    del _ENVS[key]
                    env.close()
                break


def _open_env(lmdb: Any, path: str) -> Any:
    key = os.path.realpath(path)
    with _ENVS_LOCK:
        _drain_pending()
        entry = _ENVS.get(key)
        if entry is None:
            env = lmdb.open(path, readonly=True, lock=False, readahead=True,
                            subdir=os.path.isdir(path), max_readers=126)
            entry = _ENVS[key] = [env, 0]
        entry[1] += 1
        return entry[0]


def _release_env(env: Any) -> None:
    _PENDING.append(env)
    if _ENVS_LOCK.acquire(blocking=False):
        try:
            _drain_pending()
        finally:
            _ENVS_LOCK.release()


class LmdbIndex:
    """The entries of databases ``paths``: row -> (database, key)."""

    def __init__(self, paths: Sequence[str], who: str):
        lmdb = _lmdb(who)
        self.paths = list(paths)
        self._envs: list[Any] = []
        self._txns: list[Any] = []  # every transaction begun, to end them at close()
        self._local = threading.local()  # each thread's (an LMDB transaction has one user)
        blobs, lengths, dbs = [], [], []
        for d, path in enumerate(self.paths):
            if not os.path.exists(path):
                raise DatasetError(f"{who}: LMDB database {path!r} does not exist")
            try:
                env = _open_env(lmdb, path)
            except lmdb.Error as e:
                raise DatasetError(f"{who}: cannot open LMDB database {path!r}: {e}") from None
            self._envs.append(env)
            with env.begin(buffers=True) as txn:
                keys = [bytes(k) for k in txn.cursor().iternext(keys=True, values=False)]
            if not keys:
                raise DatasetError(f"{who}: LMDB database {path!r} has no entries")
            blobs.append(b"".join(keys))
            lengths.append(np.fromiter(map(len, keys), np.int64, len(keys)))
            dbs.append(np.full(len(keys), d, np.int32))
        self.db = np.concatenate(dbs)
        key_len = np.concatenate(lengths)
        self._blob = b"".join(blobs)
        self._key_end = np.cumsum(key_len)
        self._key_start = self._key_end - key_len

    def __len__(self) -> int:
        return len(self.db)

    def key(self, row: int) -> bytes:
        return self._blob[self._key_start[row]:self._key_end[row]]

    def file_groups(self) -> np.ndarray:
        return np.bincount(self.db, minlength=len(self.paths))

    def where(self, rows: np.ndarray) -> list[str]:
        """DALI's source_info: ``"<database> at key <key>"``."""
        return [f"{self.paths[d]} at key {self.key(r).decode('utf-8', 'backslashreplace')}"
                for r, d in zip(rows.tolist(), self.db[rows].tolist(), strict=True)]

    def values(self, rows: np.ndarray) -> list[np.ndarray]:
        """The values of ``rows``, each copied into an array of its own. (One buffer for
        the batch costs more: a fresh 50 MB block faults in every page, 4x slower
        measured on 94 KB values; the allocator reuses blocks of a value's size.)"""
        txns = getattr(self._local, "txns", None)
        if txns is None:
            txns = self._local.txns = [env.begin(buffers=True) for env in self._envs]
            self._txns += txns
        out = []
        for r, d in zip(rows.tolist(), self.db[rows].tolist(), strict=True):
            value = txns[d].get(self.key(r))
            out.append(np.array(np.frombuffer(value, np.uint8)) if value is not None
                       else np.zeros(0, np.uint8))
        return out

    def close(self) -> None:
        for txn in self._txns:
            txn.abort()
        for env in self._envs:
            _release_env(env)
        self._txns, self._envs = [], []
