"""GPU pipelines where no GPU is usable: they run on the CPU, with one warning.

DALI stops such a pipeline at build ("requires a CUDA-capable GPU"); stoker runs its
operators' CPU kernels, so a pipeline written for the GPU runs on a laptop or in CI and
gives what the same pipeline written for the CPU gives.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import gradient_jpeg

import stoker.operators.machinery.registry as registry
from stoker import fn, pipeline_def, types
from stoker.errors import GpuFallbackWarning, GraphError

pytestmark = pytest.mark.skipif(registry.gpu_backend_available(),
                                reason="a GPU (or STOKER_GPU_ON_CPU) is usable here")

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pytest.fixture
def root(tmp_path):
    for i, (h, w) in enumerate([(61, 83), (100, 77), (64, 64), (120, 90), (48, 130)]):
        d = tmp_path / f"class{i % 2}"
        d.mkdir(exist_ok=True)
        (d / f"img{i}.jpg").write_bytes(gradient_jpeg(h, w, seed=i).tobytes())
    return str(tmp_path)


def _train(root: str, gpu: bool, device_id: int | None = 0):
    decode_on, op_on = ("mixed", "gpu") if gpu else ("cpu", "cpu")

    @pipeline_def(batch_size=5, num_threads=2, device_id=device_id, seed=7)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="R")
        images = fn.decoders.image_random_crop(jpegs, device=decode_on, output_type=types.RGB)
        images = fn.resize(images, device=op_on, resize_x=32, resize_y=32)
        images = fn.crop_mirror_normalize(images, device=op_on, dtype=types.FLOAT,
                                          output_layout="CHW", mean=MEAN, std=STD,
                                          mirror=fn.random.coin_flip())
        return images, labels.gpu() if gpu else labels

    return pipe()


def _batches(pipe, n: int = 2) -> list:
    pipe.build()
    return [[np.asarray(tl.as_array()) for tl in pipe.run()] for _ in range(n)]


def test_gpu_pipeline_runs_on_the_cpu_and_equals_the_cpu_pipeline(root):
    registry._warned_no_gpu = False
    with pytest.warns(GpuFallbackWarning, match="run on the CPU"):
        got = _batches(_train(root, gpu=True))
    want = _batches(_train(root, gpu=False))
    for got_batch, want_batch in zip(got, want, strict=True):
        for g, w in zip(got_batch, want_batch, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_the_warning_comes_once_per_process(root):
    registry._warned_no_gpu = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _batches(_train(root, gpu=True), 1)
        _batches(_train(root, gpu=True), 1)
    assert [type(w.message) for w in seen].count(GpuFallbackWarning) == 1


def test_outputs_of_a_fallen_back_pipeline_are_cpu_batches(root):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GpuFallbackWarning)
        pipe = _train(root, gpu=True)
        pipe.build()
        images, labels = pipe.run()
    assert type(images).__name__ == "TensorListCPU" and images.layout() == "CHW"
    assert images.as_array().shape == (5, 3, 32, 32)


def test_device_id_none_with_gpu_operators_is_refused_at_build_as_dali_does(root):
    pipe = _train(root, gpu=True, device_id=None)
    with pytest.raises(GraphError, match="device_id=None"):
        pipe.build()
