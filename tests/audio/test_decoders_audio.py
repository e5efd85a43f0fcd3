"""fn.decoders.audio: every format libsndfile reads, against soundfile's own decoding of the
same bytes; the plain-WAV fast path against libsndfile; fused resampling against
fn.audio_resample; bad files fail naming the file or are skipped under on_error="skip"."""

from __future__ import annotations

import io
import pathlib

import numpy as np
import pytest
from audio_cases import encode, speech_like, sweep
from helpers import run_batches as run

import stoker.fn  # noqa: F401  (registers every operator)
from stoker import Pipeline, fn, types
from stoker.errors import SampleError
from stoker.kernels.cpu.audio.decode import AudioDecodeError, decode, parse_wav, pcm16_wav

sf = pytest.importorskip("soundfile")

SR = 16000
MONO = speech_like(3000, 4)
STEREO = np.stack([MONO, 0.5 * sweep(3000)], 1)


def reference(data: np.ndarray, dtype: str = "float32") -> np.ndarray:
    return sf.read(io.BytesIO(data.tobytes()), dtype=dtype, always_2d=True)[0]


FILES = {
    "wav_pcm16": encode(STEREO, SR, "WAV", "PCM_16"),
    "wav_pcm24": encode(MONO, SR, "WAV", "PCM_24"),
    "wav_pcm32": encode(STEREO, SR, "WAV", "PCM_32"),
    "wav_pcm8": encode(MONO, SR, "WAV", "PCM_U8"),
    "wav_float": encode(STEREO, 22050, "WAV", "FLOAT"),
    "wav_double": encode(MONO, SR, "WAV", "DOUBLE"),
    "flac": encode(STEREO, SR, "FLAC"),
    "ogg_vorbis": encode(STEREO, SR, "OGG", "VORBIS"),
    "ogg_opus": encode(MONO, 48000, "OGG", "OPUS"),
    "mp3": encode(MONO, SR, "MP3"),
}


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("dtype", ["FLOAT", "INT16", "INT32"])
def test_formats_decode_as_libsndfile_reads_them(name, dtype):
    data = FILES[name]
    audio, rate = run(lambda e: fn.decoders.audio(e, dtype=getattr(types, dtype)), [data])
    want = reference(data, {"FLOAT": "float32", "INT16": "int16", "INT32": "int32"}[dtype])
    assert audio[0].dtype == want.dtype and audio[0].shape == want.shape
    if name == "mp3":  # mpg123 rounds its float synthesis differently from read to read
        assert np.abs(audio[0].astype(float) - want).max() <= (
            1e-6 if dtype == "FLOAT" else 1 if dtype == "INT16" else 256)
    else:
        assert np.array_equal(audio[0], want)
    assert rate[0].shape == () and rate[0].dtype == np.float32
    assert rate[0] == sf.info(io.BytesIO(data.tobytes())).samplerate


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_plain_wavs_take_the_fast_path_with_libsndfiles_values(channels):
    x = np.stack([MONO * (0.5 + 0.2 * c) for c in range(channels)], 1)
    for subtype in ("PCM_16", "FLOAT"):
        data = encode(x, SR, "WAV", subtype)
        assert parse_wav(memoryview(data)) is not None
        for dtype in (np.float32, np.int16, np.int32):
            if subtype == "FLOAT" and dtype != np.float32:
                continue  # libsndfile's own float -> integer conversion: its path
            ours, rate = decode(data, dtype=dtype)
            assert rate == SR
            assert np.array_equal(ours, reference(data, np.dtype(dtype).name))


def test_pcm16_writer_makes_wavs_libsndfile_reads():
    x = (np.arange(-300, 300) * 50).astype(np.int16)
    assert np.array_equal(reference(pcm16_wav(x, 8000), "int16")[:, 0], x)
    stereo = np.stack([x, -x], 1)
    assert np.array_equal(reference(pcm16_wav(stereo, 8000), "int16"), stereo)


def test_downmix_is_the_mean_of_the_channels():
    data = FILES["wav_float"]
    (mixed,), _ = run(lambda e: fn.decoders.audio(e, downmix=True), [data])
    want = reference(data)
    assert mixed.shape == (want.shape[0],)
    assert np.allclose(mixed, want.mean(axis=1), atol=1e-7)
    (mixed16,), _ = run(lambda e: fn.decoders.audio(e, downmix=True, dtype=types.INT16), [data])
    assert np.abs(mixed16 - np.round(want.mean(axis=1) * 32767)).max() <= 1


def test_fused_resampling_equals_audio_resample():
    # DALI's own check: decoding with sample_rate equals decoding then fn.audio_resample.
    files = [FILES["wav_pcm16"], FILES["flac"]]
    rates = [np.float32(11025.0), np.float32(24000.0)]
    fused, got_rates = run(lambda e, r: fn.decoders.audio(e, sample_rate=r, quality=70.0),
                           files, rates)
    (apart,) = run(lambda e, r: fn.audio_resample(fn.decoders.audio(e)[0], in_rate=16000.0,
                                                  out_rate=r, quality=70.0), files, rates)
    for a, b in zip(fused, apart, strict=True):
        assert a.shape == b.shape and np.array_equal(a, b)
    assert [float(r) for r in got_rates] == [11025.0, 24000.0]
    assert fused[0].shape == (int(np.ceil(3000 * 11025 / 16000)), 2)


def test_soxr_resampler_in_the_decoder():
    t = np.arange(SR) / SR
    data = encode((0.5 * np.sin(2 * np.pi * 7000 * t)).astype(np.float32), SR, "WAV", "FLOAT")
    (dali,), (soxr,) = run(lambda e: [
        fn.decoders.audio(e, sample_rate=8000.0, downmix=True)[0],
        fn.decoders.audio(e, sample_rate=8000.0, downmix=True, resampler="soxr_vhq")[0]],
        [data])
    assert np.abs(dali).max() > 0.4  # the 7 kHz tone folds back (DALI's resampler)
    assert np.abs(soxr[300:-300]).max() < 1e-3


def test_empty_audio_decodes_to_no_samples():
    data = encode(np.zeros(0, np.float32), SR, "WAV", "PCM_16")
    (audio,), (rate,) = run(lambda e: fn.decoders.audio(e), [data])
    assert audio.shape == (0, 1) and rate == SR


# -- bad files -----------------------------------------------------------------------------------


def _bad_files(root: pathlib.Path) -> dict[str, pathlib.Path]:
    wav = encode(MONO, SR, "WAV", "PCM_16")
    flac = encode(MONO, SR, "FLAC")
    files = {"good": wav, "truncated_wav": wav[:len(wav) // 2],
             "truncated_flac": flac[:len(flac) // 2], "text": np.frombuffer(
                 b"this is not audio at all" * 20, np.uint8),
             "empty_file": np.zeros(0, np.uint8), "header_only": wav[:30]}
    folder = root / "c0"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for i, (name, data) in enumerate(files.items()):
        paths[name] = folder / f"{i}_{name}.wav"
        data.tofile(paths[name])
    return paths


@pytest.mark.parametrize("name, message", [
    ("truncated_wav", "truncated WAV"),
    ("truncated_flac", "cannot decode audio|ends after"),
    ("text", "Format not recognised"),
    ("empty_file", "cannot decode audio"),
    ("header_only", "cannot decode audio"),
])
def test_bad_files_fail_naming_the_file(tmp_path, name, message):
    path = _bad_files(tmp_path)[name]
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        data, _ = fn.readers.file(files=[str(path)])
        pipe.set_outputs(fn.decoders.audio(data)[0])
    pipe.build()
    with pytest.raises(SampleError, match=message) as info:
        pipe.run()
    assert path.name in str(info.value) and "fn.decoders.audio" in str(info.value)


def test_bad_files_are_skipped_and_reported_under_on_error_skip(tmp_path):
    paths = _bad_files(tmp_path)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, on_error="skip")
    with pipe:
        data, _ = fn.readers.file(file_root=str(tmp_path), file_filters=["*.wav"])
        audio, _ = fn.decoders.audio(data, downmix=True)
        # zero-length audio passes the decoder (as in DALI) and fails the spectrogram
        pipe.set_outputs(fn.spectrogram(audio, window_length=64, window_step=32))
    pipe.build()
    (spec,) = pipe.run()
    assert len(spec) == 1  # the one good file, alone in its epoch's batch
    skipped = {pathlib.Path(p).name for p, _ in pipe.skipped_samples()}
    assert skipped == {p.name for n, p in paths.items() if n != "good"}


def test_zero_length_audio_fails_downstream_naming_the_file(tmp_path):
    path = tmp_path / "silence.wav"
    encode(np.zeros(0, np.float32), SR, "WAV", "PCM_16").tofile(path)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        data, _ = fn.readers.file(files=[str(path)])
        audio, _ = fn.decoders.audio(data, downmix=True)
        pipe.set_outputs(fn.spectrogram(audio))
    pipe.build()
    with pytest.raises(SampleError, match="fn.spectrogram.*silence.wav.*zero-length"):
        pipe.run()


def test_missing_soundfile_is_explained(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "soundfile", None)
    with pytest.raises(AudioDecodeError, match="pip install 'stoker\\[audio\\]'"):
        decode(FILES["flac"])
    assert decode(FILES["wav_pcm16"])[0].shape == (3000, 2)  # plain WAVs need no soundfile
