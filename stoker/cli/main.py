"""``stoker`` command line entry point."""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    from stoker.cli.pipelines import NAMES

    parser = argparse.ArgumentParser(prog="stoker", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build a sample dataset and run a pipeline on it")
    demo.add_argument("--data", default="data/sample", help="where to write the sample dataset")
    demo.add_argument("--seconds", type=float, default=3.0)
    bench = sub.add_parser("bench", help="benchmark a pipeline against its peers")
    bench.add_argument("pipeline", help=f"one of {', '.join(NAMES)}, or file.py[:function] "
                       "(a @pipeline_def function, or one returning a pipeline; default "
                       "name 'pipeline'), written against stoker or DALI")
    bench.add_argument("--data", help="image folder for the file pipelines (stoker make-dataset)")
    bench.add_argument("--compare", default="dali,torchvision",
                       help="comma-separated peers: dali, torchvision ('' for none)")
    bench.add_argument("--cold", action="store_true",
                       help="start as a fresh install does: an empty kernel cache that "
                       "stoker build-kernels fills first (timed apart)")
    bench.add_argument("--uncompiled", action="store_true",
                       help="start with an empty kernel cache and no build-kernels step "
                       "(the first pipeline compiles: what skipping that step costs)")
    bench.add_argument("--batch-size", type=int, default=256)
    bench.add_argument("--threads", type=int, default=0, help="0 = all cores")
    bench.add_argument("--seconds", type=float, default=3.0, help="per measured run")
    bench.add_argument("--runs", type=int, default=5)
    prof = sub.add_parser("profile", help="time each operator; write a Chrome trace")
    prof.add_argument("pipeline", help=f"one of {', '.join(NAMES)}, or file.py:function")
    prof.add_argument("--data", help="image folder for the file pipelines")
    prof.add_argument("--batch-size", type=int, default=256)
    prof.add_argument("--threads", type=int, default=0, help="0 = all cores")
    prof.add_argument("--batches", type=int, default=50)
    prof.add_argument("--warmup", type=int, default=5)
    prof.add_argument("--out", default="stoker-trace.json")
    make = sub.add_parser("make-dataset", help="write an ImageNet-like folder of JPEGs "
                          "(or, with --video, sets of video clips)")
    make.add_argument("root", help="output folder (one sub-folder per class)")
    make.add_argument("--images", type=int, default=1000)
    make.add_argument("--classes", type=int, default=None,
                      help="class folders (default 10; with --video 2)")
    make.add_argument("--quality", type=int, default=90)
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("--video", action="store_true",
                      help="video clip sets, one folder per codec x GOP x size")
    make.add_argument("--videos", type=int, default=2, help="--video: clips per set")
    make.add_argument("--frames", type=int, default=300, help="--video: frames per clip")
    make.add_argument("--codecs", default="h264,vp9", help="--video: h264, hevc, vp9")
    make.add_argument("--gops", default="30,250", help="--video: key frame intervals")
    make.add_argument("--sizes", default="1080p,360p",
                      help="--video: 1080p, 720p, 360p, 180p")
    make.add_argument("--verbose", action="store_true", help="--video: name each clip")
    index = sub.add_parser("index-videos", help="build the on-disk index of every video "
                           "under a folder (what the video readers do on first use)")
    index.add_argument("root", help="folder to index (recursively)")
    index.add_argument("--threads", type=int, default=0, help="0 = all cores")
    kernels = sub.add_parser("build-kernels", help="compile stoker's kernels for this CPU "
                             "ahead of the first pipeline (an install step)")
    kernels.add_argument("--jobs", type=int, default=0, help="worker processes (0 = one "
                         "per group of pipelines)")
    docs = sub.add_parser("docs", help="write the operator reference (docs/operators.md) "
                          "from the registry")
    docs.add_argument("--out", help="where to write it (default: docs/operators.md)")
    docs.add_argument("--check", action="store_true",
                      help="write nothing; fail if the file is not what it would be")
    tfidx = sub.add_parser("tfrecord-index", help="write DALI's index of a TFRecord file "
                           "(tfrecord2idx)")
    tfidx.add_argument("file", help="TFRecord file (gzip-compressed ones too)")
    tfidx.add_argument("index", nargs="?", help="index file to write (default: FILE.idx)")
    wdsidx = sub.add_parser("webdataset-index", help="write DALI's v1.2 index of a "
                            "webdataset tar shard (wds2idx)")
    wdsidx.add_argument("file", help="tar shard")
    wdsidx.add_argument("index", nargs="?", help="index file to write (default: FILE.idx)")
    recidx = sub.add_parser("recordio-index", help="write MXNet's index of a RecordIO .rec "
                            "file (rec2idx)")
    recidx.add_argument("file", help=".rec file")
    recidx.add_argument("index", nargs="?", help="index file to write (default: FILE.idx)")
    args = parser.parse_args(argv)
    if args.command == "docs":
        from stoker.cli.docs import run_docs

        return run_docs(args.out, args.check)
    if args.command == "build-kernels":
        from stoker.cli.build_kernels import build_kernels

        return build_kernels(args.jobs)
    if args.command.endswith("-index"):
        from stoker.cli.indexes import run_index

        return run_index(args.command[:-len("-index")], args)
    if args.command == "demo":
        from stoker.cli.demo import run_demo

        return run_demo(args.data, args.seconds)
    if args.command == "make-dataset" and args.video:
        from stoker.cli.make_videos import run_make_video_dataset

        args.classes = 2 if args.classes is None else args.classes
        return run_make_video_dataset(args)
    if args.command == "make-dataset":
        from stoker.cli.make_dataset import run_make_dataset

        args.classes = 10 if args.classes is None else args.classes
        return run_make_dataset(args)
    if args.command == "index-videos":
        from stoker.cli.index_videos import run_index_videos

        return run_index_videos(args)
    if args.command == "profile":
        from stoker.cli.profile import run_profile

        return run_profile(args)
    from stoker.cli.bench import run_bench
    from stoker.cli.pipelines import is_user_pipeline

    if args.pipeline not in NAMES and not is_user_pipeline(args.pipeline):
        parser.error(f"bench: pipeline {args.pipeline!r} is neither one of "
                     f"{', '.join(NAMES)} nor a file.py[:function]")
    path = args.pipeline.partition(":")[0]
    if is_user_pipeline(args.pipeline) and not os.path.isfile(path):
        raise SystemExit(f"stoker: no pipeline file {path!r}")
    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
