"""Decoding audio files as DALI's ``decoders.audio`` and ``readers.nemo_asr`` do.

libsndfile (through ``soundfile``) reads WAV, FLAC, OGG/Vorbis, OGG/Opus and, unlike DALI's
build, MP3. The common ASR file, a 16-bit PCM or float32 WAV, is read straight from its
bytes with numpy instead (the same values as libsndfile's: int16 / 32768 as float; 10x
faster than libsndfile reading from memory, which calls back into Python for every read).

What DALI does, measured on 2.4 and followed here:

* Samples come out as ``(length, channels)`` (a mono file too), or ``(length,)`` with
  ``downmix``; the rate reported is the file's.
* Without resampling or downmixing, libsndfile converts to the output type itself (an int16
  file read as int32 is ``v << 16``). With either, the audio is read as float32, downmixed
  (each channel weighted by ``1/channels`` in float32), resampled (``resample.py``), then
  converted (``convert.from_float``).
* ``offset`` and ``length`` (in frames, for nemo_asr's manifest fields) cut the file first.
* An empty file decodes to an empty array. A file libsndfile cannot open is an error.

Where stoker is stricter: a WAV whose data chunk ends before its header says, and a file
that yields fewer frames than it declares (a cut FLAC), are errors (DALI returns a WAV's
first part silently).
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.audio import convert
from stoker.kernels.cpu.compiled import loops


class AudioDecodeError(ValueError):
    """The data is not audio that can be decoded (the operator adds the file's name)."""


@dataclass(frozen=True)
class Wav:
    """Where a plain PCM16 or float32 WAV's samples are (None: leave it to libsndfile)."""

    rate: int
    channels: int
    sample: str  # numpy dtype of a sample: "<i2" or "<f4"
    start: int  # byte offset of the data
    frames: int


_RIFF = struct.Struct("<4sI4s")
_CHUNK = struct.Struct("<4sI")
_FMT = struct.Struct("<HHIIHH")
_PCM, _FLOAT = 1, 3
# The declared size of a WAV written as a stream, before its length was known.
_UNKNOWN_SIZES = (0, 0xFFFFFFFF)


def parse_wav(buf: memoryview) -> Wav | None:
    """A WAV's layout, read from its chunks; None when ``buf`` is not a plain 16-bit PCM or
    float32 WAV. Raises AudioDecodeError for a WAV whose data ends before its header says."""
    if len(buf) < 12 or buf[:4] != b"RIFF" or buf[8:12] != b"WAVE":
        return None
    pos, fmt = 12, None
    while pos + 8 <= len(buf):
        tag, size = _CHUNK.unpack_from(buf, pos)
        pos += 8
        if tag == b"fmt " and size >= 16 and pos + 16 <= len(buf):
            fmt = _FMT.unpack_from(buf, pos)
        elif tag == b"data":
            if fmt is None:
                return None
            tag_id, channels, rate, _, align, bits = fmt
            available = len(buf) - pos
            if size not in _UNKNOWN_SIZES and size > available:
                raise AudioDecodeError(f"truncated WAV: its data chunk declares {size} bytes, "
                                       f"the file holds {available}")
            # Other sample formats (8/24-bit, doubles, the extensible header): libsndfile.
            sample = {(_PCM, 16): "<i2", (_FLOAT, 32): "<f4"}.get((tag_id, bits))
            if sample is None or channels < 1 or align != channels * bits // 8:
                return None
            size = available if size in _UNKNOWN_SIZES else size
            return Wav(rate, channels, sample, pos, size // align)
        pos += size + (size & 1)
    return None


def _downmix(x: np.ndarray) -> np.ndarray:
    """The mean of the channels as DALI sums it: each channel times 1/C in float32."""
    channels = x.shape[1]
    if channels == 1:
        return x[:, 0]
    w = np.float32(1.0 / channels)
    out = x[:, 0] * w
    for c in range(1, channels):
        out += x[:, c] * w
    return out


_SF_TYPES = {np.dtype(np.float32): "float32", np.dtype(np.int16): "int16",
             np.dtype(np.int32): "int32"}


def _read_wav(buf: memoryview, wav: Wav, offset: int, length: int,
              as_float: bool, dtype: np.dtype) -> np.ndarray | None:
    """The frames of a plain WAV as float32 (``as_float``) or ``dtype``; None where
    libsndfile's own conversion is needed (float files read as integers)."""
    raw = np.frombuffer(buf, wav.sample, wav.frames * wav.channels, wav.start)
    raw = raw.reshape(wav.frames, wav.channels)[offset:offset + length]
    if wav.sample == "<f4":
        if as_float or dtype == np.float32:
            return raw.astype(np.float32)
        return None
    if as_float or dtype == np.float32:
        # Recycled memory: a fresh 10 s output faulted in 140 pages per file (half the
        # reader's CPU time on this VM).
        out = buffers.empty(raw.shape, np.float32)
        return np.multiply(raw, np.float32(1.0 / 32768), out=out, dtype=np.float32)
    if dtype == np.int16:
        return raw.astype(np.int16)
    return raw.astype(np.int32) << 16


def _open(source: Any) -> Any:
    try:
        import soundfile  # the decoding dependency, loaded with the first audio file
    except ImportError:
        raise AudioDecodeError("decoding this file needs the soundfile package (plain "
                               "16-bit and float WAVs do not): pip install "
                               "'stoker[audio]'") from None

    try:
        if isinstance(source, str):
            return soundfile.SoundFile(source)
        return soundfile.SoundFile(io.BytesIO(source))
    except soundfile.LibsndfileError as e:
        raise AudioDecodeError(f"cannot decode audio: {e.error_string}") from None
    except (soundfile.SoundFileRuntimeError, RuntimeError, TypeError) as e:
        raise AudioDecodeError(f"cannot decode audio: {e}") from None


def _read(handle: Any, offset: int, length: int, dtype: str) -> np.ndarray:
    try:
        if offset:
            handle.seek(offset)
        return handle.read(length, dtype=dtype, always_2d=True)
    except RuntimeError as e:  # soundfile's errors (a FLAC that lost sync, ...)
        message = getattr(e, "error_string", None) or str(e)
        raise AudioDecodeError(f"cannot decode audio: {message}") from None


def decode(source: Any, *, offset_s: float = -1.0, duration_s: float = -1.0,
           target_rate: float = 0.0, downmix: bool = False, dtype: Any = np.float32,
           quality: float = 50.0, method: str = "dali") -> tuple[np.ndarray, int]:
    """Decodes ``source`` (the file's bytes) to ``(audio, file_rate)``.

    ``offset_s``/``duration_s`` (negative: not given) cut the file first, in seconds,
    truncated to whole frames as DALI does; ``target_rate`` > 0 resamples."""
    dtype = np.dtype(dtype)
    buf = memoryview(source).cast("B")
    wav = parse_wav(buf)
    handle = None
    if wav is not None:
        rate, channels, frames = wav.rate, wav.channels, wav.frames
    else:
        handle = _open(buf)
        rate, channels, frames = handle.samplerate, handle.channels, handle.frames
    try:
        offset = int(offset_s * rate) if offset_s >= 0 else 0
        length = int(duration_s * rate) if duration_s >= 0 else frames
        length = min(length, frames - offset)
        if length < 0:
            raise AudioDecodeError(f"offset {offset_s} s is past the end of the audio "
                                   f"({frames / rate:.6g} s)")
        should_resample = target_rate > 0 and target_rate != rate
        as_float = should_resample or (downmix and channels > 1)
        audio = None
        if wav is not None:
            audio = _read_wav(buf, wav, offset, length, as_float, dtype)
            if audio is None:
                handle = _open(buf)
        if audio is None:
            audio = _read(handle, offset, length, "float32" if as_float else _SF_TYPES[dtype])
            if audio.shape[0] != length:
                raise AudioDecodeError(f"the audio ends after {audio.shape[0]} of the "
                                       f"{length} frames it declares (a cut or corrupt file)")
    finally:
        if handle is not None:
            handle.close()
    if not as_float:
        return (audio[:, 0] if downmix else audio), rate
    if downmix:
        audio = _downmix(audio)
    if should_resample:
        audio = loops("audio.resample").resample(audio, rate, target_rate, quality, method)
    return convert.from_float(audio, dtype), rate


def pcm16_wav(samples: np.ndarray, rate: int) -> np.ndarray:
    """A 16-bit PCM WAV file of ``samples`` (int16, ``(n,)`` or ``(n, channels)``), as uint8
    bytes: for examples and tests that need audio without an encoder."""
    data = np.ascontiguousarray(samples, "<i2")
    channels = 1 if data.ndim == 1 else data.shape[1]
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + data.nbytes, b"WAVE", b"fmt ",
                         16, _PCM, channels, rate, rate * 2 * channels, 2 * channels, 16,
                         b"data", data.nbytes)
    return np.frombuffer(header + data.tobytes(), np.uint8).copy()
