"""Hand batches to a model on another device without waste.

A CPU pipeline that ends in uint8 images moves a quarter of the bytes of float32 ones.
``DeviceFeeder`` wraps an iterator: it copies each uint8 batch into a reused pinned buffer,
starts an asynchronous copy to the device on a side stream, converts and normalizes it
there (``(x - mean) / std``, HWC to CHW), and keeps the next batch in flight while the
model works on the current one (the technique of the seeds' CPU-pipeline recipe). With
``device="cpu"`` the same code runs without pinning or streams, which is how CI tests it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch


def normalize(images: torch.Tensor, mean: torch.Tensor | None, std: torch.Tensor | None,
              dtype: torch.dtype, layout: str) -> torch.Tensor:
    """uint8 NHWC (or NCHW) images to ``dtype`` NCHW, normalized per channel."""
    x = images.to(dtype)
    if layout == "HWC":
        x = x.permute(0, 3, 1, 2)
    if mean is not None:
        x = x - mean.view(1, -1, 1, 1)
    if std is not None:
        x = x / std.view(1, -1, 1, 1)
    return x.contiguous()


class DeviceFeeder:
    """Wraps a stoker iterator: batches arrive on ``device``, images normalized there.

    ``keys`` are the outputs holding uint8 images in ``layout`` ("HWC" or "CHW"); other
    outputs (labels) are moved as they are. ``mean``/``std`` are per channel, in the
    images' units (0..255).
    """

    def __init__(self, iterator: Any, device: str | torch.device = "cuda",
                 keys: Sequence[str] = ("data",), mean: Sequence[float] | None = None,
                 std: Sequence[float] | None = None, dtype: torch.dtype = torch.float32,
                 layout: str = "HWC"):
        if layout not in ("HWC", "CHW"):
            raise ValueError(f"DeviceFeeder: layout must be 'HWC' or 'CHW', got {layout!r}")
        self.iterator = iterator
        self.device = torch.device(device)
        self.keys = set(keys)
        self.dtype = dtype
        self.layout = layout
        self.mean, self.std = (None if v is None else
                               torch.tensor(v, dtype=dtype, device=self.device)
                               for v in (mean, std))
        self.cuda = self.device.type == "cuda"
        self.stream = torch.cuda.Stream(self.device) if self.cuda else None
        self._staging: dict[tuple, list[list]] = {}  # pinned [buffer, event] slots, reused
        self._next: tuple[Any, Any] | None = None

    def __len__(self) -> int:
        return len(self.iterator)

    def __iter__(self) -> Iterator[Any]:
        self._it = iter(self.iterator)
        self._next = self._start()
        return self

    def __next__(self) -> Any:
        if self._next is None:
            raise StopIteration
        batch, event = self._next
        if event is not None:
            torch.cuda.current_stream(self.device).wait_event(event)
            for value in _tensors(batch):
                value.record_stream(torch.cuda.current_stream(self.device))
        self._next = self._start()  # the next copy overlaps with the caller's work
        return batch

    def _start(self) -> tuple[Any, Any] | None:
        try:
            batch = next(self._it)
        except StopIteration:
            return None
        if not self.cuda:
            return _map(batch, self._move), None
        with torch.cuda.stream(self.stream):
            moved = _map(batch, self._move)
            event = torch.cuda.Event()
            event.record(self.stream)
        return moved, event

    def _move(self, key: str, value: torch.Tensor) -> torch.Tensor:
        if self.cuda:
            slot = self._pin(value)
            value = slot[0].to(self.device, non_blocking=True)
            slot[1] = torch.cuda.Event()
            slot[1].record(self.stream)  # the buffer is free again once this copy is done
        else:
            value = value.to(self.device)
        if key in self.keys:
            return normalize(value, self.mean, self.std, self.dtype, self.layout)
        return value

    def _pin(self, value: torch.Tensor) -> list:
        """A [pinned buffer, event of its last copy] slot from a small ring of reused
        buffers (pinning memory is slow), filled with ``value``."""
        ring = self._staging.setdefault((tuple(value.shape), value.dtype), [])
        if len(ring) < 3:  # one being copied, one waiting, one being filled
            ring.append([torch.empty(value.shape, dtype=value.dtype, pin_memory=True), None])
        slot = ring.pop(0)
        ring.append(slot)
        if slot[1] is not None:
            slot[1].synchronize()  # its previous copy to the device must have finished
        slot[0].copy_(value)
        return slot


def _map(batch: Any, move: Any) -> Any:
    if isinstance(batch, list):
        return [_map(item, move) for item in batch]
    return {key: move(key, value) if isinstance(value, torch.Tensor) else value
            for key, value in batch.items()}


def _tensors(batch: Any) -> Iterator[torch.Tensor]:
    items = batch if isinstance(batch, list) else [batch]
    for item in items:
        yield from (v for v in item.values() if isinstance(v, torch.Tensor))
