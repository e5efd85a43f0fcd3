"""JAX plugin with DALI's names: ``DALIGenericIterator`` (``{name: jax.Array}`` per step,
``sharding=`` for one global array over several devices or processes), the
``data_iterator`` decorator (one pipeline per device from a global batch size), and the
peekable forms of both (``stoker.plugin.jax.clu``). JAX is imported only here
(``pip install stoker[jax]``); ``import stoker`` never needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stoker.plugin.base import LastBatchPolicy
from stoker.plugin.jax.decorator import make_decorator
from stoker.plugin.jax.iterator import DALIGenericIterator

__all__ = ["DALIGenericIterator", "LastBatchPolicy", "data_iterator"]


def data_iterator(pipeline_fn: Callable | None = None, output_map: Sequence[str] = (),
                  size: int = -1, reader_name: str | None = None,
                  auto_reset: bool | str = False, last_batch_padded: bool = False,
                  last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                  prepare_first_batch: bool = True, sharding: Any = None,
                  devices: Sequence | None = None, pmap_compatible: bool | None = None) -> Any:
    """Decorates a pipeline function; calling it (``batch_size`` = the global batch, other
    Pipeline arguments, ``checkpoints=``) returns a ``DALIGenericIterator``."""
    return make_decorator(DALIGenericIterator, pipeline_fn, output_map, size, reader_name,
                          auto_reset, last_batch_padded, last_batch_policy,
                          prepare_first_batch, sharding, devices, pmap_compatible)
