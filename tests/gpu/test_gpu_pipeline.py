"""The GPU part of a pipeline, run on torch CPU tensors (STOKER_GPU_ON_CPU=1): the same code
path as on a GPU, minus CUDA streams. Mixed decoders against the CPU decoders, uploads and
downloads, TensorListGPU, the two-thread prefetcher (order, errors, end of stream, reset,
overlap), the PyTorch iterators, and shutdown. Tests that need CUDA are in
test_gpu_pipeline_cuda.py.
"""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import gradient_jpeg  # noqa: E402
from PIL import Image  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.errors import SampleError  # noqa: E402
from stoker.tensors import TensorList, TensorListGPU  # noqa: E402


@pytest.fixture(autouse=True)
def gpu_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")




def png(h: int, w: int) -> np.ndarray:
    img = (np.arange(h * w * 3).reshape(h, w, 3) * 7 % 256).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "PNG")
    return np.frombuffer(buf.getvalue(), np.uint8)


# JPEGs and a PNG (the mixed decoders decode non-JPEG formats on the CPU, then upload).
IMAGES = [gradient_jpeg(61, 83), gradient_jpeg(100, 77, seed=1), png(40, 52),
          gradient_jpeg(120, 90, seed=3), gradient_jpeg(64, 64, seed=2), png(33, 71)]


def batches_of(images: list, batch: int) -> list:
    return [images[k:k + batch] for k in range(0, len(images), batch)]


def run_both(build, iters: int = 2, batch: int = 3, threads: int = 2, **pipe_args) -> tuple:
    """Runs ``build(encoded, device)`` for device "cpu" and "mixed" with the same seed;
    returns (cpu batches, mixed batches) as lists of per-output lists of numpy samples."""
    def make(device: str):
        @pipeline_def(batch_size=batch, num_threads=threads, device_id=0, seed=11, **pipe_args)
        def pipe():
            data = fn.external_source(source=lambda i: IMAGES[(i * batch) % len(IMAGES):]
                                      [:batch] or IMAGES[:batch])
            out = build(data, device)
            return out if isinstance(out, tuple) else (out,)

        p = pipe()
        p.build()
        got = []
        for _ in range(iters):
            outs = p.run()
            got.append([[np.asarray(s) for s in _cpu(tl)] for tl in outs])
        p.close()
        return got

    return make("cpu"), make("mixed")


def _cpu(tl):
    return tl.as_cpu() if isinstance(tl, TensorListGPU) else tl


def assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for xs, ys in zip(a, b, strict=True):
        for x_out, y_out in zip(xs, ys, strict=True):
            assert len(x_out) == len(y_out)
            for x, y in zip(x_out, y_out, strict=True):
                assert x.dtype == y.dtype and x.shape == y.shape
                np.testing.assert_array_equal(x, y)


# -- mixed decoders ---------------------------------------------------------------------------

@pytest.mark.parametrize("output_type", [types.RGB, types.BGR, types.GRAY])
def test_mixed_image_decoder_equals_cpu_decoder(output_type) -> None:
    cpu, mixed = run_both(lambda x, d: fn.decoders.image(x, device=d, output_type=output_type))
    assert_same(cpu, mixed)


def test_mixed_image_crop_equals_cpu_with_per_sample_positions() -> None:
    def build(x, d):
        pos = fn.random.uniform(range=[0.0, 1.0])
        return fn.decoders.image_crop(x, device=d, crop=(20, 30), crop_pos_x=pos,
                                      crop_pos_y=0.25)

    cpu, mixed = run_both(build, iters=2)
    assert_same(cpu, mixed)
    assert all(s.shape == (20, 30, 3) for s in mixed[0][0])


def test_mixed_image_random_crop_draws_the_cpu_decoders_windows() -> None:
    cpu, mixed = run_both(lambda x, d: fn.decoders.image_random_crop(x, device=d), iters=3)
    assert_same(cpu, mixed)
    shapes = {s.shape for batch in mixed for s in batch[0]}
    assert len(shapes) > 3  # random windows, not one fixed window


def test_mixed_image_slice_equals_cpu_with_anchor_and_shape_inputs() -> None:
    def build(x, d):
        anchor = fn.random.uniform(range=[0.0, 0.3], shape=[2])
        return fn.decoders.image_slice(x, anchor, np.array([0.5, 0.6], np.float32), device=d)

    cpu, mixed = run_both(build)
    assert_same(cpu, mixed)


def test_mixed_decoder_output_is_a_gpu_batch_of_hwc_uint8_tensors() -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=1)
    def pipe():
        images, _ = fn.external_source(source=lambda: (IMAGES[:3], [np.int32(0)] * 3),
                                       num_outputs=2)
        return fn.decoders.image(images, device="mixed")

    p = pipe()
    (out,) = p.run()
    p.close()
    assert isinstance(out, TensorListGPU) and out.layout() == "HWC"
    assert out.dtype == types.UINT8 and len(out) == 3
    assert out.shape() == [(61, 83, 3), (100, 77, 3), (40, 52, 3)]
    assert isinstance(out.torch_at(1), torch.Tensor) and out.torch_at(1).dtype == torch.uint8
    assert out[1].dtype == types.UINT8 and out[1].shape() == [100, 77, 3]  # a TensorGPU
    assert not out.is_dense_tensor()


def test_mixed_decoder_error_names_the_operator_and_the_file(tmp_path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jpg").write_bytes(IMAGES[0].tobytes())
    (tmp_path / "c" / "b.jpg").write_bytes(IMAGES[1].tobytes()[:300])

    @pipeline_def(batch_size=2, num_threads=2, device_id=0)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.decoders.image(data, device="mixed")

    p = pipe()
    with pytest.raises(SampleError, match=r"fn.decoders.image \(created at .*\) failed on "
                                          r".*c/b.jpg"):
        p.run()
    p.close()


def test_mixed_crop_window_outside_the_image_names_operator_and_sample() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        data = fn.external_source(source=lambda: [IMAGES[0], IMAGES[1]])
        return fn.decoders.image_crop(data, crop=(70, 10), device="mixed")

    p = pipe()
    with pytest.raises(SampleError, match=r"fn.decoders.image_crop .* failed on sample 0 of "
                                          r"batch 0: OutOfBoundsError: Slice can't be placed"):
        p.run()
    p.close()


def test_mixed_decoder_backend_override_is_checked(monkeypatch) -> None:
    from stoker.kernels.gpu.image import jpeg as J

    monkeypatch.setenv("STOKER_MIXED_DECODER", "nvjpg")
    with pytest.raises(ValueError, match="STOKER_MIXED_DECODER='nvjpg': must be one of "
                                         "nvimgcodec, torchvision, cpu"):
        J.requested()
    monkeypatch.setenv("STOKER_MIXED_DECODER", "cpu")
    assert J.backend_for(torch.device("cpu")) == "cpu"


# -- uploads, downloads, GPU operators --------------------------------------------------------

def _numbers(k: int, n: int = 3) -> list:
    return [np.full((2, 3), 10 * k + j, np.int16) for j in range(n)]


def test_gpu_then_as_cpu_round_trips_dense_and_ragged_batches() -> None:
    ragged = [np.arange(j * 4 + 2, dtype=np.float32) for j in range(3)]

    @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=1)
    def pipe():
        dense = fn.external_source(source=lambda: np.arange(18, dtype=np.uint8).reshape(3, 6),
                                   layout="X")
        rag = fn.external_source(source=lambda: ragged)
        return dense.gpu(), rag.gpu(), dense

    p = pipe()
    dense, rag, host = p.run()
    p.close()
    assert isinstance(dense, TensorListGPU) and isinstance(host, TensorList)
    assert dense.is_dense_tensor() and dense.layout() == "X" and dense.shape() == [(6,)] * 3
    np.testing.assert_array_equal(dense.as_cpu().as_array(), host.as_array())
    assert dense.as_tensor().data_ptr() == dense.as_tensor().data_ptr()  # no copy
    np.testing.assert_array_equal(torch.from_dlpack(dense).numpy(), host.as_array())
    assert dense.__dlpack_device__() == (1, 0)
    assert rag.dtype == types.FLOAT and rag.shape() == [(2,), (6,), (10,)]
    for got, want in zip(rag.as_cpu(), ragged, strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="samples have different shapes"):
        rag.as_tensor()


def test_gpu_on_a_gpu_node_is_the_node_and_cpu_then_cpu_op_runs_after_the_gpu_part() -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda i: _numbers(i), layout="HW")
        g = x.gpu()
        assert g.gpu() is g
        back = g.cpu()
        assert back.device == "cpu"
        return fn.cast(back, dtype=types.INT32) + 1

    p = pipe()
    for k in range(2):
        (out,) = p.run()
        assert isinstance(out, TensorList)
        np.testing.assert_array_equal(out.as_array(), np.stack(_numbers(k)).astype(np.int32) + 1)
    p.close()


def test_gpu_flip_on_uploaded_data_equals_cpu_flip() -> None:
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (5, 7, 3), dtype=np.uint8) for _ in range(4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=2)
    def pipe():
        x = fn.external_source(source=lambda: images, layout="HWC")
        return fn.flip(x.gpu(), horizontal=1, vertical=1), fn.flip(x, horizontal=1, vertical=1)

    p = pipe()
    on_gpu, on_cpu = p.run()
    p.close()
    assert isinstance(on_gpu, TensorListGPU) and on_gpu.layout() == "HWC"
    np.testing.assert_array_equal(on_gpu.as_cpu().as_array(), on_cpu.as_array())


def test_mixed_decode_then_gpu_crop_mirror_normalize_equals_the_cpu_pipeline() -> None:
    def build(x, d):
        images = fn.decoders.image(x, device=d)
        return fn.crop_mirror_normalize(
            images, device="gpu" if d == "mixed" else "cpu", crop=(24, 24),
            mean=[120.0, 110.0, 100.0], std=[60.0, 50.0, 40.0], mirror=fn.random.coin_flip(),
            dtype=types.FLOAT, output_layout="CHW")

    cpu, mixed = run_both(build, iters=2)
    for a, b in zip(cpu, mixed, strict=True):
        for x, y in zip(a[0], b[0], strict=True):
            assert x.shape == y.shape == (3, 24, 24)
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-5)


def test_gpu_operator_error_names_the_operator(monkeypatch) -> None:
    from stoker.operators.machinery.registry import REGISTRY

    def broken(ins, args, ctx):
        raise RuntimeError("kernel exploded")

    monkeypatch.setitem(REGISTRY, "flip", dataclasses.replace(REGISTRY["flip"],
                                                              gpu_kernel=broken))

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros((2, 2, 1), np.uint8)] * 2,
                               layout="HWC")
        return fn.flip(x.gpu())

    p = pipe()
    with pytest.raises(SampleError, match=r"fn.flip \(created at .*test_gpu_pipeline.py:\d+\) "
                                          r"failed on batch 0: RuntimeError: kernel exploded"):
        p.run()
    p.close()


def test_argument_input_on_the_gpu_is_a_graph_error() -> None:
    from stoker.errors import GraphError

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros((2, 2, 1), np.uint8)] * 2,
                               layout="HWC")
        flag = fn.random.coin_flip().gpu()
        return fn.flip(x.gpu(), horizontal=flag)

    with pytest.raises(GraphError, match="fn.flip: argument 'horizontal' must be a CPU node"):
        pipe()


def test_gpu_operators_in_a_cpu_only_pipeline_still_raise() -> None:
    from stoker.errors import GraphError

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=lambda: [np.zeros(2, np.uint8)] * 2).gpu()

    with pytest.raises(GraphError, match="needs a GPU, but the pipeline was created with "
                                         "device_id=None"):
        pipe().build()


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_twist_refuses_any_sample_of_a_ragged_batch_that_is_not_rgb(device) -> None:
    # The GPU operator checked sample 0 only: a 4-channel sample after it came out as RGB.
    samples = [np.zeros((4, 5, 3), np.uint8), np.zeros((6, 7, 4), np.uint8)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=0, exec_pipelined=False)
    def pipe():
        x = fn.external_source(source=lambda: samples, layout="HWC")
        return fn.hue(x.gpu() if device == "gpu" else x, hue=10.0)

    p = pipe()
    try:
        with pytest.raises(SampleError, match=r"fn.hue .*expects 3 channels \(RGB\), got 4"):
            p.run()
    finally:
        p.close()
