"""``stoker profile``: where a pipeline's time goes, per operator, thread and batch.

Runs a named pipeline (or ``file.py:function`` returning a pipeline or decorated with
@pipeline_def), writes a Chrome-trace JSON (open it in chrome://tracing or Perfetto) and
prints the time per operator.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from stoker.executor.profile import attach


def named_pipeline(name: str, data: str | None, batch_size: int, threads: int) -> Any:
    import stoker
    from stoker.cli import pipelines

    if name in pipelines.NAMES:
        return pipelines.build(name, stoker, data, batch_size, threads)
    return pipelines.load_user_pipeline(name, batch_size, threads)


def _video_stats() -> Any:
    """The video decoders' counters, when the pipeline has a video reader or decoder."""
    import sys

    decode = sys.modules.get("stoker.kernels.cpu.video.decode")
    return decode.STATS if decode is not None else None


def run_profile(args: Any) -> int:
    threads = args.threads or os.cpu_count() or 1
    pipe = named_pipeline(args.pipeline, args.data, args.batch_size, threads)
    profiler = attach(pipe)
    for _ in range(args.warmup):
        pipe.run()
    profiler.clear()
    video = _video_stats()
    if video is not None:
        video.reset()
    start = time.perf_counter()
    for _ in range(args.batches):
        pipe.run()
    elapsed = time.perf_counter() - start
    pipe.close()
    with open(args.out, "w") as f:
        json.dump(profiler.chrome_trace(), f)
    print(f"stoker profile {args.pipeline}: {args.batches} batches of {args.batch_size} on "
          f"{threads} threads, {args.batches * args.batch_size / elapsed:,.0f} images/s")
    print(profiler.format_table())
    if video is not None and video.delivered:
        print(f"video: {video.delivered:,} frames delivered, {video.decoded:,} decoded, "
              f"{video.seeks:,} seeks: decode amplification {video.amplification:.2f} "
              "(frames decoded per frame delivered)" + (
                  "; above 3, clips start far from their key frames: shorter GOPs "
                  "(re-encoding with -g) would cut it" if video.amplification > 3 else ""))
    print(f"trace: {args.out} (chrome://tracing or ui.perfetto.dev)")
    return 0
