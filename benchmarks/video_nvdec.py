"""NVDEC on a GPU machine, in one run: stoker's GPU video reader at several decoding
sessions against raw hardware decoding (PyAV's CUDA hwaccel, and PyNvVideoCodec where it
imports) and against stoker's CPU reader on all cores, on one clip set of ``stoker
make-dataset --video``.

The work is ``stoker bench video``'s: random 16-frame clips with stride 2, batch 8
(``--batch-size``). For each session count (``--sessions``, ``STOKER_NVDEC_SESSIONS``) a
fresh process runs ``fn.experimental.readers.video(device="gpu")`` and prints clips/s,
frames/s and the first batch's mean difference from the CPU reader's pixels (NV12 -> RGB
on the GPU against swscale on the CPU: a few levels). The raw rates decode every frame of
the set's files, one file a thread, with 1..N threads at once: the ceiling the reader's
sessions work against.

On the GPU machine (no package index) PyAV and PyNvVideoCodec come as wheels fetched here:

    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \\
        --implementation cp --platform manylinux_2_28_x86_64 -d .gpu-video av==19.0.2 pynvvideocodec
    echo /.gpu-video/ >> .git/info/exclude

then there, with ``.gpu-video`` carried (about 62 MB):

    pip install --no-deps --target /tmp/site .gpu-video/*.whl
    PYTHONPATH=/tmp/site:$PWD python3 -m stoker.cli.main make-dataset --video /tmp/vds \\
        --videos 16 --sizes 1080p
    PYTHONPATH=/tmp/site:$PWD python3 benchmarks/video_nvdec.py /tmp/vds/h264_gop30_1080p

``--fake`` runs the same steps through the fake NVDEC backend on torch CPU tensors
(``STOKER_NVDEC=fake STOKER_GPU_ON_CPU=1``): a check of the script itself, not a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from video_readers import decode_all, decode_rate  # noqa: E402

from stoker.cli.index_videos import video_files  # noqa: E402
from stoker.cli.pipelines import CLIP_LENGTH, CLIP_STRIDE  # noqa: E402


def _reader_run(data: str, device: str, batch: int, threads: int, seconds: float) -> dict:
    """One process's measurement of the reader (``device`` "gpu" or "cpu")."""
    import numpy as np

    from stoker import Pipeline, fn

    def pipe_for(dev: str) -> Pipeline:
        pipe = Pipeline(batch_size=batch, num_threads=threads, device_id=0, seed=1,
                        prefetch_queue_depth=2)
        with pipe:
            video, label = fn.experimental.readers.video(
                device=dev, file_root=data, sequence_length=CLIP_LENGTH, stride=CLIP_STRIDE,
                random_shuffle=True, seed=1, name="Reader")
            pipe.set_outputs(video, label)
        pipe.build()
        return pipe

    pipe = pipe_for(device)
    start = time.perf_counter()
    first = pipe.run()[0]
    first_s = time.perf_counter() - start
    clips, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        out = pipe.run()[0]
        clips += batch
    wall = time.perf_counter() - start
    _sync(out)
    result = {"clips_s": clips / wall, "first_batch_s": first_s}
    if device == "gpu":
        ref = pipe_for("cpu").run()[0]
        got = np.stack([np.asarray(first.as_cpu().at(j)) for j in range(batch)]).astype(int)
        want = np.stack([np.asarray(ref.at(j)) for j in range(batch)]).astype(int)
        result["mean_diff"] = float(np.abs(got - want).mean())
    pipe.close()
    return result


def _sync(out: object) -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except ImportError:
        pass


def _pynvvideocodec() -> object:
    import PyNvVideoCodec as nvc

    def decode_one(path: str) -> int:
        dec = nvc.SimpleDecoder(path, gpu_id=0, use_device_memory=True)
        return len(dec[0:len(dec)])

    return decode_one


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="one clip set (e.g. /tmp/vds/h264_gop30_1080p)")
    ap.add_argument("--sessions", default="1,2,4,7")
    ap.add_argument("--threads", type=int, default=0, help="pipeline threads (0: all cores)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--fake", action="store_true",
                    help="the fake NVDEC backend on torch CPU tensors (checks the script)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one reader measurement
    args = ap.parse_args()
    threads = args.threads or os.cpu_count() or 1
    if args.one:
        print(json.dumps(_reader_run(args.data, args.one, args.batch_size, threads,
                                     args.seconds)))
        return 0
    files = video_files(args.data)
    if not files:
        raise SystemExit(f"no files under {args.data!r}")
    env = dict(os.environ)
    if args.fake:
        env.update(STOKER_NVDEC="fake", STOKER_GPU_ON_CPU="1")
    sessions = [int(s) for s in args.sessions.split(",")]

    print(f"{os.path.basename(args.data.rstrip('/'))}: {len(files)} files, clips of "
          f"{CLIP_LENGTH} frames, stride {CLIP_STRIDE}, batch {args.batch_size}, "
          f"{threads} pipeline threads")
    print("\nraw decoding of whole files, frames/s (threads at once):")
    raw = [("PyAV CPU, 1 codec thread each", decode_all, [1, threads])]
    if not args.fake:
        raw.append(("PyAV CUDA hwaccel (NVDEC)", lambda p: decode_all(p, hwaccel=True),
                    sessions))
        try:
            raw.append(("PyNvVideoCodec SimpleDecoder", _pynvvideocodec(), sessions))
        except ImportError as e:
            print(f"  PyNvVideoCodec: not importable ({e})")
    for name, decode_one, counts in raw:
        cells = []
        for n in counts:
            try:
                cells.append(f"{n}: {decode_rate(files, n, args.seconds / 2, decode_one):,.0f}")
            except Exception as e:  # noqa: BLE001 - one failing backend must not hide the rest
                cells.append(f"{n}: failed ({type(e).__name__}: {str(e)[:120]})")
        print(f"  {name:32s} " + "   ".join(cells))

    def measure(device: str, extra: dict) -> dict | None:
        cmd = [sys.executable, os.path.abspath(__file__), args.data, "--one", device,
               "--batch-size", str(args.batch_size), "--threads", str(threads),
               "--seconds", str(args.seconds)]
        proc = subprocess.run(cmd, env={**env, **extra}, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode:
            print(f"  {device} {extra}: failed\n{proc.stderr[-1500:]}")
            return None
        return json.loads(proc.stdout.strip().splitlines()[-1])

    print("\nstoker readers.video, clips/s (frames/s delivered):")
    cpu = measure("cpu", {})
    if cpu:
        print(f"  CPU reader, {threads} threads: {cpu['clips_s']:.1f} "
              f"({cpu['clips_s'] * CLIP_LENGTH:,.0f}), first batch {cpu['first_batch_s']:.2f} s")
    for n in sessions:
        got = measure("gpu", {"STOKER_NVDEC_SESSIONS": str(n)})
        if got:
            vs = f", {got['clips_s'] / cpu['clips_s']:.2f}x the CPU reader" if cpu else ""
            print(f"  GPU reader, {n} NVDEC sessions: {got['clips_s']:.1f} "
                  f"({got['clips_s'] * CLIP_LENGTH:,.0f}){vs}, first batch "
                  f"{got['first_batch_s']:.2f} s, mean |GPU - CPU| {got['mean_diff']:.2f} levels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
