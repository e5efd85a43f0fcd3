"""fn.audio_resample and the resampling kernel: DALI's windowed sinc, checked against the
formula itself, against DALI's per-tap arithmetic (resample_oracle.py, which matches DALI's
recordings) and for its documented behaviour; soxr as stoker's band-limited extension."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from resample_oracle import resample_like_dali

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import Pipeline, fn, types
from stoker.errors import ArgumentError, SampleError
from stoker.kernels.cpu.audio.resample import (
    lobes_for_quality,
    resample_dali,
    resample_soxr,
    resampled_length,
)

RNG = np.random.default_rng(11)
NOISE = (0.3 * RNG.standard_normal(3000)).astype(np.float32)
T = np.arange(4000) / 16000
SWEEP = (0.5 * np.sin(2 * np.pi * (50 * T + 3900 * T * T / T[-1]))).astype(np.float32)


def run(build, *batches, batch_size=None):
    n = batch_size or len(batches[0])
    pipe = Pipeline(batch_size=n, num_threads=1, device_id=None)
    with pipe:
        nodes = [fn.external_source(source=[b], cycle=True) for b in batches]
        out = build(*nodes)
        pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
    pipe.build()
    got = pipe.run()
    return [[np.array(t.at(i)) for i in range(len(t))] for t in got]


def windowed_sinc(x: np.ndarray, in_rate: float, out_rate: float, quality: float) -> np.ndarray:
    """The formula DALI tabulates, evaluated exactly (float64): output j at input position
    j * in / out, taps sinc(k - pos) * hann((k - pos) / lobes) within lobes samples."""
    lobes = lobes_for_quality(quality)
    n_out = resampled_length(len(x), in_rate, out_rate)
    out = np.zeros(n_out)
    for j in range(n_out):
        pos = j * in_rate / out_rate
        k = np.arange(max(0, int(np.ceil(pos)) - lobes), min(len(x), int(np.ceil(pos)) + lobes))
        d = k - pos
        out[j] = np.dot(x[k], np.sinc(d) * 0.5 * (1 + np.cos(np.pi * d / lobes)))
    return out


def test_quality_maps_to_lobes_as_dali_documents():
    assert [lobes_for_quality(q) for q in (0, 10, 50, 80, 100)] == [3, 3, 16, 41, 64]


@pytest.mark.parametrize("rates", [(16000, 8000), (16000, 22050), (44100, 16000),
                                   (8000, 16000), (16000, 13600)])
@pytest.mark.parametrize("quality", [0, 50, 100])
def test_kernel_is_the_windowed_sinc_and_dalis_arithmetic(rates, quality):
    x = SWEEP if rates[0] != 44100 else NOISE
    ours = resample_dali(x, *rates, quality)
    exact = windowed_sinc(x.astype(np.float64), *rates, quality)
    # The table (32 points per sample, linear interpolation) and float32 positions keep
    # DALI's values within a few 1e-3 of the formula's (sweeps near 8 kHz, 3 lobes).
    assert np.abs(ours - exact).max() < 5e-3
    # DALI's own arithmetic (per-tap table positions): the documented 1e-5.
    assert np.abs(ours - resample_like_dali(x, *rates, quality)).max() < 1e-5


def test_positions_drift_in_float32_as_dalis_do():
    # Position j is j * in / out, advanced in float32 within blocks of 256 outputs: a double
    # position (the formula) differs by up to 1e-3 at 16 -> 22.05 kHz; DALI's is kept.
    x = SWEEP
    ours = resample_dali(x, 16000, 22050, 50)
    assert np.abs(ours - resample_like_dali(x, 16000, 22050, 50)).max() < 1e-5
    assert np.abs(ours - windowed_sinc(x.astype(np.float64), 16000, 22050, 50)).max() > 1e-4


def _tone_energy(x: np.ndarray, rate: float, freq: float) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    freqs = np.fft.rfftfreq(len(x), 1 / rate)
    band = np.abs(freqs - freq) < 50
    return float(spectrum[band].max() / spectrum.max())


def test_downsampling_does_not_low_pass_but_soxr_does():
    # A 7 kHz tone resampled from 16 to 8 kHz: DALI's kernel is not widened, so the tone
    # folds back to 1 kHz at full strength; libsoxr filters it out.
    t = np.arange(16000) / 16000
    tone = (0.5 * np.sin(2 * np.pi * 7000 * t)).astype(np.float32)
    dali = resample_dali(tone, 16000, 8000, 50)
    soxr = resample_soxr(tone, 16000, 8000, "soxr_hq")
    assert len(dali) == len(soxr) == 8000
    assert _tone_energy(dali, 8000, 1000) > 0.9
    assert np.abs(soxr[200:-200]).max() < 1e-3


def test_soxr_keeps_a_tone_below_nyquist_and_dalis_lengths():
    t = np.arange(8000) / 16000
    tone = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    for method in ("soxr_hq", "soxr_vhq"):
        out = resample_soxr(tone, 16000, 22050, method)
        assert len(out) == resampled_length(8000, 16000, 22050)
        ref = 0.5 * np.sin(2 * np.pi * 1000 * np.arange(len(out)) / 22050)
        assert np.abs(out[500:-500] - ref[500:-500]).max() < 1e-3


def test_operator_lengths_float32_arguments_and_channels():
    stereo = np.stack([SWEEP, 0.5 * SWEEP[::-1]], 1)
    out = run(lambda x: [fn.audio_resample(x, scale=0.37),
                         fn.audio_resample(x, in_rate=16000.0, out_rate=22050.0),
                         fn.audio_resample(x, out_length=1234)], [stereo])
    # scale is DALI's float32 0.37 (0.3700000048...): ceil(4000 * that) = 1481.
    assert [o[0].shape for o in out] == [(1481, 2), (5513, 2), (1234, 2)]
    for ch in range(2):  # channels resample like mono signals
        mono = resample_dali(stereo[:, ch], 16000, 22050, 50)
        assert np.abs(out[1][0][:, ch] - mono).max() < 1e-6


def test_per_sample_rates_and_integer_types():
    x16 = (SWEEP * 20000).astype(np.int16)
    scales = [np.float32(0.5), np.float32(1.25)]
    (out,) = run(lambda x, s: fn.audio_resample(x, scale=s, quality=0.0), [x16, x16[:1000]],
                 scales)
    assert out[0].dtype == np.int16 and out[0].shape == (2000,) and out[1].shape == (1250,)
    # Integers are normalized (v / 32767) and back: at an integer ratio the taps land on
    # the samples, so the samples come back.
    assert np.abs(out[0].astype(int) - x16[::2]).max() <= 1
    (as_float,) = run(lambda x: fn.audio_resample(x, scale=1.0, dtype=types.FLOAT,
                                                  quality=0.0), [x16])
    assert np.allclose(as_float[0], x16 / 32767, atol=1e-6)
    # Unsigned outputs are resampled in [0, 1]: silence is mid-scale (127.5 -> 128).
    (u8,) = run(lambda x: fn.audio_resample(x, scale=1.0, dtype=types.UINT8, quality=0.0),
                [np.zeros(600, np.float32)])
    assert set(np.unique(u8[0][50:-50])) <= {127, 128}


def test_resampler_argument_selects_soxr():
    t = np.arange(16000) / 16000
    tone = (0.5 * np.sin(2 * np.pi * 7000 * t)).astype(np.float32)
    (dali, soxr) = run(lambda x: [fn.audio_resample(x, scale=0.5),
                                  fn.audio_resample(x, scale=0.5, resampler="soxr_hq")], [tone])
    assert _tone_energy(dali[0], 8000, 1000) > 0.9
    assert np.abs(soxr[0][200:-200]).max() < 1e-3


@pytest.mark.parametrize("kwargs, error, match", [
    ({"in_rate": 16000.0}, ArgumentError, "must be given together"),
    ({"scale": 0.5, "out_length": 4}, ArgumentError, "give exactly one of"),
    ({}, ArgumentError, "give exactly one of"),
    ({"scale": 0.5, "quality": -1.0}, ArgumentError, r"'quality' must be in \[0, 100\]"),
    ({"scale": 0.5, "resampler": "sinc"}, ArgumentError, "'resampler' must be one of"),
])
def test_bad_arguments_fail_at_the_call(kwargs, error, match):
    with pytest.raises(error, match=match), Pipeline(batch_size=1, device_id=None):
        fn.audio_resample(fn.external_source(source=[[NOISE]]), **kwargs)


@pytest.mark.parametrize("sample, match", [
    (np.zeros((2, 3, 4), np.float32), "expects time series"),
    (np.zeros(10, np.float64), "cannot resample samples of type float64"),
])
def test_bad_samples_fail_naming_the_operator(sample, match):
    with pytest.raises(SampleError, match=f"fn.audio_resample.*{match}"):
        run(lambda x: fn.audio_resample(x, scale=0.5), [sample])


def test_empty_and_zero_length_outputs():
    (out,) = run(lambda x: fn.audio_resample(x, scale=0.5), [np.zeros(0, np.float32)])
    assert out[0].shape == (0,)
    (out,) = run(lambda x: fn.audio_resample(x, out_length=0), [NOISE])
    assert out[0].shape == (0,)


def test_experimental_name_is_an_alias_that_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (out,) = run(lambda x: fn.experimental.audio_resample(x, scale=0.5), [NOISE])
    assert any("audio_resample" in str(w.message) for w in caught)
    assert out[0].shape == (1500,)
