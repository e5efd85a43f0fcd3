"""The batched GPU kernels (one gather for the batch: ``kernels/gpu/image/window_batch.py``,
``resample_batch.py``) on ragged batches, given as lists of tensors and as one tensor
(``common.Ragged``, what an upload makes), with per-sample arguments and windows that
leave their images, against the CPU operators (torch CPU tensors)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gpu_ops_helpers  # noqa: E402
from gpu_ops_helpers import both  # noqa: E402

from stoker import fn, types  # noqa: E402
from stoker.kernels.gpu.common import Ragged, upload_batch  # noqa: E402

_RNG = np.random.default_rng(7)
IMAGES = [_RNG.integers(0, 256, (9 + 3 * k, 14 - 2 * k, 3), dtype=np.uint8) for k in range(5)]


@pytest.fixture(params=["list", "ragged"])
def form(request, monkeypatch):
    """Ragged inputs as a list of tensors, or as one Ragged tensor."""
    if request.param == "ragged":
        real = gpu_ops_helpers._to_torch

        def to_torch(samples, dense):
            if len({s.shape for s in samples}) > 1:
                out = upload_batch(samples, torch.device("cpu"))
                assert isinstance(out, Ragged)
                return out
            return real(samples, dense)

        monkeypatch.setattr(gpu_ops_helpers, "_to_torch", to_torch)
    return request.param


@pytest.mark.parametrize("layout", ["HWC", "CHW"])
def test_flip_per_sample_flags(form, layout):
    images = IMAGES if layout == "HWC" else [np.ascontiguousarray(x.transpose(2, 0, 1))
                                             for x in IMAGES]
    b = both(lambda x: fn.flip(x, horizontal=fn.random.coin_flip(seed=1),
                               vertical=fn.random.coin_flip(seed=2)), images,
             layouts=[layout], dense=False)
    b.assert_exact()


@pytest.mark.parametrize("policy", ["pad", "trim_to_shape"])
def test_crop_windows_leaving_the_images(form, policy):
    b = both(lambda x: fn.crop(x, crop=(12, 11), crop_pos_x=fn.random.uniform(range=(0, 1)),
                               crop_pos_y=0.8, out_of_bounds_policy=policy,
                               fill_values=[7, 8, 9]),
             IMAGES, layouts=["HWC"], dense=False)
    b.assert_exact()


@pytest.mark.parametrize("policy", ["pad", "error"])
def test_crop_mirror_normalize_per_sample_mirror(form, policy):
    crop = (12, 11) if policy == "pad" else (6, 5)
    b = both(lambda x: fn.crop_mirror_normalize(
        x, crop=crop, mirror=fn.random.coin_flip(seed=4), mean=[10.0, 20.0, 30.0],
        std=[2.0, 3.0, 4.0], out_of_bounds_policy=policy, fill_values=[1.0, 2.0, 3.0],
        dtype=types.FLOAT, output_layout="CHW"), IMAGES, layouts=["HWC"], dense=False)
    b.assert_exact()


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR,
                                    types.INTERP_LANCZOS3])
def test_resize_ragged_inputs_and_outputs(form, interp):
    b = both(lambda x: fn.resize(x, resize_shorter=7.0, interp_type=interp), IMAGES,
             layouts=["HWC"], dense=False)
    assert b.max_diff() <= (0 if interp == types.INTERP_NN else 1)


DENSE = [x[:8, :6].astype(np.float32) * 1.5 for x in IMAGES]


def _uniform(lo, hi, shape):
    return fn.random.uniform(range=(lo, hi), shape=shape, seed=5)


@pytest.mark.parametrize("kwargs", [
    {"batch": True, "axes": [0, 1], "ddof": 1, "epsilon": 0.5},
    {"mean": 100.0, "stddev": 50.0},
    {"axis_names": "HW", "scale": 64.0, "shift": 128.0, "dtype": types.UINT8},
    {"shift": 0.25, "axes": [2]},
], ids=["batch", "constants", "uint8", "channels"])
def test_normalize_dense_batch_at_once(kwargs):
    b = both(lambda x: fn.normalize(x, **kwargs), DENSE, layouts=["HWC"])
    assert isinstance(b.raw[0], torch.Tensor)
    if b.cpu[0][0].dtype.kind in "iu":
        assert b.assert_within(1) <= 1
    else:
        b.assert_within(1e-6, rtol=1e-6)


def test_normalize_dense_batch_given_per_sample_statistics():
    for build in (lambda x: fn.normalize(x, mean=_uniform(50, 150, (1, 1, 3)), axes=[0, 1]),
                  lambda x: fn.normalize(x, stddev=_uniform(20, 60, (1, 1, 1)))):
        b = both(build, DENSE, layouts=["HWC"])
        b.assert_within(1e-6, rtol=1e-6)
    flat = [np.full((4, 5, 3), 7, np.uint8)] * 2
    b = both(lambda x: fn.normalize(x, shift=0.25), flat, layouts=["HWC"])
    assert (b.gpu[0][0] == 0.25).all()


@pytest.mark.parametrize("build", [
    lambda x: fn.brightness_contrast(x, brightness=fn.random.uniform(range=(0.5, 1.5), seed=3),
                                     contrast=1.3),
    lambda x: fn.hsv(x, hue=fn.random.uniform(range=(-30, 30), seed=4), saturation=1.2),
    lambda x: fn.color_twist(x, brightness=1.1, contrast=0.9, hue=10.0, saturation=0.8),
    lambda x: fn.color_space_conversion(x, image_type=types.RGB, output_type=types.YCbCr),
    lambda x: fn.color_space_conversion(x, image_type=types.RGB, output_type=types.BGR),
    lambda x: fn.color_space_conversion(x, image_type=types.RGB, output_type=types.GRAY),
], ids=["brightness_contrast", "hsv", "color_twist", "ycbcr", "bgr", "gray"])
def test_color_operators_on_ragged_batches(form, build):
    b = both(build, IMAGES, layouts=["HWC"], dense=False)
    b.assert_exact()
    if form == "ragged" and b.gpu[0][0].shape[-1] == 3:
        assert isinstance(b.raw[0], Ragged)  # all pixels at once


def test_resize_in_groups_when_the_windows_exceed_the_budget(form, monkeypatch):
    """A batch whose padded windows would be too large is resampled in groups of similar
    window sizes, with the same results."""
    from stoker.kernels.gpu.image import resample_batch

    want = both(lambda x: fn.resize(x, size=[6, 5]), IMAGES, layouts=["HWC"], dense=False)
    monkeypatch.setattr(resample_batch, "WINDOW_BUDGET", 2 * 12 * 14 * 3)
    shapes = np.array([x.shape[:2] for x in IMAGES])
    assert len(resample_batch._groups(shapes[:, 0], shapes[:, 1], 3)) > 1
    got = both(lambda x: fn.resize(x, size=[6, 5]), IMAGES, layouts=["HWC"], dense=False)
    for a, b in zip(want.gpu[0], got.gpu[0], strict=True):
        assert np.array_equal(a, b)
    assert got.max_diff() <= 1
