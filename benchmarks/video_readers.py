"""Video readers side by side: stoker vs DALI 2.4's CPU reader vs decord, and vs the decode
limit, on one clip set of ``stoker make-dataset --video``.

The work (``stoker bench video``, ``stoker/cli/pipelines.py``): random 16-frame clips
with stride 2 from every file of the set, batches of 8. Peers: stoker's
``fn.experimental.readers.video``; the same pipeline in DALI 2.4 (CPU: VP8, VP9 and MJPEG
only); decord (or decord2, whichever ``import decord`` finds) in a DataLoader with one
worker per core, a VideoReader per clip, as the source documents' comparison uses it.
Runs alternate between peers (``stoker bench``), so a shared machine's noise falls on all.

Then the decode limit: what the cores could deliver if they did nothing but decode,

    limit = cores x single-core decode rate / decode amplification

where the single-core rate is PyAV decoding every frame of the set's files on one thread
(no colour conversion), and the amplification is stoker's frames decoded per frame
delivered (the GOP offsets a clip's seek cannot skip). Before the peers run it measures
whether FFmpeg's decode releases the GIL: two Python threads decoding two files against
one (on a machine with at least two cores, about 2x when it does).

    python -m stoker.cli.main make-dataset --video /tmp/vds --videos 16 --sizes 360p
    python benchmarks/video_readers.py /tmp/vds/vp9_gop30_360p [--compare dali,decord]

DALI and decord are separate installs (nvidia-dali-cuda130; decord or decord2 from PyPI):
run with an interpreter that has them and stoker importable.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import types
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from stoker.cli.index_videos import video_files  # noqa: E402
from stoker.cli.pipelines import CLIP_LENGTH  # noqa: E402


def decode_all(path: str, hwaccel: bool = False) -> int:
    """Decodes every frame of ``path`` on the calling thread (one codec thread, no colour
    conversion; with ``hwaccel``, on NVDEC through PyAV's CUDA hwaccel, the frames left
    in GPU memory); returns the frame count."""
    import av

    kw = {}
    if hwaccel:
        from av.codec.hwaccel import HWAccel

        kw["hwaccel"] = HWAccel(device_type="cuda", allow_software_fallback=False,
                                is_hw_owned=True)
    n = 0
    with av.open(path, **kw) as container:
        stream = container.streams.video[0]
        if not hwaccel:
            stream.codec_context.thread_count = 1
        for _ in container.decode(stream):
            n += 1
    return n


def decode_rate(files: list[str], threads: int, seconds: float = 3.0,
                decode_one: Callable[[str], int] = decode_all) -> float:
    """Frames per second decoded by ``threads`` Python threads, each decoding whole files
    (the set's files in turn, ``decode_one(path)`` giving a file's frame count), for about
    ``seconds``. A thread's error is raised here."""
    counts = [0] * threads
    stop = time.perf_counter() + seconds
    errors: list[BaseException] = []

    def work(t: int) -> None:
        k = t
        try:
            while time.perf_counter() < stop:
                counts[t] += decode_one(files[k % len(files)])
                k += threads
        except BaseException as e:  # noqa: BLE001 - raised by the caller's thread
            errors.append(e)

    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    if errors:
        raise errors[0]
    return sum(counts) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", help="one clip set (e.g. /tmp/vds/vp9_gop30_360p)")
    parser.add_argument("--compare", default="dali,decord")
    parser.add_argument("--threads", type=int, default=0, help="0 = all cores")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rate-rounds", type=int, default=3,
                        help="single-core decode rate measured this many times (median)")
    args = parser.parse_args()
    cores = args.threads or os.cpu_count() or 1
    files = video_files(args.data)
    if not files:
        raise SystemExit(f"no files under {args.data!r}")

    # GIL: 2 threads decoding against 1, alternated; the medians' ratio.
    ones, twos = [], []
    for _ in range(args.rate_rounds):
        ones.append(decode_rate(files, 1))
        twos.append(decode_rate(files, 2))
    one, two = statistics.median(ones), statistics.median(twos)
    print(f"PyAV decode, {os.path.basename(args.data.rstrip('/'))}: 1 thread {one:,.0f} "
          f"frames/s, 2 threads {two:,.0f} frames/s: x{two / one:.2f} (GIL released in "
          f"decode when ~2 on 2 free cores)")

    from stoker.cli.bench import measure

    # The single-core rate again after each round of the peers' runs: the shared machine's
    # speed moves (434-562 frames/s across runs), and the limit must be the one the peers
    # met, not that of a minute before.
    during: list[float] = []
    bench_args = types.SimpleNamespace(
        pipeline="video", data=args.data, compare=args.compare, cold=False,
        batch_size=args.batch_size, threads=cores, seconds=args.seconds, runs=args.runs,
        each_round=lambda: during.append(decode_rate(files, 1)))
    result = measure(bench_args)
    if result is None:
        return 1
    ones = during or ones
    rate = statistics.median(ones)
    amp = result["stats"]["stoker"].get("decode_amplification", 1.0)
    limit = cores * rate / amp
    delivered = result["medians"]["stoker"] * CLIP_LENGTH
    print(f"\ndecode limit: {cores} cores x {rate:,.0f} frames/s (one core, median of "
          f"{len(ones)}, between the runs) / amplification {amp:.2f} = {limit:,.0f} frames "
          f"delivered/s; stoker delivers {delivered:,.0f}: {delivered / limit:.2f}x the limit")
    for peer, value in result["medians"].items():
        if peer != "stoker":
            print(f"stoker / {peer}: {result['medians']['stoker'] / value:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
