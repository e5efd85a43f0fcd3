"""Taps computed on the device (``kernels/gpu/image/device_taps.py``, on torch CPU tensors)
against the CPU kernel's taps: identical indices, start and span, weights within an ulp
or so (mostly identical) for every filter,
shrinking and enlarging, flipped windows, output windows and mirrors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stoker.kernels.cpu.image import resize as K  # noqa: E402
from stoker.kernels.cpu.image.resize_geometry import (  # noqa: E402
    CUBIC,
    GAUSSIAN,
    LANCZOS3,
    LINEAR,
    TRIANGULAR,
    ResizeGeometry,
)
from stoker.kernels.gpu import batch as B  # noqa: E402
from stoker.kernels.gpu.image import device_taps as D  # noqa: E402

KINDS = [LINEAR, TRIANGULAR, GAUSSIAN, CUBIC, LANCZOS3]


def _cases(rng, n):
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(1, 120, 2))
        oh, ow = (int(v) for v in rng.integers(1, 70, 2))
        y0, x0 = rng.uniform(-3, h / 2), rng.uniform(-3, w / 2)
        y1, x1 = y0 + rng.uniform(0.5, h), x0 + rng.uniform(0.5, w)
        if rng.integers(0, 4) == 0:
            x0, x1 = x1, x0  # flipped by the window
        geom = ResizeGeometry(oh, ow, y0, x0, y1, x1)
        kind = int(rng.choice(KINDS))
        aa = bool(rng.integers(0, 2))
        wy, wx = int(rng.integers(1, oh + 1)), int(rng.integers(1, ow + 1))
        y, x = int(rng.integers(0, oh - wy + 1)), int(rng.integers(0, ow - wx + 1))
        yield (h, w), geom, kind, aa, (y, x, wy, wx, bool(rng.integers(0, 2)))


@pytest.mark.parametrize("seed", range(4))
def test_device_taps_equal_the_cpu_taps(seed):
    cases = list(_cases(np.random.default_rng(seed), 48))
    ys, xs, want = [], [], []
    for (h, w), g, kind, aa, (y, x, wy, wx, mirror) in cases:
        fy, fx = K._filters(g, kind, kind, aa)
        ys.append((g.out_h, g.lo_y, g.hi_y, fy, h, y, wy, False))
        xs.append((g.out_w, g.lo_x, g.hi_x, fx, w, x, wx, mirror))
        want.append(K.resize_taps((h, w), g, kind, kind, aa).window(y, x, wy, wx, mirror))
    for axes, pick in ((ys, lambda t: t.y), (xs, lambda t: t.x)):
        p = D.plans(axes)
        start, span = D.spans(p)
        cols, tables = B.upload_tables(torch.device("cpu"), *D.host_tables(p, start))
        rows = int(p.count.max())
        support = int(p.support.max())
        idx, wts = D.device_taps(cols, tables, p.tables.shape[1], rows, support,
                                 torch.float32)
        same = 0
        for j, taps in enumerate(want):
            axis = pick(taps)
            o, s = axis.idx.shape
            assert (start[j], span[j]) == (axis.start, axis.extent), j
            assert np.array_equal(idx[j, :o, :s].numpy(), axis.idx), j
            # (the total is summed in another order: an ulp or so; mostly identical)
            np.testing.assert_allclose(wts[j, :o, :s].numpy(), axis.weights, rtol=0,
                                       atol=1e-7)  # (weights sum to 1: an ulp of 1)
            same += int(np.array_equal(wts[j, :o, :s].numpy(), axis.weights))
            assert not wts[j, o:].any() and not wts[j, :, s:].any()
        assert same >= 0.7 * len(want)
