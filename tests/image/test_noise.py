"""fn.noise.*: statistics over many pixels, DALI's value rules, and reproducibility.

Bounds are generous multiples of the standard error, so the tests do not flake; the seed is
fixed anyway. Rules measured on DALI 2.4: integer outputs round half away from zero and
saturate; salt/pepper default to the type's max/min (1/-1 for float) and share a draw
across the channel axis; shot noise without 'factor' uses 12 (not the documented 20).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import run_pipeline

from stoker import fn
from stoker.errors import ArgumentError, SampleError


def _run(build, batch_size, seed=3, threads=2):
    outs = run_pipeline(build, batch_size=batch_size, threads=threads, seed=seed)
    return [[np.array(s) for s in tl] for tl in outs]


def _apply(op, images, layout="HWC", seed=3, **kwargs):
    def build():
        return op(fn.external_source(source=lambda: images, layout=layout), **kwargs)

    return _run(build, len(images), seed=seed)[0]


FLAT = np.full((200, 200, 3), 100, np.uint8)


def _close(value, expected, stderr, k=5.0):
    assert abs(value - expected) <= k * stderr, f"{value} vs {expected} (stderr {stderr})"


def test_gaussian_noise_has_the_requested_moments_and_integer_values():
    (out,) = _apply(fn.noise.gaussian, [FLAT], mean=3.0, stddev=10.0)
    d = out.astype(np.float64) - 100
    assert out.dtype == np.uint8
    _close(d.mean(), 3.0, 10 / math.sqrt(d.size))
    _close(d.std(), 10.0, 10 / math.sqrt(2 * d.size))
    (f,) = _apply(fn.noise.gaussian, [FLAT.astype(np.float32)], stddev=100.0)
    assert f.dtype == np.float32 and f.min() < -100 and f.max() > 300  # floats: no clamp
    assert (f != np.round(f)).mean() > 0.99


def test_gaussian_noise_saturates_integers():
    (out,) = _apply(fn.noise.gaussian, [np.full((300, 300), 250, np.uint8)], layout="HW",
                    stddev=20.0)
    # P(250 + z * 20 >= 254.5) = P(z >= 0.225) = 0.411
    _close((out == 255).mean(), 0.411, math.sqrt(0.25 / out.size))
    assert out.max() == 255


def test_salt_and_pepper_default_values_per_type():
    for dtype, salt, pepper in [(np.uint8, 255, 0), (np.int16, 32767, -32768),
                                (np.int32, 2**31 - 1, -(2**31)), (np.float32, 1.0, -1.0)]:
        (out,) = _apply(fn.noise.salt_and_pepper, [FLAT.astype(dtype)], prob=0.5)
        assert out.dtype == dtype
        assert set(np.unique(out).tolist()) == {pepper, 100, salt}


def test_salt_and_pepper_probabilities_and_custom_values():
    (out,) = _apply(fn.noise.salt_and_pepper, [FLAT], prob=0.3, salt_vs_pepper=0.8,
                    salt_val=200.0, pepper_val=10.0)
    n = out[..., 0].size
    _close((out[..., 0] == 200).mean(), 0.24, math.sqrt(0.24 * 0.76 / n))
    _close((out[..., 0] == 10).mean(), 0.06, math.sqrt(0.06 * 0.94 / n))
    assert set(np.unique(out).tolist()) == {10, 100, 200}


def test_salt_and_pepper_shares_a_draw_across_channels_unless_per_channel():
    (shared,) = _apply(fn.noise.salt_and_pepper, [FLAT], prob=0.5)
    assert ((shared[..., 0] == shared[..., 1]) & (shared[..., 1] == shared[..., 2])).all()
    (chw,) = _apply(fn.noise.salt_and_pepper, [FLAT.transpose(2, 0, 1).copy()], layout="CHW",
                    prob=0.5)
    assert ((chw[0] == chw[1]) & (chw[1] == chw[2])).all()
    (own,) = _apply(fn.noise.salt_and_pepper, [FLAT], prob=0.5, per_channel=True)
    same = ((own[..., 0] == own[..., 1]) & (own[..., 1] == own[..., 2])).mean()
    p_same = 0.25 ** 3 + 0.25 ** 3 + 0.5 ** 3  # all salt, all pepper or all kept
    _close(same, p_same, math.sqrt(p_same * (1 - p_same) / FLAT[..., 0].size))


def test_shot_noise_is_poisson_scaled_by_factor():
    (out,) = _apply(fn.noise.shot, [FLAT], factor=4.0)
    v = out.astype(np.float64)
    assert (v % 4 == 0).all()  # Poisson counts times 4, below saturation
    _close(v.mean(), 100.0, math.sqrt(400 / v.size))
    _close(v.var(), 400.0, 400 * math.sqrt(2 / v.size) * 1.5)  # var = factor * x


def test_shot_noise_default_factor_is_dalis_12():
    (default,) = _apply(fn.noise.shot, [FLAT.astype(np.float32)])
    (twenty,) = _apply(fn.noise.shot, [FLAT.astype(np.float32)], factor=20.0)
    assert (default % 12 == 0).all() and (twenty % 20 == 0).all()
    _close(default.var(), 1200.0, 1200 * 0.05)


def test_shot_noise_edge_cases():
    (zero,) = _apply(fn.noise.shot, [FLAT], factor=0.0)
    assert (zero == 0).all()  # DALI's kernel scales its draw by 0
    (neg,) = _apply(fn.noise.shot, [np.full((10, 10), -5, np.int16)], layout="HW", factor=2.0)
    assert (neg == 0).all()  # negative intensities count as 0 photons


def test_noise_is_reproducible_and_differs_between_samples_and_seeds():
    batch = [FLAT[:50, :50]] * 3
    a = _apply(fn.noise.gaussian, batch, seed=7, stddev=5.0)
    b = _apply(fn.noise.gaussian, batch, seed=7, stddev=5.0)
    c = _apply(fn.noise.gaussian, batch, seed=8, stddev=5.0)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], a[1])
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int16])
def test_gaussian_noise_is_the_normal_draw_of_the_same_seed(dtype):
    # DALI's contract (its own tests check it): noise.gaussian(x, seed=s) is
    # x + random.normal(x, seed=s), the same stream, with constant or per-sample moments.
    images = [RAMP.astype(dtype), np.full((7, 5, 3), 100, dtype), RAMP[:3].astype(dtype)]

    def build():
        x = fn.external_source(source=lambda: images, layout="HWC")
        mean = fn.random.uniform(range=(-50.0, 50.0), seed=1)
        std = fn.random.uniform(range=(1.0, 10.0), seed=2)
        return (fn.noise.gaussian(x, mean=10.0, stddev=57.0, seed=12345),
                x + fn.random.normal(x, mean=10.0, stddev=57.0, seed=12345),
                fn.noise.gaussian(x, mean=mean, stddev=std, seed=99),
                x + fn.random.normal(x, mean=mean, stddev=std, seed=99))

    for _ in range(2):  # a second batch: new draws, the same on both sides
        noisy, added, noisy2, added2 = _run(build, len(images))
        for got, want in ((noisy, added), (noisy2, added2)):
            for g, w in zip(got, want, strict=True):
                if dtype == np.float32:
                    np.testing.assert_array_equal(g, w)
                else:  # rounded half away from zero and saturated, as DALI converts
                    ref = np.clip(np.trunc(w + np.copysign(0.5, w)), *_range(dtype))
                    np.testing.assert_array_equal(g, ref.astype(dtype))


def _range(dtype):
    info = np.iinfo(dtype)
    return info.min, info.max


RAMP = np.arange(150, dtype=np.float32).reshape(10, 5, 3) * 1.7


def test_per_sample_stddev():
    def build():
        x = fn.external_source(source=lambda: [FLAT.astype(np.float32)] * 2, layout="HWC")
        std = fn.external_source(source=lambda: [np.float32(1.0), np.float32(30.0)])
        return fn.noise.gaussian(x, stddev=std)

    (outs,) = _run(build, 2)
    _close((outs[0] - 100).std(), 1.0, 0.01)
    _close((outs[1] - 100).std(), 30.0, 0.3)


def test_noise_errors():
    with pytest.raises(ArgumentError, match="fn.noise.salt_and_pepper: argument 'prob' must be"):
        _apply(fn.noise.salt_and_pepper, [FLAT], prob=1.5)
    with pytest.raises(SampleError, match="input type float64 is not supported"):
        _apply(fn.noise.gaussian, [FLAT.astype(np.float64)])
