"""spectrogram, mel_filter_bank, mfcc and to_decibels against independent references: a
frame-by-frame float64 STFT, scipy's DCTs, the mel formulas by hand, numpy's log10."""

from __future__ import annotations

import math

import numpy as np
import pytest
from audio_cases import speech_like, sweep

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import Pipeline, fn
from stoker.errors import ArgumentError, SampleError
from stoker.kernels.cpu.audio.mel import hz_to_mel, mel_bank, mel_to_hz
from stoker.kernels.cpu.audio.spectrogram import frame_count, hann_window

scipy_fft = pytest.importorskip("scipy.fft")


def run(build, *batches, layouts=()):
    pipe = Pipeline(batch_size=len(batches[0]), num_threads=1, device_id=None)
    with pipe:
        nodes = [fn.external_source(source=[b], cycle=True,
                                    layout=layouts[i] if i < len(layouts) else None)
                 for i, b in enumerate(batches)]
        out = build(*nodes)
        pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
    pipe.build()
    got = pipe.run()
    return [[np.array(t.at(i)) for i in range(len(t))] for t in got], [t.layout() for t in got]


def stft_reference(x, nfft, win, step, window, power, center, reflect):
    """Frame by frame in float64: frame t starts at t * step in the padded signal."""
    x = x.astype(np.float64)
    if center:
        frames = len(x) // step + 1
        pad = win // 2
        padded = np.pad(x, (pad, pad + step + win), mode="reflect" if reflect else "constant")
    else:
        frames = int((len(x) - win) / step) + 1
        padded = np.concatenate([x, np.zeros(win)])
    out = np.empty((nfft // 2 + 1, frames))
    for t in range(frames):
        seg = padded[t * step:t * step + win] * window
        mag = np.abs(np.fft.rfft(seg, n=nfft))
        out[:, t] = mag ** power
    return out


SIGNALS = [speech_like(5000, 3), sweep(3001)]


@pytest.mark.parametrize("win, step, nfft", [(256, 128, None), (200, 80, 256), (63, 17, 100),
                                             (8, 3, 8), (1, 1, 3)])
@pytest.mark.parametrize("center, reflect", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("power", [1, 2])
def test_spectrogram_is_the_stft_of_dalis_frames(win, step, nfft, center, reflect, power):
    (out,), (layout,) = run(lambda x: fn.spectrogram(
        x, window_length=win, window_step=step, nfft=nfft, power=power,
        center_windows=center, reflect_padding=reflect), SIGNALS)
    assert layout == "ft"
    for x, got in zip(SIGNALS, out, strict=True):
        want = stft_reference(x, nfft or win, win, step, hann_window(win).astype(np.float64),
                              power, center, reflect)
        assert got.dtype == np.float32 and got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_dalis_hann_window_is_half_a_sample_off():
    for n in (8, 63, 512):
        w = hann_window(n).astype(np.float64)
        t = np.arange(n)
        assert np.allclose(w, 0.5 - 0.5 * np.cos(2 * np.pi * (t + 0.5) / n), atol=1e-7)
        assert np.allclose(w, w[::-1], atol=1e-7)  # symmetric, never exactly 0 at the ends
        assert w.min() > 0


def test_window_fn_and_tf_layout():
    window = np.linspace(0.1, 1.0, 32)
    (ft, tf), (lft, ltf) = run(lambda x: [
        fn.spectrogram(x, window_length=32, window_step=8, window_fn=list(window)),
        fn.spectrogram(x, window_length=32, window_step=8, window_fn=list(window),
                       layout="tf")], SIGNALS)
    assert (lft, ltf) == ("ft", "tf")
    for a, b, x in zip(ft, tf, SIGNALS, strict=True):
        assert np.array_equal(a.T, b)
        want = stft_reference(x, 32, 32, 8, window, 2, True, True)
        assert np.abs(a - want).max() <= 1e-5 * want.max()


def test_frame_counts_follow_dalis_rules():
    assert frame_count(1000, 64, 16, True) == 63
    assert frame_count(1024, 63, 16, True) == 65  # odd windows too: n // step + 1
    assert frame_count(100, 64, 16, False) == 3
    # C's truncating division: 30 samples, a 64 window and a 256 step still give a frame.
    assert frame_count(30, 64, 256, False) == 1
    assert frame_count(10, 64, 16, False) < 1
    (out,), _ = run(lambda x: fn.spectrogram(x, window_length=64, center_windows=False),
                    [SIGNALS[1][:30]])
    want = stft_reference(SIGNALS[1][:30], 64, 64, 256, hann_window(64), 2, False, True)
    assert out[0].shape == (33, 1) and np.allclose(out[0], want, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("shape", [(500, 1), (1, 500)])
def test_one_channel_signals_of_two_dimensions(shape):
    x = SIGNALS[0][:500].reshape(shape)
    (out,), _ = run(lambda s: fn.spectrogram(s, window_length=64), [x])
    (flat,), _ = run(lambda s: fn.spectrogram(s, window_length=64), [x.reshape(-1)])
    assert np.array_equal(out[0], flat[0])


@pytest.mark.parametrize("sample, match", [
    (np.zeros((100, 2), np.float32), "1-channel signal"),
    (np.zeros(100, np.float64), "expects float32"),
    (np.zeros(0, np.float32), "zero-length"),
    (np.zeros(10, np.float32), "shorter than one window"),
])
def test_spectrogram_bad_samples(sample, match):
    with pytest.raises(SampleError, match=match):
        run(lambda s: fn.spectrogram(s, window_length=64, window_step=16,
                                     center_windows=sample.size != 10), [sample])


# -- mel ------------------------------------------------------------------------------------------


def test_mel_scales_at_known_points():
    assert hz_to_mel(1000.0, htk=False) == pytest.approx(15.0)
    assert hz_to_mel(500.0, htk=False) == pytest.approx(7.5)
    assert hz_to_mel(6400.0, htk=False) == pytest.approx(15.0 + 27.0)
    assert hz_to_mel(700.0, htk=True) == pytest.approx(2595 * math.log10(2))
    for htk in (False, True):
        f = np.array([0.0, 300.0, 1000.0, 4000.0, 8000.0])
        assert np.allclose(mel_to_hz(hz_to_mel(f, htk), htk), f)


def naive_filter(nbins, sr, nfilter, m, low, high, htk, normalize):
    """Filter m by hand: a triangle over the FFT bins' frequencies with mel-spaced corners."""
    mels = np.linspace(float(hz_to_mel(low, htk)), float(hz_to_mel(high, htk)), nfilter + 2)
    left, mid, right = (float(mel_to_hz(mels[m + i], htk)) for i in range(3))
    w = np.zeros(nbins)
    for k in range(nbins):
        f = k * sr / (2 * (nbins - 1))
        if left < f <= mid:
            w[k] = (f - left) / (mid - left)
        elif mid < f < right:
            w[k] = (right - f) / (right - mid)
    return w * (2 / (right - left) if normalize else 1)


@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("normalize", [False, True])
def test_mel_filters_are_the_mel_spaced_triangles(htk, normalize):
    weights, bands = mel_bank(257, 16000.0, 40, 100.0, 7000.0, normalize, htk)
    for m in range(40):
        want = naive_filter(257, 16000.0, 40, m, 100.0, 7000.0, htk, normalize)
        assert np.allclose(weights[m], want, rtol=1e-5, atol=1e-7 * want.max())
        nz = np.flatnonzero(weights[m])
        assert bands[m, 0] == nz[0] and bands[m, 1] == nz[-1] + 1
    if not normalize:
        assert weights.max() <= 1.0


def test_mel_filter_bank_along_the_frequency_axis_of_any_layout():
    rng = np.random.default_rng(5)
    spec = np.abs(rng.standard_normal((129, 30))).astype(np.float32)
    weights, _ = mel_bank(129, 16000.0, 20, 0.0, 0.0, True, False)
    (ft,), (lay,) = run(lambda s: fn.mel_filter_bank(s, nfilter=20, sample_rate=16000.0),
                        [spec], layouts=("ft",))
    assert lay == "ft" and np.allclose(ft[0], weights @ spec, rtol=1e-5, atol=1e-7)
    (tf,), (lay,) = run(lambda s: fn.mel_filter_bank(s, nfilter=20, sample_rate=16000.0),
                        [np.ascontiguousarray(spec.T)], layouts=("tf",))
    assert lay == "tf" and np.allclose(tf[0], ft[0].T, rtol=1e-6, atol=1e-8)
    (bare,), _ = run(lambda s: fn.mel_filter_bank(s, nfilter=20, sample_rate=16000.0), [spec])
    assert np.array_equal(bare[0], ft[0])  # no layout: frequencies on the second-last axis
    batched = np.stack([spec, 2 * spec])  # three axes: 'cft'
    (cft,), _ = run(lambda s: fn.mel_filter_bank(s, nfilter=20, sample_rate=16000.0),
                    [batched], layouts=("cft",))
    assert np.allclose(cft[0][1], 2 * ft[0], rtol=1e-6)
    with pytest.raises(SampleError, match="no frequency axis"):
        run(lambda s: fn.mel_filter_bank(s), [spec], layouts=("ab",))


def test_mel_argument_errors():
    with pytest.raises(ArgumentError, match="must be below 'freq_high'"), \
            Pipeline(batch_size=1, device_id=None):
        fn.mel_filter_bank(fn.external_source(source=[[np.ones((5, 5), np.float32)]]),
                           freq_low=900.0, freq_high=800.0)


# -- mfcc -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
@pytest.mark.parametrize("normalize", [False, True])
def test_mfcc_is_scipys_dct_halved_or_orthonormal(dct_type, normalize):
    if dct_type == 1 and normalize:
        pytest.skip("refused (as in DALI)")
    rng = np.random.default_rng(dct_type)
    mel = rng.standard_normal((24, 13)).astype(np.float32)
    (out,), _ = run(lambda m: fn.mfcc(m, n_mfcc=10, dct_type=dct_type, normalize=normalize),
                    [mel])
    want = scipy_fft.dct(mel.astype(np.float64), type=dct_type, axis=0,
                         norm="ortho" if normalize else None)[:10]
    if not normalize:
        want = want / 2  # DALI's unnormalized DCT is half of scipy's
    assert np.allclose(out[0], want, rtol=1e-5, atol=1e-5)


def test_mfcc_lifter_axis_and_clamped_count():
    rng = np.random.default_rng(3)
    mel = rng.standard_normal((13, 24)).astype(np.float32)
    (lift, axis1, many), _ = run(lambda m: [fn.mfcc(m, n_mfcc=8, lifter=22.0),
                                            fn.mfcc(m, n_mfcc=5, axis=1),
                                            fn.mfcc(m, n_mfcc=40)], [mel])
    base = scipy_fft.dct(mel.astype(np.float64), type=2, axis=0)[:8] / 2
    i = np.arange(8)[:, None]
    assert np.allclose(lift[0], base * (1 + 11.0 * np.sin(np.pi * (i + 1) / 22.0)),
                       rtol=1e-5, atol=1e-5)
    assert np.allclose(axis1[0], scipy_fft.dct(mel.astype(np.float64), axis=1)[:, :5] / 2,
                       rtol=1e-5, atol=1e-5)
    assert many[0].shape == (13, 24)  # n_mfcc is cut to the axis' 13 coefficients


def test_mfcc_errors():
    with pytest.raises(ArgumentError, match="not supported for dct_type=1"), \
            Pipeline(batch_size=1, device_id=None):
        fn.mfcc(fn.external_source(source=[[np.ones((5, 5), np.float32)]]), dct_type=1,
                normalize=True)
    with pytest.raises(SampleError, match="'axis' 2 is out of range"):
        run(lambda m: fn.mfcc(m, axis=2), [np.ones((5, 5), np.float32)])


# -- to_decibels ----------------------------------------------------------------------------------


def test_decibels_are_log10_of_the_ratio_clamped_at_the_cutoff():
    rng = np.random.default_rng(2)
    x = (np.abs(rng.standard_normal((20, 30))) ** 2).astype(np.float32)
    x[0, :5] = 0
    (default, asr, amp), _ = run(lambda s: [
        fn.to_decibels(s),
        fn.to_decibels(s, multiplier=math.log(10), reference=1.0, cutoff_db=math.log(1e-20)),
        fn.to_decibels(s, multiplier=20.0, reference=2.0, cutoff_db=-30.0)], [x])
    ref = x.astype(np.float64)
    assert np.allclose(default[0], 10 * np.log10(np.maximum(ref / ref.max(), 1e-20)),
                       atol=2e-5)
    assert np.allclose(asr[0], np.log(np.maximum(ref, 1e-20)), atol=2e-5)
    assert np.allclose(amp[0], np.maximum(20 * np.log10(np.maximum(ref / 2, 1e-30)), -30.0),
                       atol=2e-5)


def test_decibels_of_silence_and_the_reference_rule():
    (out,), _ = run(lambda s: fn.to_decibels(s, cutoff_db=-80.0), [np.zeros((3, 4), np.float32)])
    assert np.allclose(out[0], -80.0)
    with pytest.raises(ArgumentError, match="'reference' must not be 0"), \
            Pipeline(batch_size=1, device_id=None):
        fn.to_decibels(fn.external_source(source=[[np.ones(3, np.float32)]]), reference=0.0)
