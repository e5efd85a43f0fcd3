"""Bookkeeping for decoding one batch with both the hardware JPEG decoder and the CPU
cores (issue 21, item 2): which samples go where, the slots they are decoded into, and how
the split adapts from batch to batch. No decoder here: the decoders write into the slots.

- ``split``: the hardware decoder gets ``fraction`` of the batch, largest images first (as
  nvImageCodec orders its hardware share), rounded up to its mini-batch; images larger
  than a slot always go to the CPU share.
- ``AdaptiveSplit``: after each batch, moves the fraction toward whichever side finished
  first (nvImageCodec's ADAPTIVE_MINIMIZE_IDLE_TIME idea), the step halving whenever the
  direction turns, down to a floor. ``hw_decoder_load`` keeps DALI's meaning as the start.
- ``SlotArena``: a (n, H, W, C) uint8 device buffer whose slots hold one sample each in
  their top-left corner: the hardware share in the first slots, written there by the
  decoder; the CPU share in the last ones, decoded into the same slots of a host buffer
  (page-locked on CUDA) and sent with ONE copy (``slots``). ``batch`` gives the whole batch as a
  ``common.Ragged`` over the device buffer (rows pitched by the slot width), which the
  batched kernels read directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.gpu import common as G


def split(shapes: list[tuple[int, int]], fraction: float, fits: Any, minibatch: int = 1
          ) -> tuple[list[int], list[int]]:
    """(hardware samples, CPU samples), each in batch order: ``fraction`` of the samples
    that ``fits(h, w)`` a slot, largest area first, rounded up to a multiple of
    ``minibatch`` (as far as there are such samples)."""
    eligible = [j for j, (h, w) in enumerate(shapes) if fits(h, w)]
    want = int(np.ceil(max(0.0, min(1.0, fraction)) * len(shapes) / minibatch)) * minibatch
    by_area = sorted(eligible, key=lambda j: -shapes[j][0] * shapes[j][1])
    hw = sorted(by_area[:min(want, len(by_area))])
    taken = set(hw)
    return hw, [j for j in range(len(shapes)) if j not in taken]


class AdaptiveSplit:
    """The hardware share of each batch, adapted so both sides finish together."""

    def __init__(self, initial: float = 0.65, step: float = 0.05, floor: float = 0.005):
        self.fraction = float(initial)
        self.step = float(step)
        self.floor = float(floor)
        self._last = 0

    def update(self, hw_seconds: float, cpu_seconds: float) -> float:
        """After a batch: the hardware side took ``hw_seconds``, the CPU side
        ``cpu_seconds``; returns the next batch's fraction."""
        if hw_seconds == cpu_seconds:
            return self.fraction
        direction = 1 if hw_seconds < cpu_seconds else -1  # the faster side takes more
        if self._last and direction != self._last:
            self.step = max(self.floor, self.step / 2)
        self._last = direction
        self.fraction = min(1.0, max(0.0, self.fraction + direction * self.step))
        return self.fraction


class SlotArena:
    """n slots of (height, width, channels) uint8 on the device and on the host."""

    def __init__(self, n: int, height: int, width: int, channels: int, device: Any):
        self.n, self.height, self.width, self.channels = n, height, width, channels
        self.device = device
        shape = (n, height, width, channels)
        self.on_device = torch.empty(shape, dtype=torch.uint8, device=device)
        host, self._staging = G.pinned_staging(int(np.prod(shape)), np.dtype(np.uint8),
                                               device)
        self.on_host = host.reshape(shape)

    def fits(self, h: int, w: int) -> bool:
        return h <= self.height and w <= self.width

    def device_slot(self, j: int, h: int, w: int) -> torch.Tensor:
        """Slot j's (h, w, C) corner on the device: where a hardware decoder writes."""
        return self.on_device[j, :h, :w]

    def host_slot(self, j: int, h: int, w: int) -> np.ndarray:
        """Slot j's (h, w, C) corner on the host: where a CPU decoder writes."""
        return self.on_host[j, :h, :w]

    @staticmethod
    def slots(hw: list[int], cpu: list[int]) -> np.ndarray:
        """Each sample's slot: the hardware share first, then the CPU share."""
        out = np.empty(len(hw) + len(cpu), np.int64)
        out[np.asarray(hw + cpu, np.int64)] = np.arange(len(out))
        return out

    def batch(self, shapes: list[tuple[int, int]], slots: np.ndarray, first_cpu: int
              ) -> G.Ragged:
        """The batch (sample j in slot ``slots[j]``) as one Ragged, after ONE copy of the
        host slots [first_cpu, n) to the device (none when the hardware took them all)."""
        n = len(shapes)
        if first_cpu < n:
            staging = self._staging if isinstance(self._staging, torch.Tensor) else \
                torch.from_numpy(self._staging)
            part = staging.view(self.on_device.shape)[first_cpu:n]
            self.on_device[first_cpu:n].copy_(part, non_blocking=True)
        per = self.height * self.width * self.channels
        sample = np.array([(h, w, self.channels) for h, w in shapes], np.int64).reshape(n, 3)
        strides = np.tile(np.array([self.width * self.channels, self.channels, 1], np.int64),
                          (n, 1))
        return G.Ragged(self.on_device.view(-1), np.asarray(slots, np.int64) * per, sample,
                        strides)
