"""DeviceFeeder: normalization equals numpy's, labels pass through, order and length are
kept. Runs on the CPU here: the same code path as on a GPU minus pinning and streams."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.pytorch import DALIGenericIterator  # noqa: E402
from stoker.plugin.pytorch.feed import DeviceFeeder  # noqa: E402

IMAGES = np.random.default_rng(0).integers(0, 256, (6, 5, 7, 3), dtype=np.uint8)
MEAN, STD = [120.0, 110.0, 100.0], [60.0, 55.0, 50.0]


def _iterator(batches=3):
    chunks = iter([(IMAGES[i:i + 2], np.arange(i, i + 2, dtype=np.int32)) for i in
                   range(0, 2 * batches, 2)])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, exec_pipelined=False)
    def pipe():
        images, labels = fn.external_source(source=chunks, num_outputs=2, layout=["HWC", ""])
        return images, labels

    return DALIGenericIterator(pipe(), ["data", "label"], size=2 * batches)


def test_feeder_normalizes_to_nchw_float_like_numpy():
    feeder = DeviceFeeder(_iterator(), device="cpu", mean=MEAN, std=STD)
    batches = list(feeder)
    assert len(batches) == 3 and len(feeder) == 3
    for k, (batch,) in enumerate(batches):
        data, label = batch["data"], batch["label"]
        assert data.dtype == torch.float32 and tuple(data.shape) == (2, 3, 5, 7)
        ref = ((IMAGES[2 * k:2 * k + 2].astype(np.float64) - MEAN) / STD).transpose(0, 3, 1, 2)
        np.testing.assert_allclose(data.numpy(), ref, rtol=1e-5, atol=1e-5)
        assert label.tolist() == [2 * k, 2 * k + 1]  # labels untouched, order kept


def test_feeder_half_precision_and_no_normalization():
    feeder = DeviceFeeder(_iterator(1), device="cpu", dtype=torch.float16)
    (batch,) = next(iter(feeder))
    assert batch["data"].dtype == torch.float16
    np.testing.assert_array_equal(batch["data"].numpy(),
                                  IMAGES[:2].transpose(0, 3, 1, 2).astype(np.float16))


def test_feeder_refuses_an_unknown_layout():
    with pytest.raises(ValueError, match="layout must be 'HWC' or 'CHW'"):
        DeviceFeeder(_iterator(1), device="cpu", layout="WHC")
