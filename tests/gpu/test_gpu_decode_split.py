"""The bookkeeping of a batch decoded by the hardware JPEG decoder and the CPU cores
together (``kernels/gpu/image/decode_split.py``), exercised with a fake hardware decoder
on torch CPU tensors: the split, the slots, the one host-to-device copy, the adaptive
fraction, and the batched kernels reading the slots directly."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gpu_ops_helpers import both  # noqa: E402

from stoker import fn  # noqa: E402
from stoker.kernels.gpu.common import Ragged  # noqa: E402
from stoker.kernels.gpu.image import decode_split as D  # noqa: E402
from stoker.kernels.gpu.image.resample_batch import resize_batch  # noqa: E402
from stoker.operators.image import resize as R  # noqa: E402

_RNG = np.random.default_rng(3)
IMAGES = [_RNG.integers(0, 256, (10 + 5 * (k % 4), 12 + 3 * (k % 5), 3), dtype=np.uint8)
          for k in range(9)]
IMAGES.append(_RNG.integers(0, 256, (40, 45, 3), dtype=np.uint8))  # larger than a slot


def test_split_gives_the_hardware_the_largest_fitting_images_in_minibatches():
    shapes = [x.shape[:2] for x in IMAGES]
    fits = lambda h, w: h <= 32 and w <= 32  # noqa: E731
    hw, cpu = D.split(shapes, 0.5, fits, minibatch=2)
    assert len(hw) == 6 and 9 in cpu and sorted(hw + cpu) == list(range(10))
    areas = [shapes[j][0] * shapes[j][1] for j in range(9)]
    assert min(areas[j] for j in hw) >= max(areas[j] for j in cpu if j != 9)
    assert D.split(shapes, 1.0, fits)[1] == [9]  # oversize: always the CPU's
    assert D.split(shapes, 0.0, fits)[0] == []


def test_adaptive_split_settles_where_both_sides_finish_together():
    split = D.AdaptiveSplit(initial=0.65)
    hw_rate, cpu_rate = 12_000.0, 6_000.0  # images/s: balance at 2/3 on the hardware
    for _ in range(200):
        f = split.fraction
        split.update(256 * f / hw_rate, 256 * (1 - f) / cpu_rate)
    assert abs(split.fraction - 2 / 3) <= 0.01 and split.step == split.floor


def test_fake_hardware_decoder_and_cpu_share_fill_one_batch_the_kernels_read():
    device = torch.device("cpu")
    arena = D.SlotArena(len(IMAGES), 32, 32, 3, device)
    shapes = [x.shape[:2] for x in IMAGES]
    hw, cpu = D.split(shapes, 0.6, arena.fits)
    slots = arena.slots(hw, cpu)
    for j in hw:  # the fake hardware decoder writes straight into its device slots
        h, w = shapes[j]
        arena.device_slot(int(slots[j]), h, w).copy_(torch.from_numpy(IMAGES[j]))
    for j in cpu:
        if arena.fits(*shapes[j]):  # CPU decoding into the host slots
            arena.host_slot(int(slots[j]), *shapes[j])[...] = IMAGES[j]
    fitting = [j for j in range(len(IMAGES)) if arena.fits(*shapes[j])]
    batch = arena.batch([shapes[j] for j in fitting], slots[fitting], len(hw))
    assert isinstance(batch, Ragged)
    for j, t in zip(fitting, batch, strict=True):
        assert np.array_equal(t.numpy(), IMAGES[j])
    # The batched resize reads the pitched slots as they are: the same as from a list.
    from stoker.executor.context import BatchContext, GpuContext

    ctx = GpuContext(BatchContext(0, 0, len(fitting), None, 0), 0, len(fitting), None,
                     device)
    want = both(lambda x: fn.resize(x, size=[7, 9]), [IMAGES[j] for j in fitting],
                layouts=["HWC"], dense=False)
    args = {**want.op.args, "_in_layouts": ("HWC",), "_per_sample": ()}
    got = resize_batch(batch, args, ctx, lambda size, a, j: R.geometry(size, a))
    for a, b in zip(want.gpu[0], got.unbind(0), strict=True):
        assert np.array_equal(a, b.numpy())
