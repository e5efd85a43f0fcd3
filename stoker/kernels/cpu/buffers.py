"""Output arrays on recycled memory: ``empty(shape, dtype)`` for the large arrays a kernel
hands on (decoded images, resized samples).

A pipeline makes a batch of such arrays, the consumer drops them a batch or two later,
and the next batch asks for as many again. Through malloc, each dropped array went back
to the system (glibc trims an arena's free top above 128 KiB) and the next batch faulted
the same amount in again, zeroed: decoding a batch of 64 ImageNet-like JPEGs cost 2,000-
5,000 page faults and 8-18 ms of system time, 7-15% of the batch's CPU. Here the memory of
an array comes back to a free list when the array and every view of it are gone, and the
next request of about its size takes it (DALI recycles its batch buffers the same way).

How the return is seen: a block is a uint8 array, and the array handed out is built on a
base array that ``np.frombuffer`` makes from a memoryview of the block. numpy records as
the base of every view the first array up the chain that is not itself a view of an
array, here that base array (its own base is the memoryview), so every view, reshape or
transpose of the result (and a torch tensor made from it, which holds it) keeps the base
array alive; a weak reference to the base array fires only when none is left. (Made on
the block directly, views would record the block and skip the base array.)

A request takes a free block at most an eighth (and two grains) larger than it needs.
The free list keeps at most ``BUDGET`` bytes (or one larger block): beyond, the oldest
blocks go, so it follows the sizes in use. ``release()`` empties it at each epoch boundary
and when a pipeline closes, with glibc's own trimming (``stoker/executor/heap.py``). Arrays under
``MIN_BYTES`` come from ``np.empty``: malloc keeps small blocks in its arenas anyway.

Arrays start on a 64-byte boundary (``ALIGN``; malloc gives 16): JAX's CPU client and
TensorFlow then take a batch without copying it (XLA aliases host memory only when it is
64-byte aligned, and copies it otherwise: 20-50 ms a float batch of 32 x 224 x 224 x 3 on
this project's machines), and SIMD loads never straddle a cache line.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import weakref
from collections import OrderedDict, deque

import numpy as np

MIN_BYTES = 256 << 10
GRAIN = 64 << 10  # block sizes are multiples of this
SLACK = 2  # a request may take a free block this many grains larger, or an eighth
BUDGET = 128 << 20  # the most free memory the list keeps
ALIGN = 64  # where a handed-out array starts (a block is this much longer than its size)

# Reentrant: from Python 3.12 garbage collection may run while a thread holds the lock,
# and free an array whose callback gives its block back on that same thread.
_lock = threading.RLock()
_free: dict[int, deque[int]] = {}  # block size -> ids of its free blocks, oldest first
_blocks: OrderedDict[int, np.ndarray] = OrderedDict()  # id -> free block, oldest first
_held = 0
# The weak references whose callback gives a block back (a weak reference that is not
# itself referenced is never called).
_pending: dict[int, tuple[weakref.ref, np.ndarray, int]] = {}
# id of each base array handed out and alive -> its weak reference (``recycled``).
_live: dict[int, weakref.ref] = {}


def empty(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized C-contiguous array, as ``np.empty``, on recycled memory when large."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    size = -(-nbytes // GRAIN) * GRAIN
    block = _take(size)
    if block is None:
        block = np.empty(size + ALIGN, np.uint8)
    # (ctypes.addressof: 0.4 us, where block.ctypes.data takes 2-7 us)
    start = -ctypes.addressof(ctypes.c_char.from_buffer(block)) % ALIGN
    base = np.frombuffer(memoryview(block)[start:start + nbytes], np.uint8)
    ref = weakref.ref(base, _give_back)
    _pending[id(ref)] = (ref, block, id(base))
    _live[id(base)] = ref
    return base.view(dtype).reshape(shape)


def recycled(array: np.ndarray) -> bool:
    """Whether ``array`` (or what it views) came from ``empty``: memory a pipeline owns,
    which nothing writes again while a view of it lives; an operator may then hand out
    views of it instead of copies."""
    base = array.base if isinstance(array, np.ndarray) else None
    while isinstance(base, np.ndarray):  # views made with np.ndarray(buffer=...) chain up
        ref = _live.get(id(base))
        if ref is not None and ref() is base:
            return True
        base = base.base
    return False


def contiguous(array: np.ndarray) -> np.ndarray:
    """``array`` if C-contiguous, else a copy of it on recycled memory when large."""
    if array.flags.c_contiguous:
        return array
    out = empty(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def _take(size: int) -> np.ndarray | None:
    global _held
    largest = size + max(SLACK * GRAIN, size // 8)
    with _lock:
        # (The few sizes held, not every grain up to the largest: 300 lookups for a batch
        # block of 150 MB.)
        fits = [s for s, keys in _free.items() if size <= s <= largest and keys]
        if not fits:
            return None
        s = min(fits)
        _held -= s
        return _blocks.pop(_free[s].pop())


def _give_back(ref: weakref.ref) -> None:
    global _held
    _, block, key = _pending.pop(id(ref))
    if _live.get(key) is ref:  # (the callback runs before the id can be reused)
        del _live[key]
    size = block.nbytes - ALIGN
    with _lock:
        # The oldest blocks make room; a block larger than the budget (a whole batch's
        # output, ``ChunkContext.rows``: 154 MB at batch 256) is kept alone.
        while _held and _held + size > BUDGET:
            _, old = _blocks.popitem(last=False)
            _free[old.nbytes - ALIGN].popleft()
            _held -= old.nbytes - ALIGN
        _blocks[id(block)] = block
        _free.setdefault(size, deque()).append(id(block))
        _held += size


def release() -> None:
    """Drops every free block (at an epoch boundary: resident memory stays flat)."""
    global _held
    with _lock:
        _free.clear()
        _blocks.clear()
        _held = 0


def held() -> int:
    """Bytes on the free list."""
    return _held


def _after_fork() -> None:
    """A forked child starts with an empty list and a lock no other thread holds."""
    global _lock, _held
    _lock = threading.RLock()
    _free.clear()
    _blocks.clear()
    _held = 0


os.register_at_fork(after_in_child=_after_fork)
