"""``stoker index-videos DIR``: builds the on-disk index of every video under a folder.

The video readers index each file the first time they meet it (demuxing the whole file:
every packet's timestamp and key flag, ``stoker/readers/video_index.py``) and keep the
index on disk, keyed by path, size and mtime. On a large dataset that first pass is a
full read of every file; this command does it ahead of training, on several threads
(demuxing releases the GIL), so that the first epoch of every process starts at once.
Files that are not videos, or are damaged, are counted and listed, not fatal.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stoker.readers.video_index import VideoError, cache_dir, cached_on_disk, index_file


def video_files(root: str) -> list[str]:
    """Every regular file under ``root`` (recursively, sorted, hidden ones left out): DALI's
    video readers take files by any name, so nothing is filtered by extension."""
    out = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(os.path.join(folder, f) for f in sorted(files) if not f.startswith("."))
    return out


def index_tree(root: str, threads: int) -> dict[str, Any]:
    """Indexes every file under ``root``; returns counts, frames and failures."""
    paths = video_files(root)
    before = sum(cached_on_disk(p) for p in paths)

    def one(path: str) -> int | str:
        try:
            return index_file(path).n_frames
        except VideoError as e:
            return str(e)

    with ThreadPoolExecutor(max(1, threads)) as pool:
        results = list(pool.map(one, paths))
    failed = [(p, r) for p, r in zip(paths, results, strict=True) if isinstance(r, str)]
    frames = sum(r for r in results if isinstance(r, int))
    return {"files": len(paths), "indexed": len(paths) - len(failed), "cached": before,
            "frames": frames, "failed": failed}


def run_index_videos(args: Any) -> int:
    if not os.path.isdir(args.root):
        raise SystemExit(f"stoker index-videos: no folder {args.root!r}")
    where = cache_dir()
    if where is None:
        raise SystemExit("stoker index-videos: STOKER_VIDEO_INDEX_DIR is 'off': there is no "
                         "on-disk index to build")
    threads = args.threads or os.cpu_count() or 1
    start = time.perf_counter()
    stats = index_tree(args.root, threads)
    print(f"stoker index-videos: {stats['indexed']} of {stats['files']} files indexed "
          f"({stats['cached']} were already, {stats['frames']:,} frames) in "
          f"{time.perf_counter() - start:.1f} s; index cache: {where}")
    for _, reason in stats["failed"]:  # each reason names its file
        print(f"  left out: {reason}")
    return 0 if stats["indexed"] or not stats["files"] else 1
