"""Proxies of a fast GPU path, checked on torch CPU tensors (issue 21, item 4): the GPU part
of the ResNet-50 train and val pipelines asks torch for the same number of operations at
batch 4 and batch 64 (no per-sample launches), never makes the host wait for the device,
and copies at most 2 things from host to device per batch (the pixels the CPU decoded,
one table of per-sample descriptors). Counted by ``gpu_stage_probe.StageProbe`` on the very
code the GPU runs. On CUDA the same counts are kernel launches and copies: a regression
like the one that made resizing cost 244 ms a batch (per-sample filter matrices, ~30
launches per image) fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gpu_stage_probe import StageProbe  # noqa: E402
from helpers import gradient_jpeg  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# ImageNet-like variety at a small scale: sizes and aspect ratios differ in every batch.
_SIZES = [(40 + 7 * (i % 5), 48 + 5 * (i % 7)) for i in range(16)]
JPEGS = [gradient_jpeg(h, w, seed=i) for i, (h, w) in enumerate(_SIZES)]


@pytest.fixture(autouse=True)
def gpu_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")


def _source(batch: int):
    return lambda i: [JPEGS[(i * batch + k) % len(JPEGS)] for k in range(batch)]


def train_pipe(batch: int, device: str = "mixed"):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=0, seed=5,
                  exec_pipelined=False)
    def pipe():
        jpegs = fn.external_source(source=_source(batch))
        images = fn.decoders.image_random_crop(jpegs, device=device, output_type=types.RGB)
        images = fn.resize(images, resize_x=24, resize_y=24)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                        mean=MEAN, std=STD, mirror=fn.random.coin_flip())
    return pipe()


def val_pipe(batch: int, device: str = "mixed"):
    @pipeline_def(batch_size=batch, num_threads=2, device_id=0, seed=5,
                  exec_pipelined=False)
    def pipe():
        jpegs = fn.external_source(source=_source(batch))
        images = fn.decoders.image(jpegs, device=device, output_type=types.RGB)
        images = fn.resize(images, resize_shorter=32)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                        crop=(24, 24), mean=MEAN, std=STD)
    return pipe()


def counts(make, batch: int):
    """The second batch's counts (the first one may set things up once)."""
    pipe = make(batch)
    with StageProbe() as probe:
        for _ in range(2):
            (out,) = pipe.run()
    pipe.close()
    assert out.as_torch().shape == (batch, 3, 24, 24)
    return probe.batches[1]


PIPES = {"train": train_pipe, "val": val_pipe}
# Measured before the batched stage (operators sample by sample): train 64 ops / 138 views
# / 15 uploads at batch 4, 841 / 2049 / 191 at batch 64; val 89 / 153 / 21 and 929 / 1121 /
# 225. With it, resize and crop_mirror_normalize apart: 40 ops / 57 views / 3 uploads at
# both sizes; fused on the GPU as on the CPU: 31 ops / 39 views / 2 uploads (the decoded
# pixels and one table of taps, windows and the normalization table); with the taps made
# on the device from a few numbers per sample (no per-sample work on the host but the
# geometry): 164 ops / 84 views / 2 uploads.


@pytest.mark.parametrize("name", PIPES)
def test_gpu_part_asks_the_same_number_of_torch_ops_whatever_the_batch(name):
    small, large = counts(PIPES[name], 4), counts(PIPES[name], 64)
    print(f"{name}: batch 4: {small.summary()}; batch 64: {large.summary()}")
    assert small.n_ops == large.n_ops, (small.ops - large.ops, large.ops - small.ops)
    assert large.n_ops <= 200
    assert small.n_views == large.n_views, (large.views - small.views)


@pytest.mark.parametrize("name", PIPES)
def test_gpu_part_never_waits_for_the_device(name):
    large = counts(PIPES[name], 64)
    assert large.syncs == []


@pytest.mark.parametrize("name", PIPES)
def test_gpu_part_copies_at_most_twice_from_host_to_device(name):
    large = counts(PIPES[name], 64)
    assert len(large.uploads) <= 2, large.uploads


def test_probe_sees_a_per_sample_stage_and_a_host_wait(monkeypatch):
    """The probe itself: a kernel that works sample by sample and reads a value back."""
    import dataclasses

    from stoker.operators.machinery.registry import REGISTRY

    def slow(ins, args, ctx):
        out = [t + 1 for t in ins[0]]
        float(out[0].sum().item())
        return torch.stack(out)

    monkeypatch.setitem(REGISTRY, "flip", dataclasses.replace(REGISTRY["flip"],
                                                              gpu_kernel=slow))

    def make(batch):
        @pipeline_def(batch_size=batch, num_threads=1, device_id=0, seed=1)
        def pipe():
            x = fn.external_source(source=lambda: [np.zeros((2, 2), np.float32)] * batch)
            return fn.flip(x.gpu())
        return pipe()

    found = []
    for batch in (2, 5):
        p = make(batch)
        with StageProbe() as probe:
            p.run()
        p.close()
        found.append(probe.batches[0])
    assert found[1].ops["add"] - found[0].ops["add"] == 3
    assert "aten._local_scalar_dense" in found[0].syncs


@pytest.mark.parametrize("name", PIPES)
def test_batched_gpu_part_matches_the_per_sample_gpu_operators(name, monkeypatch):
    """The batched stage (resize and crop_mirror_normalize fused into one resampling of
    the mirrored window) against the operators unfused and sample by sample (each checked
    against the CPU operator in test_gpu_ops*.py) on the same batches: the same random windows
    and mirrors; uint8 resize within 1 level, so normalized values within 1/std. (The CPU
    pipeline itself is no reference here: its compiler fuses the decoder and resize.)"""
    from stoker.kernels.gpu.image import geometry, resize

    def outputs():
        p = PIPES[name](16)
        got = [p.run()[0].as_cpu().as_array() for _ in range(2)]
        p.close()
        return np.stack(got)

    batched = outputs()
    from stoker.graph import fuse

    monkeypatch.setattr(fuse, "ENABLED", False)  # resize and crop_mirror_normalize apart
    monkeypatch.setattr(resize, "resample_batch", lambda *a: None)
    monkeypatch.setattr(geometry, "_cmn_batched", lambda *a: None)
    per_sample = outputs()
    assert batched.shape == per_sample.shape == (2, 16, 3, 24, 24)
    np.testing.assert_allclose(batched, per_sample, atol=1.01 / min(STD), rtol=0)
    assert np.mean(batched != per_sample) < 0.02


def test_ragged_uploads_and_padded_results_are_one_tensor_each():
    """A ragged upload is one tensor (one copy); a resize to per-sample sizes gives a
    Ragged over its padded result whose samples are the CPU operator's."""
    from gpu_ops_helpers import both

    from stoker.kernels.gpu.common import Ragged, upload_batch

    samples = [np.arange(h * 5 * 3, dtype=np.uint8).reshape(h, 5, 3) for h in (2, 4, 3)]
    up = upload_batch(samples, torch.device("cpu"))
    assert isinstance(up, Ragged) and up.base.numel() == sum(s.size for s in samples)
    for a, b in zip(samples, up, strict=True):
        assert np.array_equal(a, b.numpy())
    images = [np.random.default_rng(k).integers(0, 256, (20 + 3 * k, 30 - 2 * k, 3),
                                                 dtype=np.uint8) for k in range(4)]
    b = both(lambda x: fn.resize(x, resize_shorter=11.0), images, layouts=["HWC"])
    assert b.max_diff() <= 1
    assert isinstance(b.raw[0], Ragged)


def test_gpu_operators_see_the_pipelines_stream(monkeypatch):
    """GpuContext.stream is the runner's stream (None on CPU tensors; a CUDA stream that
    the runner makes current on a GPU, checked by test_gpu_pipeline_cuda.py)."""
    import dataclasses

    from stoker.operators.machinery.registry import REGISTRY

    seen = []
    real = REGISTRY["flip"].gpu_kernel

    def spy(ins, args, ctx):
        seen.append(ctx.stream)
        return real(ins, args, ctx)

    monkeypatch.setitem(REGISTRY, "flip", dataclasses.replace(REGISTRY["flip"],
                                                              gpu_kernel=spy))

    @pipeline_def(batch_size=2, num_threads=1, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)] * 2,
                               layout="HWC")
        return fn.flip(x.gpu())

    p = pipe()
    p.run()
    p.close()
    assert seen and all(s is None for s in seen)  # (prefetching may run a second batch)


def _fused_examples():
    from stoker.operators.machinery.registry import REGISTRY

    for k, example in enumerate(e for e in REGISTRY["_resize_normalize"].examples
                                if e.raises is None):
        for dense in (True, False):
            yield pytest.param(example, dense, id=f"{k}-{dense and 'dense'}")


@pytest.mark.parametrize(("example", "dense"), list(_fused_examples()))
def test_fused_resize_normalize_on_the_gpu_matches_the_cpu_kernel(example, dense):
    """The GPU form of the fused chain on its schema's examples (uint8 fused, float resize
    and padding windows through the two GPU kernels in turn): 1 level of the resize before
    normalization, so 1/std after it."""
    from gpu_ops_helpers import both

    from stoker.operators.machinery.registry import call_op

    args = {**example.args, "seed": 99}
    b = both(lambda *nodes: call_op("_resize_normalize", list(nodes), args),
             *example.inputs, dense=dense)
    std = np.asarray(args["normalize"]["std"], np.float64).reshape(-1)
    b.assert_within(1.01 * float(args["normalize"]["scale"]) / std.min() + 1e-3)
