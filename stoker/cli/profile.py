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


def run_profile(args: Any) -> int:
    threads = args.threads or os.cpu_count() or 1
    pipe = named_pipeline(args.pipeline, args.data, args.batch_size, threads)
    profiler = attach(pipe)
    for _ in range(args.warmup):
        pipe.run()
    profiler.clear()
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
    print(f"trace: {args.out} (chrome://tracing or ui.perfetto.dev)")
    return 0
