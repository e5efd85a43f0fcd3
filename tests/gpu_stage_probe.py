"""Counts what the GPU part of a pipeline asks of torch per batch, on torch CPU tensors: the
proxies of a fast GPU path that CI can check without a GPU (issue 21, item 4).

``StageProbe`` wraps ``GpuRunner.run`` (the GPU part of one batch, on the thread that runs
it) and records, per batch:

- ``ops``: aten operations that may launch a kernel (everything the dispatcher sees but
  views, which only make tensor metadata); on CUDA each is at least one launch;
- ``views``: view operations (no launch, a few microseconds of host time each);
- ``syncs``: what would make the host wait for the device on CUDA: ``.item()``, ``bool()``
  of a tensor, ``nonzero``, ``masked_select``, ``unique``, ``equal`` (seen by the dispatcher
  as the ops in ``SYNC_OPS``), ``.cpu()``, ``.numpy()``, ``.tolist()`` of a tensor the stage
  made or got, and ``torch.cuda.synchronize`` / ``Event.synchronize`` / ``Stream.synchronize``;
- ``uploads``: on CPU tensors, host data turned into tensors (``torch.from_numpy``,
  ``torch.as_tensor``, ``torch.tensor``, ``torch.asarray``: each is one host-to-device copy
  on CUDA, where ``.to(device)`` follows; on CPU tensors that ``.to`` is free, so the
  creation is what is counted); on CUDA, the copies from host to device themselves.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

SYNC_OPS = {"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique",
            "_unique2", "unique_consecutive", "unique_dim", "equal", "is_nonzero",
            "nonzero_static"}
_UPLOADS = ("from_numpy", "as_tensor", "tensor", "asarray")
_READBACKS = ("cpu", "numpy", "tolist", "item")


class BatchCount:
    def __init__(self) -> None:
        self.ops: collections.Counter = collections.Counter()
        self.views: collections.Counter = collections.Counter()
        self.syncs: list[str] = []
        self.uploads: list[str] = []

    @property
    def n_ops(self) -> int:
        return sum(self.ops.values())

    @property
    def n_views(self) -> int:
        return sum(self.views.values())

    def summary(self) -> str:
        return (f"{self.n_ops} ops, {self.n_views} views, {len(self.uploads)} uploads, "
                f"{len(self.syncs)} syncs")


def _to_device(name: str, args: tuple, kwargs: dict | None) -> bool:
    """Whether this copy goes from host memory to a device."""
    kwargs = kwargs or {}
    if name == "copy_":
        dst, src = args[0], args[1]
        return src.device.type == "cpu" and dst.device.type != "cpu"
    dst = kwargs.get("device")
    return args[0].device.type == "cpu" and dst is not None and \
        torch.device(dst).type != "cpu"


class _Mode(TorchDispatchMode):
    def __init__(self, probe: StageProbe, count: BatchCount):
        super().__init__()
        self.probe, self.count = probe, count

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if self.probe._cuda() and name in ("_to_copy", "copy_") and _to_device(name, args,
                                                                                 kwargs):
            self.count.uploads.append(f"aten.{name}")
        if name in SYNC_OPS:
            self.count.syncs.append(f"aten.{name}")
        if name == "lift_fresh":  # torch.tensor(python data): counted at torch.tensor
            pass
        elif func.is_view:
            self.count.views[name] += 1
        else:
            self.count.ops[name] += 1
        out = func(*args, **(kwargs or {}))
        self.probe._mark(out)
        return out


class StageProbe:
    """Use as ``with StageProbe() as probe: pipe.run()``; ``probe.batches``
    holds one ``BatchCount`` per batch whose GPU part ran."""

    def __init__(self) -> None:
        import pytest

        self.mp = pytest.MonkeyPatch()
        self.batches: list[BatchCount] = []
        self._local = threading.local()
        self._device_tensors: Any = None

    def _cuda(self) -> bool:
        """On CUDA the copies to the device are counted, on CPU tensors the creations."""
        return getattr(self._local, "cuda", False)

    # The current batch's count on this thread (None outside a GPU part).
    def _current(self) -> BatchCount | None:
        return getattr(self._local, "count", None)

    def _mark(self, out: Any) -> None:
        if self._device_tensors is None:
            return
        for t in (out if isinstance(out, list | tuple) else (out,)):
            if isinstance(t, torch.Tensor):
                self._device_tensors[id(t)] = t

    def __enter__(self) -> StageProbe:
        import weakref

        from stoker.executor import gpu as runner

        # by id: a WeakSet would compare tensors with ==
        self._device_tensors = weakref.WeakValueDictionary()
        probe = self
        real_run = runner.GpuRunner.run

        def run(self_runner, part):
            count = BatchCount()
            for v in part.values.values():
                probe._mark(v if not isinstance(v, list) else
                            [t for t in v if isinstance(t, torch.Tensor)])
            probe._local.count = count
            probe._local.cuda = bool(getattr(self_runner, "cuda", False))
            try:
                with _Mode(probe, count):
                    return real_run(self_runner, part)
            finally:
                probe._local.count = None
                probe.batches.append(count)

        self.mp.setattr(runner.GpuRunner, "run", run)
        for name in _UPLOADS:
            self._wrap_upload(name)
        for name in _READBACKS:
            self._wrap_readback(name)
        for owner, name in ((torch.cuda, "synchronize"), (torch.cuda.Event, "synchronize"),
                            (torch.cuda.Stream, "synchronize")):
            self._wrap_sync(owner, name)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.mp.undo()

    def _wrap_upload(self, name: str) -> None:
        real = getattr(torch, name)
        probe = self

        def wrapper(*args, **kwargs):
            count = probe._current()
            if count is not None and not probe._cuda():
                count.uploads.append(name)
            out = real(*args, **kwargs)
            probe._mark(out)
            return out

        self.mp.setattr(torch, name, wrapper)

    def _wrap_readback(self, name: str) -> None:
        real = getattr(torch.Tensor, name)
        probe = self

        def wrapper(t, *args, **kwargs):
            count = probe._current()
            if count is not None and probe._device_tensors.get(id(t)) is t:
                count.syncs.append(f"Tensor.{name}")
            return real(t, *args, **kwargs)

        self.mp.setattr(torch.Tensor, name, wrapper)

    def _wrap_sync(self, owner: Any, name: str) -> None:
        real = getattr(owner, name)
        probe = self

        def wrapper(*args, **kwargs):
            count = probe._current()
            if count is not None:
                count.syncs.append(f"{getattr(owner, '__name__', owner)}.{name}")
            return real(*args, **kwargs)

        self.mp.setattr(owner, name, wrapper)
