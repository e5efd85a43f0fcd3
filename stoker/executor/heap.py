"""Keeping resident memory flat over epochs (glibc; other C libraries: nothing to do).

Decoded images and batches are large, short-lived and of varying size. glibc serves a
block above its mmap threshold with its own mapping, returned at free; but its threshold
rises to the largest block freed so far (up to 32 MiB), so after the first freed batch
every batch-sized buffer comes from the per-thread arenas, where holes of varying sizes
pile up: resident memory crept up 4-6% over 20 epochs of the ResNet-50 pipelines
(benchmarks/memory_epochs.py, train+val). Two measures:

* a fixed threshold of 4 MiB (``mallopt``), set when the first pipeline is built: batches
  get their own mappings, decoded images (under 1 MiB) still come from the arenas.
  A 64 x 3 x 224 x 224 float32 batch is above 32 MiB and always had its own mapping;
  allocating and filling one took the same time either way (5.6-6.2 ms).
* ``malloc_trim(0)`` at each epoch boundary (``Pipeline.reset``, ~8 ms) hands back the
  arenas' free pages, after the free blocks of recycled outputs
  (``kernels/cpu/buffers.py``) are dropped.

With both, train+val ended 20 epochs within 0.6% of epoch 2 (two runs: 1.0059, 1.0045).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - only glibc has it
        return libc
    except (OSError, AttributeError):
        return None


MMAP_THRESHOLD = 4 << 20
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


@functools.cache
def settle_allocator() -> None:
    """Fixes glibc's mmap threshold (once per process)."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_free_memory() -> None:
    from stoker.kernels.cpu import buffers

    buffers.release()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(ctypes.c_size_t(0))
