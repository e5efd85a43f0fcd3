"""The video reader decodes the next batch's windows while this one ends (threads that
finish their last run of a batch go on to the next batch's runs instead of waiting):
what comes out, and when an error comes, must be what decoding one batch at a time gives."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("av")

from helpers import damaged_video  # noqa: E402

from stoker import Pipeline, fn  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"
FILES = [str(VIDEOS / n) for n in ("h264_bframes.mp4", "vp9_vfr.webm", "mjpeg.avi")]


def _pipe(threads: int, files=FILES, **kw) -> Pipeline:
    pipe = Pipeline(batch_size=3, num_threads=threads, device_id=None, seed=7, **kw)
    with pipe:
        pipe.set_outputs(*fn.experimental.readers.video(
            filenames=files, labels=list(range(len(files))), sequence_length=3, stride=2,
            step=5, name="R", random_shuffle=True, seed=5, enable_frame_num="scalar"))
    pipe.build()
    return pipe


def _batches(pipe: Pipeline, count: int) -> list:
    out = []
    for _ in range(count):
        video, label, first = pipe.run()
        out.append([(np.asarray(video.at(i)).copy(), int(label.at(i)[0]),
                     int(first.at(i)[0])) for i in range(len(video))])
    return out


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(np.array_equal(p[0], q[0]) and p[1:] == q[1:]
                                 for p, q in zip(x, y, strict=True))
        for x, y in zip(a, b, strict=True))


def test_two_threads_deliver_what_one_thread_decodes_across_epochs():
    one, two = _pipe(1), _pipe(2)
    size = one.reader_meta("R")["epoch_size"]
    count = 2 * -(-size // 3) + 1  # past two epoch boundaries
    assert _same(_batches(two, count), _batches(one, count))
    one.close()
    two.close()


def test_each_window_is_decoded_once_and_the_next_batch_ahead(monkeypatch):
    from stoker.kernels.cpu.video import decode

    decoded: list[tuple] = []
    real = decode.decode_into

    def counting(decoder, frames, *args):
        decoded.append(tuple(int(f) for f in frames))
        return real(decoder, frames, *args)

    monkeypatch.setattr(decode, "decode_into", counting)
    pipe = _pipe(2, exec_async=False, exec_pipelined=False)
    _batches(pipe, 4)
    # Four batches of three, and at most the fifth's three ahead: a batch decoded ahead
    # and then decoded again when asked for would make it 21 at least.
    assert 12 <= len(decoded) <= 15
    pipe.close()


def test_a_window_that_fails_raises_at_its_own_batch_naming_the_file(tmp_path):
    good, bad = damaged_video(tmp_path)

    def batches_before_error(threads: int) -> int:
        pipe = Pipeline(batch_size=2, num_threads=threads, device_id=None, seed=1)
        with pipe:
            pipe.set_outputs(fn.experimental.readers.video(
                filenames=[str(good), str(bad)], sequence_length=4, step=8, name="R"))
        pipe.build()
        made = 0
        with pytest.raises(RuntimeError, match="damaged.mp4"):
            for _ in range(pipe.reader_meta("R")["epoch_size"]):
                pipe.run()
                made += 1
        pipe.close()
        return made

    made = batches_before_error(1)
    assert made >= 1  # the good file's windows come first
    assert batches_before_error(2) == made
