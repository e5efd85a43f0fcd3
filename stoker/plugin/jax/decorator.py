"""``@data_iterator``: a pipeline function becomes a factory of JAX iterators.

Calling the decorated function with a *global* ``batch_size`` builds one pipeline per JAX
device (each reading shard ``device.id`` of ``jax.device_count()`` with ``batch_size //
device_count`` samples) when ``sharding`` or ``devices`` is given, or one pipeline with the
whole batch otherwise, and wraps them in the iterator. ``checkpoints=`` (from the
iterator's ``checkpoints()``) restores one pipeline each.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax

from stoker.errors import ArgumentError
from stoker.pipeline import pipeline_def
from stoker.plugin.base import LastBatchPolicy

DEFAULT_NUM_THREADS = 4  # DALI's default for pipelines made by the decorator


def make_decorator(iterator_type: type, pipeline_fn: Callable | None, output_map: Sequence[str],
                   size: int, reader_name: str | None, auto_reset: bool | str,
                   last_batch_padded: bool, last_batch_policy: LastBatchPolicy,
                   prepare_first_batch: bool, sharding: Any, devices: Sequence | None,
                   pmap_compatible: bool | None) -> Any:
    if sharding is not None and devices is not None:
        raise ArgumentError("data_iterator: give sharding or devices, not both")
    iter_kwargs = dict(output_map=output_map, size=size, reader_name=reader_name,
                       auto_reset=auto_reset, last_batch_padded=last_batch_padded,
                       last_batch_policy=last_batch_policy,
                       prepare_first_batch=prepare_first_batch, sharding=sharding,
                       pmap_compatible=pmap_compatible if pmap_compatible is not None
                       else devices is not None)

    def decorate(func: Callable) -> Callable:
        make_pipeline = pipeline_def(func)

        @functools.wraps(func)
        def create(*args: Any, checkpoints: Sequence[str] | None = None, **kwargs: Any) -> Any:
            kwargs.setdefault("num_threads", DEFAULT_NUM_THREADS)
            if sharding is None and devices is None:
                if checkpoints is not None and len(checkpoints) != 1:
                    raise ArgumentError(f"data_iterator: {len(checkpoints)} checkpoints for "
                                        "one pipeline")
                pipe = make_pipeline(*args, checkpoint=checkpoints[0] if checkpoints else None,
                                     **kwargs)
                return iterator_type([pipe], **iter_kwargs)
            if devices is not None and jax.process_count() > 1:
                raise ArgumentError("data_iterator: devices= (pmap) works in one process "
                                    "only; with several processes give sharding=")
            use = list(devices) if devices is not None else \
                list(sharding.addressable_devices)
            # Order the pipelines as the shards they feed: by the device's place in the
            # sharding (its id otherwise).
            use.sort(key=lambda d: d.id)
            num_shards = len(devices) if devices is not None else jax.device_count()
            if "batch_size" not in kwargs:
                raise ArgumentError("data_iterator: give the global batch_size")
            total = kwargs.pop("batch_size")
            if total % num_shards:
                raise ArgumentError(f"data_iterator: the global batch_size {total} does not "
                                    f"divide among {num_shards} devices")
            if checkpoints is not None and len(checkpoints) != len(use):
                raise ArgumentError(f"data_iterator: {len(checkpoints)} checkpoints for "
                                    f"{len(use)} pipelines (one per device)")
            rank = {d: i for i, d in enumerate(sorted(jax.devices(), key=lambda d: d.id))}
            pipes = [make_pipeline(*args, batch_size=total // num_shards,
                                   shard_id=rank[d] if devices is None else i,
                                   num_shards=num_shards,
                                   checkpoint=checkpoints[i] if checkpoints else None,
                                   **kwargs)
                     for i, d in enumerate(use)]
            return iterator_type(pipes, **iter_kwargs)

        return create

    return decorate(pipeline_fn) if pipeline_fn is not None else decorate
