"""Peekable JAX iterators (DALI's ``plugin.jax.clu``, for Google CLU's training loops):
``peek()`` shows the next batch without taking it, ``peek_async()`` makes it on a thread
and returns a future, ``element_spec`` gives each output's shape and dtype.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from stoker.errors import PipelineError, ShapeError
from stoker.plugin.base import LastBatchPolicy
from stoker.plugin.jax.decorator import make_decorator
from stoker.plugin.jax.iterator import DALIGenericIterator

try:  # CLU's own spec type when CLU is there, so its checks accept ours
    from clu.data.dataset_iterator import ArraySpec
except ImportError:
    class ArraySpec(NamedTuple):  # type: ignore[no-redef]
        dtype: Any
        shape: tuple


class DALIGenericPeekableIterator(DALIGenericIterator):
    """``DALIGenericIterator`` that can look one batch ahead."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._peeked: dict | None = None
        self._future: concurrent.futures.Future | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._spec: dict | None = None

    def _checked(self, batch: dict) -> dict:
        spec = {name: ArraySpec(dtype=a.dtype, shape=tuple(a.shape)) for name, a in batch.items()}
        if self._spec is None:
            self._spec = spec
        elif spec != self._spec:
            raise ShapeError(f"DALIGenericPeekableIterator: every batch must keep the shapes "
                             f"and types of the first ({self._spec}), this one has {spec}")
        return batch

    def _take_peeked(self) -> dict | None:
        if self._future is not None:
            self._peeked, self._future = self._future.result(), None
        batch, self._peeked = self._peeked, None
        return batch

    def __next__(self) -> dict:
        batch = self._take_peeked()
        return batch if batch is not None else self._checked(super().__next__())

    def peek(self) -> dict:
        """The batch the next ``next()`` returns, without taking it."""
        if self._future is not None:
            self._peeked, self._future = self._future.result(), None
        if self._peeked is None:
            self._peeked = self._checked(super().__next__())
        return self._peeked

    def peek_async(self) -> concurrent.futures.Future:
        """``peek()`` on a thread; the future's result is the next batch."""
        if self._future is None:
            self._future = self._pool.submit(self.peek)
        return self._future

    @property
    def element_spec(self) -> dict:
        """``{name: ArraySpec(dtype, shape)}`` of every batch (all batches share it)."""
        if self._spec is None:
            self.peek()
        return dict(self._spec)

    def checkpoints(self) -> list[str]:
        if self._peeked is not None or self._future is not None:
            raise PipelineError("DALIGenericPeekableIterator.checkpoints(): a peeked batch "
                                "is pending; take it with next() first")
        return super().checkpoints()


def peekable_data_iterator(pipeline_fn: Callable | None = None, output_map: Sequence[str] = (),
                           size: int = -1, reader_name: str | None = None,
                           auto_reset: bool | str = False, last_batch_padded: bool = False,
                           last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                           prepare_first_batch: bool = True, sharding: Any = None,
                           devices: Sequence | None = None,
                           pmap_compatible: bool | None = None) -> Any:
    """``data_iterator`` making ``DALIGenericPeekableIterator``s."""
    return make_decorator(DALIGenericPeekableIterator, pipeline_fn, output_map, size,
                          reader_name, auto_reset, last_batch_padded, last_batch_policy,
                          prepare_first_batch, sharding, devices, pmap_compatible)
