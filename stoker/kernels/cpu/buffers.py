"""Output arrays on recycled memory: ``empty(shape, dtype)`` for the large arrays a kernel
hands on (decoded images, resized samples).

A pipeline makes a batch of such arrays, the consumer drops them a batch or two later,
and the next batch asks for as many again. Through malloc, each dropped array went back
to the system (glibc trims an arena's free top above 128 KiB) and the next batch faulted
the same amount in again, zeroed: decoding a batch of 64 ImageNet-like JPEGs cost 2,000-
5,000 page faults and 8-18 ms of system time, 7-15% of the batch's CPU. Here the memory of
an array comes back to a free list when the array and every view of it are gone, and the
next request of about its size takes it (DALI recycles its batch buffers the same way).

How the return is seen: the memory is a ``bytearray``, and the array handed out is built
on it through a base array made by ``np.frombuffer``. numpy records as the base of every
view the first array up the chain that is not itself a view of an array, so every view,
reshape or transpose of the result (and a torch tensor made from it, which holds it)
keeps the base array alive; a weak reference to the base array fires only when none is
left.

The free list is bounded (``BUDGET`` bytes), takes a block at most two grains larger than
asked for, and is emptied by ``release()`` at each epoch boundary, with glibc's own
trimming (``stoker/executor/heap.py``). Arrays under ``MIN_BYTES`` come from ``np.empty``:
malloc keeps small blocks in its arenas anyway.
"""

from __future__ import annotations

import math
import threading
import weakref

import numpy as np

MIN_BYTES = 256 << 10
GRAIN = 64 << 10  # block sizes are multiples of this
SLACK = 2  # a request may take a free block up to this many grains larger
BUDGET = 128 << 20  # the most free memory the list keeps

_lock = threading.Lock()
_free: dict[int, list[bytearray]] = {}
_held = 0
# The weak references whose callback gives a block back (a weak reference that is not
# itself referenced is never called).
_pending: dict[int, tuple[weakref.ref, bytearray]] = {}


def empty(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized C-contiguous array, as ``np.empty``, on recycled memory when large."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    size = -(-nbytes // GRAIN) * GRAIN
    block = _take(size)
    if block is None:
        block = bytearray(size)
    base = np.frombuffer(block, np.uint8, nbytes)
    ref = weakref.ref(base, _give_back)
    _pending[id(ref)] = (ref, block)
    return base.view(dtype).reshape(shape)


def contiguous(array: np.ndarray) -> np.ndarray:
    """``array`` if C-contiguous, else a copy of it on recycled memory when large."""
    if array.flags.c_contiguous:
        return array
    out = empty(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def _take(size: int) -> bytearray | None:
    global _held
    with _lock:
        for s in range(size, size + (SLACK + 1) * GRAIN, GRAIN):
            blocks = _free.get(s)
            if blocks:
                _held -= s
                return blocks.pop()
    return None


def _give_back(ref: weakref.ref) -> None:
    global _held
    _, block = _pending.pop(id(ref))
    size = len(block)
    with _lock:
        if _held + size <= BUDGET:
            _free.setdefault(size, []).append(block)
            _held += size


def release() -> None:
    """Drops every free block (at an epoch boundary: resident memory stays flat)."""
    global _held
    with _lock:
        _free.clear()
        _held = 0


def held() -> int:
    """Bytes on the free list."""
    return _held
