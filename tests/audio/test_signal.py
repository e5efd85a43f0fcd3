"""preemphasis_filter and nonsilent_region against independent references (scipy's lfilter,
a float64 moving average) and DALI's edge rules."""

from __future__ import annotations

import numpy as np
import pytest
from audio_cases import speech_like
from helpers import run_batches as run

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import Pipeline, fn, types
from stoker.errors import ArgumentError, SampleError

signal = pytest.importorskip("scipy.signal")


SPEECH = [speech_like(4000, 7), speech_like(2500, 8)]


def test_preemphasis_is_a_first_order_fir_filter():
    (out,) = run(lambda x: fn.preemphasis_filter(x, border="zero", preemph_coeff=0.97), SPEECH)
    for x, y in zip(SPEECH, out, strict=True):
        assert np.allclose(y, signal.lfilter([1.0, -0.97], [1.0], x.astype(np.float64)),
                           atol=1e-6)


@pytest.mark.parametrize("border, before", [("clamp", 1.0), ("zero", 0.0), ("reflect", 2.0)])
def test_preemphasis_borders(border, before):
    x = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    (out,) = run(lambda s: fn.preemphasis_filter(s, border=border, preemph_coeff=0.5), [x])
    assert np.array_equal(out[0], [1.0 - 0.5 * before, 1.5, 3.0, 6.0])


def test_preemphasis_per_sample_coefficient_types_and_shapes():
    x = np.arange(1, 6, dtype=np.float32)
    coeffs = [np.float32(0.5), np.float32(0.0)]
    (out,) = run(lambda s, c: fn.preemphasis_filter(s, preemph_coeff=c), [x, x], coeffs)
    assert np.allclose(out[0], [0.5, 1.5, 2.0, 2.5, 3.0]) and np.array_equal(out[1], x)
    # integer outputs are rounded and saturated, not scaled
    (i16,) = run(lambda s: fn.preemphasis_filter(s, dtype=types.INT16, preemph_coeff=5.0),
                 [np.array([10000, 20000, -20000, 1], np.int16)])
    assert np.array_equal(i16[0], [-32768, -30000, -32768, 32767])
    # a 2-D sample is filtered as its flat values (DALI's behaviour)
    pair = np.stack([x, 10 * x], 1)
    (flat,) = run(lambda s: fn.preemphasis_filter(s, preemph_coeff=0.5), [pair])
    (want,) = run(lambda s: fn.preemphasis_filter(s, preemph_coeff=0.5), [pair.reshape(-1)])
    assert flat[0].shape == (5, 2) and np.array_equal(flat[0].reshape(-1), want[0])
    (empty,) = run(lambda s: fn.preemphasis_filter(s), [np.zeros(0, np.float32)])
    assert empty[0].shape == (0,)


def moving_power(x: np.ndarray, window: int) -> np.ndarray:
    return np.convolve(x.astype(np.float64) ** 2, np.ones(window), "valid") / window


def nonsilent_reference(x, cutoff_db, window, reference=None):
    window = min(window, len(x))
    power = moving_power(x, window)
    ref = power.max() if reference is None else reference
    loud = np.flatnonzero(power >= ref * 10 ** (cutoff_db / 10))
    return (int(loud[0]), int(loud[-1]) + window - int(loud[0])) if loud.size else (0, 0)


@pytest.mark.parametrize("cutoff_db, window", [(-60.0, 2048), (-30.0, 256), (-15.0, 512),
                                               (-10.0, 64)])
def test_nonsilent_region_finds_the_loud_windows(cutoff_db, window):
    # noise under everything: no threshold is ever met by float rounding alone
    xs = [s + np.float32(1e-4) * np.random.default_rng(1).standard_normal(len(s))
          .astype(np.float32) for s in SPEECH]
    begin, length = run(lambda s: fn.nonsilent_region(s, cutoff_db=cutoff_db,
                                                      window_length=window), xs)
    for x, b, n in zip(xs, begin, length, strict=True):
        assert b.dtype == np.int32 and b.shape == () and n.shape == ()
        assert (int(b), int(n)) == nonsilent_reference(x, cutoff_db, window)


def test_nonsilent_region_edge_rules():
    silent = np.zeros(5000, np.float32)
    short = np.ones(100, np.float32)
    begin, length = run(lambda s: fn.nonsilent_region(s), [silent, short])
    # all silent: the reference power is 0, so every window reaches it (DALI: the whole
    # signal); a signal shorter than the window uses one window of its own length
    assert [int(v) for v in begin] == [0, 0] and [int(v) for v in length] == [5000, 100]
    quiet = np.zeros(3000, np.float32)
    quiet[1000:1010] = 1e-3
    begin, length = run(lambda s: fn.nonsilent_region(s, reference_power=1.0,
                                                      window_length=64,
                                                      reset_interval=128), [quiet])
    assert (int(begin[0]), int(length[0])) == (0, 0)  # nothing reaches 1e-6 of 1.0
    begin, length = run(lambda s: fn.nonsilent_region(s), [np.zeros(0, np.float32)])
    assert (int(begin[0]), int(length[0])) == (0, 0)


def test_nonsilent_region_of_integer_signals_is_exact():
    x = (np.concatenate([np.zeros(1000), np.ones(300), np.zeros(700)]) * 1000).astype(np.int16)
    begin, length = run(lambda s: fn.nonsilent_region(s, window_length=100, cutoff_db=-20.0,
                                                      reset_interval=-1), [x])
    assert (int(begin[0]), int(length[0])) == nonsilent_reference(x, -20.0, 100)


def test_nonsilent_region_errors():
    with pytest.raises(ArgumentError, match="multiple of window_length=2048"), \
            Pipeline(batch_size=1, device_id=None):
        fn.nonsilent_region(fn.external_source(source=[[SPEECH[0]]]), reset_interval=1000)
    with pytest.raises(ArgumentError, match="'window_length' must be in"), \
            Pipeline(batch_size=1, device_id=None):
        fn.nonsilent_region(fn.external_source(source=[[SPEECH[0]]]), window_length=0)
    with pytest.raises(SampleError, match="expects a 1-D signal"):
        run(lambda s: fn.nonsilent_region(s), [np.zeros((10, 2), np.float32)])
