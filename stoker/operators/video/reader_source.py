"""The source instance behind the video readers: windows in, decoded clips out.

It shares every reader's machinery (``IndexedReader``): the read order over the
samples (sharding, exact-permutation shuffles, epochs, padding, ``reader_meta``), the
checkpoint state and ``on_error="skip"``'s top-ups; only the samples are windows of
videos instead of files. Per batch, the windows are sorted by (file, first frame) and cut
into runs of one file, so one thread decodes adjacent windows with one decoder in one
forward pass; the runs are spread over the pipeline's threads (FFmpeg releases the GIL).
A file that fails to decode is named in the error, or, with ``on_error="skip"``, its
sample is skipped and reported.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, SampleError
from stoker.graph.node import OpNode
from stoker.kernels.cpu import buffers
from stoker.operators.readers.base import IndexedReader
from stoker.readers.video_dataset import VideoDataset, entries_from_args
from stoker.readers.video_index import VideoError

# The next batch is decoded ahead only when its clips take at most this much memory (a
# batch more in flight): 8 clips of 16 frames at 360p are 88 MB, and gained 3-13% on 2
# cores; at 1080p (800 MB) the 2 cores gained nothing measurable and peak RSS rose 0.5-0.8
# GB, past DALI's.
AHEAD_MOST_BYTES = 256 << 20

# The contract battery's examples read the repository's test data.
EXAMPLE_VIDEO = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 3,
                             "tests", "data", "video", "vp9_cfr.webm")


class VideoReader(IndexedReader):
    """Source instance of experimental.readers.video, readers.video and video_resize."""

    legacy = False
    reads_ahead = True  # (the next batch's windows decode on threads this one leaves idle)
    finishes = False  # whether ``finish`` does work (then on the pool, clip by clip)

    def __init__(self, op: OpNode, pipeline: Any):
        self.threads = max(1, int(getattr(pipeline, "num_threads", 1) or 1))
        self.pool: Any = None
        # The next batch's (peeked ids, _Decoding), begun while this one is decoded.
        self._ahead: tuple[Any, _Decoding] | None = None
        if "pad_mode" in op.arg_nodes:
            raise ArgumentError(f"{op.describe()}: a per-sample 'pad_mode' is not supported "
                                "by the readers; give a constant")
        super().__init__(op, pipeline)

    def attach_pool(self, pool: Any) -> None:
        """The executor's worker pool: windows decode on the pipeline's threads."""
        self.pool = pool

    def _build_index(self) -> VideoDataset:
        who = self._who()
        args = {**self.args, "_legacy": self.legacy}
        entries, self.has_labels = entries_from_args(args, who)
        return VideoDataset(entries, args, who, self.threads, legacy=self.legacy)

    # -- a batch ----------------------------------------------------------------------------
    def _read(self, ids: Any, bctx: Any) -> tuple[list, list[str]]:
        data = self.index
        if not self.reads_ahead:
            windows = self._windows(data, ids)
            video = self.decode(data, windows, bctx)
        else:
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] is ids:  # begun at the last batch, for these
                decoding = ahead[1]
            else:
                if ahead is not None:
                    ahead[1].cancel()  # (the stream moved: a checkpoint restored)
                decoding = _Decoding(self, data, self._windows(data, ids))
            following = None
            if bctx.failures is None and self.pool is not None and self.pool.num_threads > 1:
                # The next batch's runs queue behind this one's: threads that finish their
                # last run of this batch go on to them instead of waiting for the others.
                peek = self._cursor().peek(len(ids))
                next_windows = self._windows(data, peek)
                if self._clip_bytes(data, next_windows) <= AHEAD_MOST_BYTES:
                    following = _Decoding(self, data, next_windows)
                    self._ahead = (peek, following)
            windows = decoding.windows
            video = decoding.result(bctx, following)
        return self.outputs(data, windows, video), [data.entries[e].path for e, _ in windows]

    def decode(self, data: VideoDataset, windows: list, bctx: Any) -> Any:
        """The batch's clips: one dense array when every file has one size."""
        return _Decoding(self, data, windows).result(bctx)

    @staticmethod
    def _windows(data: VideoDataset, ids: Any) -> list:
        """The (file, frames) windows of the samples ``ids`` names."""
        return [data.frames(i) for i in ids.index.tolist()]

    def _clip_bytes(self, data: VideoDataset, windows: list) -> int:
        """The memory the windows' clips take, decoded (uint8) and finished (the legacy
        readers' float or resized clips, counted at the decoded size)."""
        from stoker import types

        per_value = 1
        if self.finishes:
            per_value += np.dtype(types.to_numpy(self.args.get("dtype", types.UINT8))).itemsize
        length = self.args["sequence_length"]
        return per_value * sum(length * data.indexes[e].height * data.indexes[e].width * 3
                               for e, _ in windows)

    def close(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead[1].cancel()
        super().close()

    def finish(self, clip: np.ndarray, out: np.ndarray | None = None) -> Any:
        """One decoded clip as the reader delivers it, where ``finishes``: the legacy
        readers' float and resized clips; written into ``out`` when given
        (``finished_as`` said its shape and type)."""
        return clip

    def finished_as(self, clip: np.ndarray) -> tuple | None:
        """(shape, dtype) of ``finish(clip)`` where known before finishing, else None."""
        return None

    def fill_value(self) -> np.ndarray | None:
        fill = self.args.get("fill_value")
        if fill is None:
            return None
        return np.asarray(fill if len(fill) > 1 else fill * 3, np.int64).clip(0, 255) \
            .astype(np.uint8)

    def ycbcr(self) -> bool:
        from stoker import types

        return int(self.args.get("image_type", 0)) == int(types.YCbCr)

    def outputs(self, data: VideoDataset, windows: list, video: Any) -> list:
        a = self.args
        outs = [video]
        n = len(windows)
        if self.has_labels:
            outs.append(np.asarray([data.entries[e].label for e, _ in windows],
                                   np.int32).reshape(n, 1))
        mode = frame_num_mode(a.get("enable_frame_num"))
        if mode == "scalar":
            outs.append(np.asarray([f[0] for _, f in windows], np.int32).reshape(n, 1))
        elif mode == "sequence":
            outs.append(np.stack([f for _, f in windows]).astype(np.int32))
        if a.get("enable_timestamps"):
            outs.append(np.stack([data.indexes[e].timestamps(f) for e, f in windows]))
        return outs


class _Decoding:
    """A batch of windows being decoded: its runs (``plan_runs``) are queued on the pool's
    workers when it is made, and ``result`` collects them. A failed window is kept with
    its error, which ``result`` raises or (``on_error="skip"``) reports."""

    def __init__(self, reader: VideoReader, data: VideoDataset, windows: list):
        self.reader, self.data, self.windows = reader, data, windows
        n = len(windows)
        self.length = reader.args["sequence_length"]
        shapes = {(data.indexes[e].height, data.indexes[e].width) for e, _ in windows}
        self.dense = None
        if len(shapes) == 1:
            h, w = shapes.pop()
            self.dense = buffers.empty((n, self.length, h, w, 3), np.uint8)
        self.fill, self.ycbcr = reader.fill_value(), reader.ycbcr()
        self.out: list[Any] = [None] * n
        self.errors: dict[int, BaseException] = {}
        self.cancelled = False
        # With ``reader.finishes``, each clip is finished on the thread that decoded it,
        # into one block of finished clips where they agree (``placed``).
        self.finishing = reader.finishes
        self.block: np.ndarray | None = None
        self.placed = [False] * n
        self.lock = threading.Lock()
        self.runs = plan_runs(windows, reader.threads, lambda e: data.indexes[e].seek_frame)
        pool = reader.pool
        self.job = pool.post(self._run, len(self.runs)) \
            if pool is not None and pool.num_threads > 1 and len(self.runs) > 1 else None

    def cancel(self) -> None:
        """Runs not yet begun do nothing (the batch will not be asked for)."""
        self.cancelled = True
        self.job = None  # (the job holds this through its function: no cycle to collect)

    def _run(self, k: int) -> None:
        from stoker.kernels.cpu.video.decode import decode_into, drop_thread_decoder, thread_decoder

        for row in self.runs[k]:
            if self.cancelled:
                return
            e, frames = self.windows[row]
            index = self.data.indexes[e]
            target = self.dense[row] if self.dense is not None else \
                buffers.empty((self.length, index.height, index.width, 3), np.uint8)
            try:
                decode_into(thread_decoder(index), frames, self.fill, self.ycbcr, target)
            except Exception as err:  # the decoder is in doubt: open it afresh
                drop_thread_decoder(index)
                self.errors[row] = err
                continue
            self.out[row] = self._finished(row, target) if self.finishing else target

    def _finished(self, row: int, clip: np.ndarray) -> np.ndarray:
        """The reader's ``finish`` of one decoded clip, in the batch's block of finished
        clips when it has the block's shape and type (the first clip makes the block):
        written there by ``finish`` where the reader knows that shape beforehand."""
        reader = self.reader
        known = reader.finished_as(clip)
        block = self._block(*known) if known is not None else None
        if block is not None:
            reader.finish(clip, block[row])
        else:
            done = reader.finish(clip)
            block = self._block(done.shape, done.dtype)
            if block is None:
                return done
            block[row] = done
        self.placed[row] = True
        return block[row]

    def _block(self, shape: tuple, dtype: np.dtype) -> np.ndarray | None:
        """The batch's block of finished clips if a clip of ``shape`` and ``dtype`` fits
        it (made for the first one asked; None where the batch's clips differ in size)."""
        if self.dense is None:
            return None
        if self.block is None:
            with self.lock:
                if self.block is None:
                    self.block = buffers.empty((len(self.windows), *shape), dtype)
        block = self.block
        return block if block.shape[1:] == tuple(shape) and block.dtype == dtype else None

    def result(self, bctx: Any, following: _Decoding | None = None) -> Any:
        """The clips (one dense array when every file has one size), once every run is
        done: this thread takes runs too, then, while the workers end theirs, runs of
        ``following`` (the next batch's)."""
        from stoker.executor.context import FAILED

        job = self.job
        if job is None:
            for k in range(len(self.runs)):
                self._run(k)
        else:
            job.work()
            while not job.done.is_set():
                if following is None or following.job is None or not following.job.one():
                    break
            self.job = None  # (see cancel)
            self.reader.pool.collect(job)
        reader = self.reader
        for row, err in sorted(self.errors.items()):
            path = self.data.entries[self.windows[row][0]].path
            reason = str(err) if isinstance(err, VideoError) else \
                f"cannot decode video {path!r}: {type(err).__name__}: {err}"
            message = f"{reader._who()}: {reason}"
            if not bctx.fail(row, message):
                raise SampleError(message, op=reader.op.schema.fn_name, source=path,
                                  where=reader.op.where) from err
            self.out[row] = FAILED
        if self.finishing:  # (each clip finished on the thread that decoded it)
            return self.block if self.block is not None and all(self.placed) else self.out
        return self.dense if self.dense is not None and not self.errors else self.out


def plan_runs(windows: list, threads: int, seek_frame: Any = None) -> list[list[int]]:
    """Rows of the batch in runs: sorted by (file, first frame), cut where the file
    changes, and long runs cut so every thread gets work. With ``seek_frame`` (file ->
    its index's ``seek_frame``), the longest runs first: a run costs about the frames
    from the key frame before its first frame to its last, and the threads take runs in
    order, so the batch ends on short runs instead of one thread decoding a long one
    while the others wait."""
    order = sorted(range(len(windows)), key=lambda r: (windows[r][0], _first(windows[r][1])))
    runs: list[list[int]] = []
    for row in order:
        if runs and windows[runs[-1][-1]][0] == windows[row][0]:
            runs[-1].append(row)
        else:
            runs.append([row])
    most = max(1, -(-len(windows) // threads))
    cut: list[list[int]] = []
    for r in runs:
        cut.extend(r[i:i + most] for i in range(0, len(r), most))
    if seek_frame is not None:
        def cost(run: list[int]) -> int:
            e = windows[run[0]][0]
            last = max(int(np.max(windows[r][1], initial=0)) for r in run)
            return last - seek_frame(e)(_first(windows[run[0]][1]))

        cut.sort(key=cost, reverse=True)
    return cut


def _first(frames: np.ndarray) -> int:
    real = frames[frames >= 0]
    return int(real.min()) if len(real) else 0


def frame_num_mode(value: Any) -> str:
    if value is True:
        return "scalar"
    if value is False or value is None:
        return "none"
    return str(value)
