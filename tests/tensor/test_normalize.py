"""fn.normalize against numpy: (x - mean) / sqrt(var + epsilon) * scale + shift.

DALI 2.4 rules (measured): default axes are all axes; a given mean centers the computed
variance; 'ddof' divides by N - ddof; epsilon applies to given stddev too; constant regions
give 'shift'; integer outputs round half away from zero and saturate; batch=True pools
every sample (non-reduced extents must agree).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_pipeline

from stoker import fn, types
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(6)
A = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
B = RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8)


def _run(build, batch_size):
    return [[np.array(s) for s in tl] for tl in run_pipeline(build, batch_size=batch_size)]


def _norm(images, layout="HWC", **kwargs):
    def build():
        return fn.normalize(fn.external_source(source=lambda: images, layout=layout), **kwargs)

    return _run(build, len(images))[0]


def _ref(x, axes=None, ddof=0, eps=0.0, scale=1.0, shift=0.0, mean=None, std=None):
    x = x.astype(np.float64)
    m = x.mean(axis=axes, keepdims=True) if mean is None else mean
    if std is None:
        n = x.size if axes is None else np.prod([x.shape[a] for a in axes])
        var = ((x - m) ** 2).sum(axis=axes, keepdims=True) / (n - ddof)
    else:
        var = std ** 2
    return (x - m) / np.sqrt(var + eps) * scale + shift


@pytest.mark.parametrize("kwargs,ref", [
    ({}, {}),
    ({"axes": [0, 1]}, {"axes": (0, 1)}),
    ({"axis_names": "HW"}, {"axes": (0, 1)}),
    ({"axis_names": "C"}, {"axes": (2,)}),
    ({"axes": [0, 2]}, {"axes": (0, 2)}),
    ({"ddof": 1}, {"ddof": 1}),
    ({"epsilon": 100.0}, {"eps": 100.0}),
    ({"scale": 64.0, "shift": 128.0}, {"scale": 64.0, "shift": 128.0}),
    ({"mean": 100.0}, {"mean": 100.0}),
    ({"mean": 100.0, "ddof": 1}, {"mean": 100.0, "ddof": 1}),
    ({"stddev": 50.0}, {"std": 50.0}),
    ({"stddev": 2.0, "epsilon": 5.0, "mean": 0.0}, {"std": 2.0, "eps": 5.0, "mean": 0.0}),
])
def test_normalize_matches_numpy(kwargs, ref):
    outs = _norm([A, B], **kwargs)
    for x, out in zip([A, B], outs, strict=True):
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, _ref(x, **ref), rtol=1e-5, atol=1e-4)


def test_normalize_float_and_integer_inputs():
    for x in (A.astype(np.float32) / 255, A.astype(np.int16) - 300, A.astype(np.int8)):
        (out,) = _norm([x], axes=[0, 1])
        np.testing.assert_allclose(out, _ref(x, axes=(0, 1)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [types.UINT8, types.INT8, types.INT16, types.UINT16,
                                   types.INT32])
def test_integer_outputs_round_half_away_and_saturate(dtype):
    (out,) = _norm([A], scale=64.0, shift=100.0, dtype=dtype)
    ref = _ref(A, scale=64.0, shift=100.0)
    info = np.iinfo(types.to_numpy(dtype))
    np.testing.assert_array_equal(out, np.clip(np.trunc(ref + np.copysign(0.5, ref)),
                                               info.min, info.max))
    x = np.arange(-10, 11, dtype=np.float32).reshape(1, 21, 1)
    (halves,) = _norm([x], mean=0.0, stddev=4.0, dtype=types.INT16)
    assert halves.reshape(-1)[[0, 2, 8, 12, 18, 20]].tolist() == [-3, -2, -1, 1, 2, 3]


def test_constant_regions_give_shift_and_zero_stddev_gives_inf():
    const = np.full((3, 3, 3), 7, np.uint8)
    (out,) = _norm([const], scale=3.0, shift=2.0)
    assert (out == 2.0).all()
    half = np.concatenate([np.full((3, 3, 1), 7, np.uint8), A[:3, :3, :2]], axis=2)
    (per_c,) = _norm([half], axis_names="HW", shift=1.0)
    assert (per_c[..., 0] == 1.0).all()
    (inf,) = _norm([A], stddev=0.0)
    assert np.isinf(inf[A.astype(float) != A.mean()]).all()


def test_batch_normalization_pools_all_samples():
    pooled = np.concatenate([A.reshape(-1, 3), B.reshape(-1, 3)]).astype(np.float64)
    outs = _norm([A, B], batch=True)
    for x, out in zip([A, B], outs, strict=True):
        np.testing.assert_allclose(out, (x - pooled.mean()) / pooled.std(), rtol=1e-5,
                                   atol=1e-5)
    outs = _norm([A, B], batch=True, axes=[0, 1], ddof=1)
    for x, out in zip([A, B], outs, strict=True):
        ref = (x - pooled.mean(0)) / pooled.std(0, ddof=1)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    dense = [A, A[::-1].copy()]
    both = np.concatenate([d.reshape(-1, 3) for d in dense]).astype(np.float64)
    for x, out in zip(dense, _norm(dense, batch=True, axis_names="HW"), strict=True):
        np.testing.assert_allclose(out, (x - both.mean(0)) / both.std(0), rtol=1e-5, atol=1e-5)


def test_per_sample_mean_tensors_and_scalars():
    means = [np.array(x.mean((0, 1)), np.float32).reshape(1, 1, 3) for x in (A, B)]

    def build():
        x = fn.external_source(source=lambda: [A, B], layout="HWC")
        m = fn.external_source(source=lambda: means)
        s = fn.external_source(source=lambda: [np.float32(10), np.float32(20)])
        return fn.normalize(x, axes=[0, 1], mean=m), fn.normalize(x, stddev=s, mean=5.0)

    tensor_mean, scalar_std = _run(build, 2)
    for x, m, out in zip([A, B], means, tensor_mean, strict=True):
        np.testing.assert_allclose(out, _ref(x, axes=(0, 1), mean=m.astype(np.float64)),
                                   rtol=1e-5, atol=1e-5)
    for x, s, out in zip([A, B], (10.0, 20.0), scalar_std, strict=True):
        np.testing.assert_allclose(out, (x - 5.0) / s, rtol=1e-6)


def test_normalize_errors():
    with pytest.raises(ArgumentError, match="'axes' and 'axis_names' exclude each other"):
        _norm([A], axes=[0], axis_names="H")
    with pytest.raises(ArgumentError, match="'axes' must name at least one axis"):
        _norm([A], axes=[])
    with pytest.raises(ArgumentError, match="'axes' must not be negative"):
        _norm([A], axes=[-1])
    with pytest.raises(SampleError, match="'axis_names' 'D' names axes that layout 'HWC'"):
        _norm([A], axis_names="D")
    with pytest.raises(SampleError, match="needs equal non-reduced extents"):
        _norm([A, B], batch=True, axes=[2])
    with pytest.raises(SampleError, match="'axes' \\[3\\] out of range"):
        _norm([A], axes=[3])
    with pytest.raises(SampleError, match="input type float64 is not supported"):
        _norm([A.astype(np.float64)])

    def build():
        x = fn.external_source(source=lambda: [A], layout="HWC")
        m = fn.external_source(source=lambda: [np.float32(1)])
        return fn.normalize(x, batch=True, mean=m)

    # (at build, as DALI refuses it)
    with pytest.raises(ArgumentError, match="takes 'mean' and 'stddev' only as constants"):
        _run(build, 1)
