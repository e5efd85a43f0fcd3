"""GPU operators inside pipelines (device_id=0, STOKER_GPU_ON_CPU=1: torch CPU tensors):
the same graph on device="gpu" gives the CPU graph's outputs within the published
tolerances, random windows and per-sample arguments included."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def, types

pytest.importorskip("torch")

_RNG = np.random.default_rng(8)
IMAGES = [_RNG.integers(0, 256, (40 + 3 * i, 50 - 2 * i, 3), dtype=np.uint8) for i in range(4)]


@pytest.fixture(autouse=True)
def _gpu_on_cpu(monkeypatch):
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")


def _run(graph, gpu: bool) -> list[list[np.ndarray]]:
    @pipeline_def(batch_size=len(IMAGES), num_threads=1, device_id=0 if gpu else None,
                  seed=12, exec_pipelined=False)
    def pipe():
        x = fn.external_source(source=lambda: IMAGES, layout="HWC")
        return graph(x.gpu() if gpu else x, "gpu" if gpu else "cpu")

    p = pipe()
    try:
        outs = p.run()
    finally:
        p.close()
    result = []
    for tl in outs:
        assert type(tl).__name__ == ("TensorListGPU" if gpu else "TensorListCPU")
        if gpu:
            tl = tl.as_cpu()
        result.append([np.asarray(s) for s in tl])
    return result


def _compare(graph, atol: float = 0.0) -> None:
    cpu, gpu = _run(graph, False), _run(graph, True)
    for c_out, g_out in zip(cpu, gpu, strict=True):
        for c, g in zip(c_out, g_out, strict=True):
            assert c.dtype == g.dtype and c.shape == g.shape
            np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64), atol=atol)


def test_training_augmentation_chain():
    def graph(x, device):
        x = fn.random_resized_crop(x, size=[24, 24], seed=5, device=device)
        x = fn.flip(x, horizontal=fn.random.coin_flip(seed=6), device=device)
        x = fn.color_twist(x, hue=fn.random.uniform(range=[-20.0, 20.0], seed=7),
                           saturation=1.2, device=device)
        return fn.crop_mirror_normalize(x, crop=[20, 20], mean=[120.0, 115.0, 100.0],
                                        std=[60.0, 60.0, 60.0],
                                        mirror=fn.random.coin_flip(seed=8), device=device)

    # Linear resampling may flip a uint8 level by 1: times 1/60 after normalizing.
    _compare(graph, atol=1 / 60 + 1e-6)


def test_validation_chain_and_arithmetic():
    def graph(x, device):
        x = fn.resize(x, resize_shorter=30.0, interp_type=types.INTERP_NN, device=device)
        x = fn.crop(x, crop=[28, 28], device=device)
        y = fn.cast(x, dtype=types.FLOAT, device=device) * 0.5 - 3
        return fn.transpose(x, perm=[2, 0, 1], device=device), y

    _compare(graph)


def test_ragged_gpu_batch_pad_and_normalize():
    def graph(x, device):
        return (fn.pad(x, fill_value=3.0, device=device),
                fn.normalize(x, axes=[0, 1], device=device),
                fn.color_space_conversion(x, image_type=types.RGB, output_type=types.YCbCr,
                                          device=device))

    _compare(graph, atol=1e-5)
