"""The legacy video readers' finishing, timed: ``readers.video(dtype=FLOAT,
normalized=True)`` or ``readers.video_resize`` (224 x 224) over a clip set of ``stoker
make-dataset --video``, batch 8, 16-frame clips with stride 2, 2 threads: clips/s and the
CPU used, after 3 batches of warm-up. Run two trees alternately to compare them (the
machine is shared: several pairs, medians).

    PYTHONPATH=<tree> .venv/bin/python benchmarks/video_legacy.py /tmp/vds/vp9_gop30_360p video
"""

from __future__ import annotations

import argparse
import glob
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="one clip set (class folders of videos)")
    ap.add_argument("op", choices=("video", "video_resize"))
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--threads", type=int, default=2)
    opts = ap.parse_args()
    from stoker import Pipeline, fn, types

    files = sorted(f for f in glob.glob(os.path.join(opts.data, "*", "*")) if os.path.isfile(f))
    args = {"dtype": types.FLOAT, "normalized": True} if opts.op == "video" else \
        {"resize_x": 224, "resize_y": 224}
    pipe = Pipeline(batch_size=8, num_threads=opts.threads, device_id=None, seed=1)
    with pipe:
        video, label = getattr(fn.readers, opts.op)(
            filenames=files, labels=list(range(len(files))), sequence_length=16, stride=2,
            step=40, random_shuffle=True, name="R", **args)
        pipe.set_outputs(video, label)
    pipe.build()
    for _ in range(3):
        pipe.run()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(opts.batches):
        pipe.run()
    wall = time.perf_counter() - start
    print(f"{opts.op}: {opts.batches * 8 / wall:.1f} clips/s, CPU used "
          f"{(time.process_time() - cpu) / wall / opts.threads:.0%}")
    pipe.close()


if __name__ == "__main__":
    main()
