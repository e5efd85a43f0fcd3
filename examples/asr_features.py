"""Speech features for ASR training: DALI's Jasper/QuartzNet pipeline, ported by its import.

The recipe (NVIDIA DeepLearningExamples, PyTorch/SpeechRecognition/Jasper, DALI pipeline):
read WAVs, speed-perturb by resampling each utterance to a random rate while decoding,
dither, pre-emphasize, take a power spectrogram (20 ms windows, 10 ms steps), 64 mel
bands, natural-log decibels, normalize each band over time, pad the time axis to a
multiple of 16. The pipeline below is written DALI's way; only the import line differs.

Without ``--data`` it generates speech-like WAVs (voiced bursts between quiet noise, 16
kHz, 2-16 s) in a temporary folder. ``stoker bench examples/asr_features.py --compare
dali`` runs the same ``pipeline`` with stoker and with DALI's CPU backend (on
``$STOKER_ASR_DATA``, or files generated once into ``$TMPDIR/stoker-asr-bench``).

Run it::

    python examples/asr_features.py --files 16 --batch-size 8 --iters 4
    stoker bench examples/asr_features.py --compare dali --batch-size 32
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import tempfile
import time
import wave

import numpy as np

from stoker import fn, pipeline_def, types  # was: from nvidia.dali import fn, pipeline_def, types

SAMPLE_RATE = 16000


@pipeline_def
def pipeline(file_root=None, shard_id=0, num_shards=1, train=True, sample_rate=SAMPLE_RATE,
             speed_perturbation=(0.85, 1.15), nfft=512, window_size=0.02, window_stride=0.01,
             nfeatures=64, dither=1e-5, preemph_coeff=0.97, pad_align=16):
    if file_root is None:
        file_root = default_data()
    audio, label = fn.readers.file(file_root=file_root, shard_id=shard_id,
                                   num_shards=num_shards, shuffle_after_epoch=train,
                                   file_filters=["*.wav"], name="Reader")
    rate = sample_rate
    if speed_perturbation is not None:
        rate = fn.random.uniform(range=speed_perturbation) * sample_rate
    audio, _ = fn.decoders.audio(audio, sample_rate=rate, dtype=types.FLOAT, downmix=True)
    if dither > 0:
        audio = audio + fn.random.normal(audio) * dither
    audio = fn.preemphasis_filter(audio, preemph_coeff=preemph_coeff)
    spec = fn.spectrogram(audio, nfft=nfft, window_length=window_size * sample_rate,
                          window_step=window_stride * sample_rate)
    mel = fn.mel_filter_bank(spec, sample_rate=sample_rate, nfilter=nfeatures, normalize=True)
    log = fn.to_decibels(mel, multiplier=math.log(10), reference=1.0,
                         cutoff_db=math.log(1e-20))
    length = log.shape()[1:2]
    features = fn.normalize(log, axes=[1])
    features = fn.pad(features, axes=[1], fill_value=0, align=pad_align)
    return features, length, label


# -- generated data (not part of the recipe) ---------------------------------------------------


def speech_like(seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Voiced syllables (a 90-220 Hz fundamental with harmonics) between quiet noise."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = rng.uniform(90, 220) * (1 + 0.05 * np.sin(2 * np.pi * 0.7 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    voiced = sum(np.sin(h * phase) / h for h in range(1, 10))
    syllables = np.clip(np.sin(2 * np.pi * rng.uniform(2, 5) * t), 0, None) ** 2
    return 0.1 * voiced * syllables + 0.002 * rng.standard_normal(t.size)


def write_wav(path: pathlib.Path, x: np.ndarray) -> None:
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(SAMPLE_RATE)
        f.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def generate(root: pathlib.Path, files: int, seed: int = 0, shortest: float = 2.0,
             longest: float = 16.0) -> pathlib.Path:
    """``files`` speech-like 16-bit WAVs in ``root/utterances/``."""
    rng = np.random.default_rng(seed)
    folder = root / "utterances"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        write_wav(folder / f"{i:05d}.wav", speech_like(rng.uniform(shortest, longest), rng))
    return root


def default_data(files: int = 128) -> str:
    """$STOKER_ASR_DATA, or WAVs generated once into $TMPDIR/stoker-asr-bench (for
    ``stoker bench``, whose processes must read the same files)."""
    if os.environ.get("STOKER_ASR_DATA"):
        return os.environ["STOKER_ASR_DATA"]
    root = pathlib.Path(tempfile.gettempdir()) / "stoker-asr-bench"
    done = root / f"complete-{files}"
    if not done.exists():
        generate(root, files)
        done.touch()
    return str(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a folder of class folders of WAVs (default: generated)")
    parser.add_argument("--files", type=int, default=32, help="generated utterances")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--iters", type=int, default=None, help="stop after this many batches")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data or str(generate(pathlib.Path(tmp), args.files))
        pipe = pipeline(file_root=root, batch_size=args.batch_size,
                        num_threads=args.num_threads, device_id=None, seed=42)
        pipe.build()
        per_epoch = math.ceil(pipe.epoch_size("Reader") / args.batch_size)
        done, start = 0, time.perf_counter()
        for epoch in range(args.epochs):
            for _ in range(per_epoch):
                features, lengths, labels = pipe.run()
                samples = [np.array(features.at(i)) for i in range(len(features))]
                lens = [int(np.array(lengths.at(i))[0]) for i in range(len(lengths))]
                widths = sorted({s.shape[1] for s in samples})
                print(f"epoch {epoch} batch {done}: {len(samples)} x {samples[0].shape[0]} "
                      f"mel bands {samples[0].dtype}, padded frames {widths}, frames "
                      f"{min(lens)}..{max(lens)}, finite "
                      f"{all(bool(np.isfinite(s).all()) for s in samples)}")
                done += 1
                if args.iters is not None and done >= args.iters:
                    break
        seconds = time.perf_counter() - start
        print(f"{done} batches in {seconds:.2f} s ({done * args.batch_size / seconds:.1f} "
              "utterances/s)")


if __name__ == "__main__":
    main()
