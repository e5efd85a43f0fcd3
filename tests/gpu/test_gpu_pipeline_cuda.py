"""The GPU part of a pipeline on a real CUDA device: its own stream, events instead of host
waits, pinned uploads, no-copy hand-off to PyTorch, and the mixed decoders' GPU libraries.
Skipped without CUDA (CI); run on a GPU machine with
``python -m pytest tests/gpu -q`` (these and the CPU-tensor tests).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


from helpers import gradient_jpeg  # noqa: E402

from stoker import Pipeline, fn, pipeline_def, types  # noqa: E402
from stoker.kernels.gpu.common import upload_batch  # noqa: E402
from stoker.kernels.gpu.image import jpeg as J  # noqa: E402
from stoker.plugin.pytorch import DALIGenericIterator  # noqa: E402
from stoker.tensors import TensorListGPU  # noqa: E402

IMAGES = [gradient_jpeg(61, 83), gradient_jpeg(100, 77, seed=1), gradient_jpeg(240, 320, seed=2),
          gradient_jpeg(120, 90, seed=3)]


def test_gpu_outputs_live_on_cuda_device_id_and_carry_an_event() -> None:
    pipe = Pipeline(batch_size=2, num_threads=2, device_id=0, seed=1)
    with pipe:
        x = fn.external_source(source=lambda: np.arange(12, dtype=np.float32).reshape(2, 6))
        pipe.set_outputs(x.gpu())
    (out,) = pipe.run()
    assert isinstance(out, TensorListGPU) and out.device == torch.device("cuda", 0)
    assert out._event is not None
    torch.testing.assert_close(out.as_torch().cpu(), torch.arange(12.0).reshape(2, 6))
    assert out.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    pipe.close()


def test_gpu_part_runs_on_the_pipelines_own_stream(monkeypatch) -> None:
    from stoker.operators.machinery.registry import REGISTRY

    streams = []
    real = REGISTRY["flip"].gpu_kernel

    def spy(ins, args, ctx):
        streams.append((torch.cuda.current_stream().cuda_stream, ctx.stream.cuda_stream))
        return real(ins, args, ctx)

    monkeypatch.setitem(REGISTRY, "flip", dataclasses.replace(REGISTRY["flip"],
                                                              gpu_kernel=spy))
    pipe = Pipeline(batch_size=2, num_threads=2, device_id=0, seed=1)
    with pipe:
        x = fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)] * 2,
                               layout="HWC")
        pipe.set_outputs(fn.flip(x.gpu()))
    pipe.run()
    pipe.close()
    current, own = streams[0]
    assert current == own != torch.cuda.default_stream().cuda_stream


def test_run_returns_before_the_gpu_work_ends_and_consumers_wait_on_the_event(monkeypatch):
    def slow_kernel(ins, args, ctx):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time, enqueued on the stream
        return ins[0] + 1

    from stoker.operators.machinery.registry import REGISTRY

    monkeypatch.setitem(REGISTRY, "flip", dataclasses.replace(REGISTRY["flip"],
                                                              gpu_kernel=slow_kernel))
    pipe = Pipeline(batch_size=2, num_threads=2, device_id=0, seed=1, exec_pipelined=False)
    with pipe:
        x = fn.external_source(source=lambda: np.zeros((2, 3), np.int32))
        pipe.set_outputs(fn.flip(x.gpu()))
    # The steady state: the first batch loads the kernels, and CUDA's lazy module loading
    # may wait for the device while it does (a kernel loaded behind the sleeping one).
    pipe.run()
    (out,) = pipe.run()
    assert not out._event.query()  # no host wait inside the pipeline
    t = out.as_torch()  # the current stream waits for the event
    assert int(t.sum().item()) == 6
    pipe.close()


def test_uploads_go_through_pinned_memory(monkeypatch) -> None:
    pinned = []
    real_empty = torch.empty

    def spy(*args, **kwargs):
        t = real_empty(*args, **kwargs)
        if kwargs.get("pin_memory"):
            pinned.append(t)
        return t

    monkeypatch.setattr(torch, "empty", spy)
    dense = upload_batch(np.arange(6, dtype=np.int16).reshape(2, 3), torch.device("cuda", 0))
    ragged = upload_batch([np.arange(3, dtype=np.uint8), np.arange(5, dtype=np.uint8)],
                          torch.device("cuda", 0))
    torch.cuda.synchronize()
    assert len(pinned) == 2 and all(t.is_pinned() for t in pinned)
    assert dense.is_cuda and dense.cpu().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert [t.cpu().tolist() for t in ragged] == [[0, 1, 2], [0, 1, 2, 3, 4]]


def test_iterator_hands_over_the_batch_tensor_on_cuda_without_a_copy() -> None:
    pipe = Pipeline(batch_size=2, num_threads=2, device_id=0, seed=1)
    with pipe:
        x = fn.external_source(source=lambda i: np.full((2, 3), i, np.float32))
        pipe.set_outputs(x.gpu(), x)
    it = DALIGenericIterator(pipe, ["gpu", "cpu"], size=6)
    for k, batch in enumerate(it):
        gpu, cpu = batch[0]["gpu"], batch[0]["cpu"]
        assert gpu.device == torch.device("cuda", 0) and cpu.device.type == "cpu"
        assert torch.equal(gpu.cpu(), cpu) and float(cpu[0, 0]) == k
    pipe.close()


@pytest.mark.parametrize("backend", ["nvimgcodec", "torchvision"])
@pytest.mark.parametrize("name", ["image", "image_crop", "image_random_crop", "image_slice"])
def test_mixed_decoders_on_the_gpu_match_the_cpu_decoders(backend, name, monkeypatch) -> None:
    if backend not in J.installed():
        pytest.skip(f"{backend} is not installed")
    monkeypatch.setenv("STOKER_MIXED_DECODER", backend)
    args = {"image": {}, "image_crop": {"crop": (40, 50)}, "image_random_crop": {},
            "image_slice": {"rel_start": [0.1, 0.2], "rel_shape": [0.5, 0.6]}}[name]

    def make(device):
        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=3)
        def pipe():
            data = fn.external_source(source=lambda: IMAGES)
            return getattr(fn.decoders, name)(data, device=device, **args)
        return pipe()

    cpu_pipe, gpu_pipe = make("cpu"), make("mixed")
    for _ in range(2):
        (want,) = cpu_pipe.run()
        (got,) = gpu_pipe.run()
        assert isinstance(got, TensorListGPU) and got.torch_at(0).is_cuda
        for a, b in zip(want.samples(), got.as_cpu().samples(), strict=True):
            assert a.shape == b.shape  # the same windows
            # nvJPEG and libjpeg-turbo differ in IDCT and chroma upsampling.
            assert np.abs(a.astype(int) - b.astype(int)).mean() < 4
    cpu_pipe.close()
    gpu_pipe.close()


def test_mixed_decoder_bgr_and_gray_on_the_gpu(monkeypatch) -> None:
    def make(device, kind):
        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=3)
        def pipe():
            return fn.decoders.image(fn.external_source(source=lambda: IMAGES), device=device,
                                     output_type=kind)
        return pipe()

    for kind in (types.BGR, types.GRAY):
        a_pipe, b_pipe = make("cpu", kind), make("mixed", kind)
        for a, b in zip(a_pipe.run()[0].samples(), b_pipe.run()[0].as_cpu().samples(),
                        strict=True):
            assert a.shape == b.shape
            assert np.abs(a.astype(int) - b.astype(int)).mean() < 4
        a_pipe.close()
        b_pipe.close()


def test_backend_is_chosen_by_measurement_once(monkeypatch) -> None:
    monkeypatch.delenv("STOKER_MIXED_DECODER", raising=False)
    if len(J.installed()) < 2:
        pytest.skip("needs both nvimgcodec and torchvision to choose")
    J._choice.clear()
    device = torch.device("cuda", 0)
    assert J.backend_for(device) is None
    name, images = J.choose(device, IMAGES, [None] * len(IMAGES), False, {})
    assert name in ("nvimgcodec", "torchvision") and len(images) == len(IMAGES)
    assert J.backend_for(device) == name
