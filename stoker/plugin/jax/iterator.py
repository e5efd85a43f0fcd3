"""JAX iterator: DALI's ``nvidia.dali.plugin.jax.DALIGenericIterator`` over stoker pipelines.

``next()`` returns one dict ``{name: jax.Array}`` for all the pipelines together (DALI's
JAX form, unlike the PyTorch list of dicts). One pipeline: its batch as one array on the
pipeline's device. Several: with ``sharding``, one global array whose shards are the
pipelines' batches (``jax.make_array_from_single_device_arrays``; pipeline ``i`` holds rows
``i*batch .. (i+1)*batch``); without, an array of shape ``(pipelines, batch, ...)`` with one
pipeline per device along the first axis (what ``jax.pmap`` takes). Each batch is copied
once, from the pipeline's array into the device buffer (``jax.device_put``). Epochs,
``reader_name``, checkpoints and resets are ``stoker.plugin.iterator.BaseIterator``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from stoker.errors import ArgumentError, ShapeError
from stoker.plugin.base import LastBatchPolicy
from stoker.plugin.iterator import BaseIterator
from stoker.tensors import TensorList, TensorListGPU


def _host_array(tl: TensorList | TensorListGPU) -> np.ndarray:
    if isinstance(tl, TensorListGPU):
        tl = tl.as_cpu()
    try:
        return tl.as_array()
    except ValueError as e:
        raise ShapeError(f"a batch must be representable as one array to become a jax.Array "
                         f"(its samples differ in shape: pad or resize them): {e}") from None


class DALIGenericIterator(BaseIterator):
    """Batches from stoker pipelines as ``{name: jax.Array}``."""

    _strict_outputs = True
    _name = "DALIGenericIterator (JAX)"

    def __init__(self, pipelines: Any, output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, auto_reset: bool | str = False,
                 last_batch_padded: bool = False,
                 last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True, sharding: Any = None,
                 pmap_compatible: bool | None = None):
        if last_batch_policy is LastBatchPolicy.PARTIAL:
            # A jax.Array program is compiled per shape: a shorter last batch would make
            # jax.jit compile the step again (DALI refuses it too).
            raise ArgumentError("DALIGenericIterator (JAX): last_batch_policy=PARTIAL is not "
                                "supported; use FILL (pad) or DROP")
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise ArgumentError(f"DALIGenericIterator (JAX): sharding must be a "
                                f"jax.sharding.Sharding, got {type(sharding).__name__}")
        self._sharding = sharding
        self._pmap = bool(pmap_compatible)
        npipes = len(pipelines) if isinstance(pipelines, list | tuple) else 1
        self._devices = self._pick_devices(npipes)
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _pick_devices(self, npipes: int) -> list:
        """The device each pipeline's batch goes to."""
        if self._sharding is None:
            local = jax.local_devices()
            return [local[i % len(local)] for i in range(npipes)]
        devices = self._sharding.addressable_devices
        if len(devices) != npipes:
            raise ArgumentError(f"DALIGenericIterator (JAX): the sharding spans "
                                f"{len(devices)} devices of this process but {npipes} "
                                "pipelines were given; give one pipeline per device")
        return []  # placed per batch, from the sharding's index map (_shard)

    def _output(self, name: str, tl: TensorList | TensorListGPU, keep: int) -> np.ndarray:
        array = _host_array(tl)
        return array if keep == len(tl) else array[:keep]

    def _combine(self, per_pipeline: list[dict[str, Any]]) -> dict[str, jax.Array]:
        return {name: self._gather(name, [d[name] for d in per_pipeline])
                for name in self.output_map}

    def _gather(self, name: str, shards: list[np.ndarray]) -> jax.Array:
        if len(shards) == 1 and self._sharding is None and not self._pmap:
            return jax.device_put(shards[0], self._devices[0])
        for i, s in enumerate(shards[1:], 1):
            if s.shape != shards[0].shape or s.dtype != shards[0].dtype:
                raise ShapeError(f"DALIGenericIterator (JAX): output {name!r}: pipeline {i} "
                                 f"gave {s.dtype}{list(s.shape)}, pipeline 0 "
                                 f"{shards[0].dtype}{list(shards[0].shape)}; the shards of one "
                                 "jax.Array must have the same shape and type")
        if self._sharding is not None:
            return self._shard(shards)
        pieces = [jax.device_put(s[None], d) for s, d in zip(shards, self._devices, strict=True)]
        if len(set(self._devices)) < len(self._devices):  # one device: a plain stacked array
            return jnp.concatenate(pieces)
        mesh = jax.sharding.Mesh(np.array(self._devices), ("device",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("device"))
        return jax.make_array_from_single_device_arrays((len(shards), *shards[0].shape),
                                                        sharding, pieces)

    def _shard(self, shards: list[np.ndarray]) -> jax.Array:
        """Pipeline ``i`` feeds this process's ``i``-th device of the sharding (by device
        id, the order ``data_iterator`` builds its pipelines in); the global array holds
        each device's batch at the rows the sharding gives that device, which must be one
        pipeline's batch. With several processes each gives its own devices' pieces."""
        rows = shards[0].shape[0]
        devices = sorted(self._sharding.addressable_devices, key=lambda d: d.id)
        total = rows * len(self._sharding.device_set)
        shape = (total, *shards[0].shape[1:])
        index_map = self._sharding.addressable_devices_indices_map(shape)
        pieces = []
        for shard, device in zip(shards, devices, strict=True):
            index = index_map[device]
            start = index[0].start or 0 if index else 0
            stop = index[0].stop if index and index[0].stop is not None else shape[0]
            if stop - start != rows:
                raise ArgumentError(f"DALIGenericIterator (JAX): the sharding gives device "
                                    f"{device} rows {start}..{stop} of {shape[0]}, not one "
                                    f"pipeline's batch of {rows}; shard the batch axis only, "
                                    "one device per pipeline")
            pieces.append(jax.device_put(shard, device))
        return jax.make_array_from_single_device_arrays(shape, self._sharding, pieces)

    def __next__(self) -> dict[str, jax.Array]:
        return super().__next__()
