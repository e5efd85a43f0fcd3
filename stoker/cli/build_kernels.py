"""``stoker build-kernels``: compiles stoker's kernels for this machine ahead of the first
pipeline, as an install step (``make setup`` runs it; pip users run it once after
``pip install stoker``, or in their container image's build).

stoker's CPU kernels are numba code compiled for the CPU they run on and cached on disk
(beside the package, or under ``NUMBA_CACHE_DIR``). Without this step the first image
pipeline of a fresh install compiles them before its first batch: 15-20 s on 2 cores, of
which one kernel (the fused decode-crop-resize-normalize loop that the ResNet-50 training
and validation graphs share, one specialisation for both) takes 90%. With it, the first
batch loads the compiled code: about 1 s. Compiling takes as long here as it would there;
this moves it off the training job's start.

The built-in benchmark pipelines (``stoker.cli.pipelines``) run on a few generated JPEGs,
and DALI's speech-feature recipe on a few generated WAVs, in one worker process per group,
so every kernel they use is compiled and saved the way a user's pipeline would use it.
The video reader runs on two generated clips (its RGB conversion loop: 3.8 s to compile).
Kernels of other operators (detection, ...) still compile on their first use (0.1-3 s
each).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

# Each group runs in its own process, its pipelines in order. The first group's first
# pipeline compiles the shared fused image loop; the rest of that group then load it
# instead of compiling it again beside it. The other group compiles, meanwhile, what no
# image pipeline of the first needs: CIFAR's crop-normalize loop and the speech features
# of DALI's ASR recipe ("asr": 4.1 s to a first batch uncompiled, 0.45 s compiled; needs
# the audio extra, skipped without it) and the video reader's ("video": needs the video
# extra).
GROUPS = (("train", "val", "train-unfused", "decode-crop", "decode"),
          ("cifar", "asr", "video"))


def build_kernels(jobs: int = 0, quiet: bool = False,
                  groups: tuple[tuple[str, ...], ...] = GROUPS) -> int:
    """Runs every group's pipelines in worker processes (at most ``jobs`` at once, 0 = one
    per group); returns 0, or the first failing worker's exit code."""
    from stoker.cli.make_dataset import make_dataset

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="stoker-kernels-") as data:
        make_dataset(data, images=8, classes=2)
        pending = [list(g) for g in groups]
        running: list[tuple[subprocess.Popen, list[str]]] = []
        failed = 0
        while pending or running:
            while pending and len(running) < (jobs or len(groups)):
                group = pending.pop(0)
                cmd = [sys.executable, "-m", "stoker.cli.build_kernels", data, *group]
                running.append((subprocess.Popen(cmd), group))
            proc, group = running.pop(0)
            code = proc.wait()
            if code and not failed:
                failed = code
                print(f"stoker build-kernels: compiling for {', '.join(group)} failed "
                      f"(exit code {code}; its error is above)", file=sys.stderr)
    if not quiet and not failed:
        where = os.environ.get("NUMBA_CACHE_DIR") or "beside stoker's kernel modules"
        print(f"stoker build-kernels: kernels compiled for this CPU in "
              f"{time.perf_counter() - start:.1f} s (cached {where})")
    return failed


def _compile(data: str, names: list[str]) -> None:
    """Builds and runs each named pipeline for two batches (a worker's job)."""
    import stoker
    from stoker.cli import pipelines

    for name in names:
        if name == "asr":
            pipe = _asr(data)
        elif name == "video":
            pipe = _video(data, stoker)
        else:
            pipe = pipelines.build(name, stoker, data, 4, 1)
        if pipe is None:
            continue
        for _ in range(2):
            pipe.run()
        pipe.close()


def _asr(data: str) -> object | None:
    """DALI's speech-feature recipe (examples/asr_features.py) on four generated WAVs;
    None without the audio extra."""
    import math
    import pathlib
    import wave

    import numpy as np

    from stoker import fn, pipeline_def, types

    try:
        import soundfile  # noqa: F401  (decoders.audio's)
    except ImportError:
        return None
    folder = pathlib.Path(data) / "asr" / "speech"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i in range(4):
        with wave.open(str(folder / f"{i}.wav"), "wb") as f:
            f.setnchannels(1)
            f.setsampwidth(2)
            f.setframerate(16000)
            f.writeframes((rng.uniform(-0.1, 0.1, 8000 + 800 * i) * 32767).astype("<i2")
                          .tobytes())

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def asr():
        audio, _ = fn.readers.file(file_root=str(folder.parent), file_filters=["*.wav"])
        rate = fn.random.uniform(range=(0.85, 1.15)) * 16000
        audio, _ = fn.decoders.audio(audio, sample_rate=rate, dtype=types.FLOAT, downmix=True)
        audio = audio + fn.random.normal(audio) * 1e-5
        audio = fn.preemphasis_filter(audio, preemph_coeff=0.97)
        spec = fn.spectrogram(audio, nfft=512, window_length=320, window_step=160)
        mel = fn.mel_filter_bank(spec, sample_rate=16000, nfilter=64, normalize=True)
        log = fn.to_decibels(mel, multiplier=math.log(10), reference=1.0,
                             cutoff_db=math.log(1e-20))
        return fn.pad(fn.normalize(log, axes=[1]), axes=[1], fill_value=0, align=16)

    return asr()


def _video(data: str, stoker: object) -> object | None:
    """The video benchmark's reader (16-frame clips, stride 2) on two generated VP9 clips
    of 64x48; None without the video extra."""
    import numpy as np

    from stoker.cli import pipelines
    from stoker.cli.make_videos import Encoder

    try:
        import av
    except ImportError:
        return None
    root = os.path.join(data, "video")
    os.makedirs(os.path.join(root, "class_000"))
    rng = np.random.default_rng(0)
    for i in range(2):
        enc = Encoder(os.path.join(root, "class_000", f"{i}.webm"), "vp9", 64, 48, gop=30)
        for _ in range(40):
            rgb = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
            enc.add(av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p"))
        enc.close()
    return pipelines.build("video", stoker, root, 2, 1)


if __name__ == "__main__":
    _compile(sys.argv[1], sys.argv[2:])
