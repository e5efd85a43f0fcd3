"""Seed 002's video loader: DALI's video pipeline against decord, on clips of every video.

The recipe (the same Korean blog post as image_loader.py; 173 random 1080p videos of 300
frames, DALI 1.6 on a V100 against decord in a DataLoader) wraps a pipeline in a loader
class:

- every file under the data folder with a video suffix, sorted; a file's label is the
  name of its parent folder as an integer (``videos/3/clip.mp4`` -> 3);
- ``fn.readers.video(device="gpu", filenames, labels, sequence_length=60, stride=5,
  normalized=False, random_shuffle=True, image_type=RGB, dtype=UINT8, initial_fill=16,
  name="Reader")``: clips of 60 frames, every 5th frame (frames 0, 5, ..., 295 of a
  300-frame video), (batch, 60, H, W, 3) uint8; the label output is ``label[0]``;
- ``DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
  last_batch_policy=PARTIAL, auto_reset=True)``; the post times building the loader and
  one epoch.

The post found DALI on the GPU about 2x slower than decord on the CPU cores (97 s). Here
the reader runs on the CPU threads (``device="gpu"`` when a GPU is there and
``--device cuda``), and ``--compare-decord`` times the post's other side: decord's
``VideoReader.get_batch`` for the same windows in a DataLoader with one worker per thread
(when decord or decord2 is installed). Without ``--data`` a few small videos are
generated, each frame's index drawn into its pixels, and ``--check`` then verifies that
every clip holds frames start, start + stride, ... of its file.

Run it::

    python examples/video_loader.py --data ./videos --batch-size 8 --num-threads 8
    # CPU smoke test on generated videos (4 videos of 60 frames, clips of 8 every 3rd frame):
    python examples/video_loader.py --videos 4 --frames 60 --sequence-length 8 --stride 3 \\
        --batch-size 2 --check
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pathlib
import tempfile
import time
from collections.abc import Iterator

import torch

from stoker import fn, pipeline_def, types
from stoker.plugin import pytorch

VID_FORMATS = "avi", "m4v", "mkv", "mov", "mp4", "mpeg", "webm"  # the post's, and webm


@pipeline_def
def video_pipe(filenames: list[str], labels: list[int], sequence_length: int, stride: int,
               device: str = "cpu"):
    videos, label = fn.readers.video(device=device, filenames=filenames, labels=labels,
                                     sequence_length=sequence_length, normalized=False,
                                     random_shuffle=True, image_type=types.RGB,
                                     dtype=types.UINT8, initial_fill=16, stride=stride,
                                     name="Reader")
    return videos, label[0]


def video_files(path: str) -> list[str]:
    files = glob.glob(str(pathlib.Path(path) / "**" / "*.*"), recursive=True)
    return sorted(f for f in files if f.split(".")[-1].lower() in VID_FORMATS)


def video2label_paths(paths: list[str]) -> list[int]:
    """The parent folder's name as an integer, as in the post; folders with other names
    (``class_000``) are numbered in sorted order instead."""
    parents = [pathlib.Path(p).parts[-2] for p in paths]
    if all(p.isdigit() for p in parents):
        return [int(p) for p in parents]
    rank = {name: i for i, name in enumerate(sorted(set(parents)))}
    return [rank[p] for p in parents]


class DALIVideoLoader:
    def __init__(self, path: str, batch_size: int, num_threads: int, sequence_length: int,
                 stride: int, device: str = "cpu", seed: int = 123456):
        self.vd_files = video_files(path)
        if not self.vd_files:
            raise SystemExit(f"no videos found under {path!r}")
        self.labels = video2label_paths(self.vd_files)
        pipe = video_pipe(batch_size=batch_size, num_threads=num_threads,
                          device_id=0 if device == "gpu" else None, filenames=self.vd_files,
                          labels=self.labels, sequence_length=sequence_length,
                          stride=stride, device=device, seed=seed)
        pipe.build()
        self.dali_iterator = pytorch.DALIGenericIterator(
            pipe, ["data", "label"], reader_name="Reader",
            last_batch_policy=pytorch.LastBatchPolicy.PARTIAL, auto_reset=True)

    def __len__(self) -> int:
        return len(self.dali_iterator)

    def __iter__(self):
        return self.dali_iterator.__iter__()


def decord_loader(files: list[str], labels: list[int], batch_size: int, workers: int,
                  sequence_length: int, stride: int) -> torch.utils.data.DataLoader:
    """The post's other side: the same windows (readers.video's: a clip of
    ``sequence_length`` frames ``stride`` apart every ``sequence_length * stride`` frames),
    each read with a decord ``VideoReader`` in a DataLoader worker."""
    import decord

    span = (sequence_length - 1) * stride + 1
    windows = [(f, label, s) for f, label in zip(files, labels, strict=True)
               for s in range(0, len(decord.VideoReader(f)) - span + 1,
                              sequence_length * stride)]

    class Clips(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(windows)

        def __getitem__(self, i: int):
            path, label, start = windows[i]
            frames = list(range(start, start + span, stride))
            clip = decord.VideoReader(path, num_threads=1).get_batch(frames).asnumpy()
            return torch.from_numpy(clip), label

    return torch.utils.data.DataLoader(Clips(), batch_size=batch_size, shuffle=True,
                                       num_workers=workers)


@contextlib.contextmanager
def data_root(args: argparse.Namespace) -> Iterator[str]:
    """``--data``, or ``--videos`` generated H.264 videos (two label folders, 0 and 1),
    each frame's index drawn into its pixels (stoker/readers/video_synth.py)."""
    if args.data is not None:
        yield args.data
        return
    from stoker.readers.video_synth import write_video

    with tempfile.TemporaryDirectory(prefix="stoker-videos-") as root:
        for i in range(args.videos):
            folder = pathlib.Path(root) / str(i % 2)
            folder.mkdir(exist_ok=True)
            write_video(str(folder / f"video_{i:03d}.mp4"), "libx264", frames=args.frames,
                        size=(args.width, args.width * 3 // 4), gop=30)
        yield root


def check_clips(data: torch.Tensor, stride: int) -> None:
    """Every clip holds consecutive frames ``stride`` apart (generated videos only)."""
    from stoker.readers.video_synth import frame_indices

    for clip in data.cpu().numpy():
        got = frame_indices(clip)
        want = list(range(got[0], got[0] + stride * len(got), stride))
        if got != want:
            raise SystemExit(f"clip frames {got}, expected {want}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder of videos in integer-named label folders; "
                        "when omitted, a few small videos are generated")
    parser.add_argument("--iters", type=int, default=None, help="stop after this many batches")
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cuda: the reader decodes with NVDEC (device='gpu')")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--num-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sequence-length", type=int, default=60)
    parser.add_argument("--stride", type=int, default=5)
    parser.add_argument("--compare-decord", action="store_true",
                        help="also time decord in a DataLoader on the same windows")
    parser.add_argument("--check", action="store_true",
                        help="verify the frames of every clip (generated videos)")
    generated = parser.add_argument_group("generated videos (when --data is omitted)")
    generated.add_argument("--videos", type=int, default=8)
    generated.add_argument("--frames", type=int, default=300)
    generated.add_argument("--width", type=int, default=160)
    args = parser.parse_args()
    with data_root(args) as root:
        start_time = time.time()
        daliloader = DALIVideoLoader(root, args.batch_size, args.num_threads,
                                     args.sequence_length, args.stride,
                                     "gpu" if args.device == "cuda" else "cpu")
        clips = 0
        for step, inp in enumerate(daliloader, 1):
            data, label = inp[0]["data"], inp[0]["label"]
            print(f"video shape: {tuple(data.shape)}  label shape: {tuple(label.shape)}",
                  flush=True)
            if args.check:
                check_clips(data, args.stride)
            clips += data.shape[0]
            if step == args.iters:
                break
        print(f"epoch: {clips} clips (len {len(daliloader)})")
        if args.check:
            print("every clip holds the frames it should")
        print(f"[stoker Videoloader] time: {time.time() - start_time:.2f} s")
        if args.compare_decord:
            try:
                import decord  # noqa: F401
            except ImportError:
                print("[decord Videoloader] decord is not installed (pip install decord2)")
                return
            start_time = time.time()
            loader = decord_loader(daliloader.vd_files, daliloader.labels, args.batch_size,
                                   args.num_threads, args.sequence_length, args.stride)
            clips = 0
            for step, (data, _) in enumerate(loader, 1):
                clips += data.shape[0]
                if step == args.iters:
                    break
            print(f"[decord Videoloader] time: {time.time() - start_time:.2f} s ({clips} "
                  "clips)")


if __name__ == "__main__":
    main()
