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


def _legacy(threads: int, op: str, **kw) -> list:
    """Three batches of the legacy reader's clips (as float32 arrays) and labels."""
    pipe = Pipeline(batch_size=3, num_threads=threads, device_id=None, seed=7)
    with pipe:
        video, label = getattr(fn.readers, op)(
            filenames=FILES, labels=[0, 1, 2], sequence_length=4, step=7, name="R",
            random_shuffle=True, seed=5, **kw)
        pipe.set_outputs(video, label)
    pipe.build()
    out = []
    for _ in range(3):
        video, label = pipe.run()
        out.append([(np.asarray(video.at(i)), int(label.at(i)[0])) for i in range(len(video))])
    pipe.close()
    return out


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_legacy_float_clips_are_the_uint8_clips_scaled(threads):
    """readers.video(dtype=FLOAT) finishes each clip on the thread that decoded it: the
    values are the uint8 clip's as float32, over 255 with normalized=True."""
    from stoker import types

    raw = _legacy(1, "video")
    for normalized in (False, True):
        got = _legacy(threads, "video", dtype=types.FLOAT, normalized=normalized)
        for batch, want in zip(got, raw, strict=True):
            for (clip, label), (u8, want_label) in zip(batch, want, strict=True):
                expected = u8.astype(np.float32)
                if normalized:
                    expected *= np.float32(1 / 255)
                assert clip.dtype == np.float32 and label == want_label
                np.testing.assert_array_equal(clip, expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_video_resize_clips_are_the_clips_through_fn_resize(threads):
    """readers.video_resize: each clip through fn.resize (the same size arguments), one
    dense batch when the clips agree."""
    raw = _legacy(1, "video")
    got = _legacy(threads, "video_resize", resize_x=40, resize_y=30)
    for batch, want in zip(got, raw, strict=True):
        for (clip, label), (u8, want_label) in zip(batch, want, strict=True):
            resized = Pipeline(batch_size=1, num_threads=1, device_id=None)
            with resized:
                frames = fn.external_source(source=[[u8]], layout="FHWC")
                resized.set_outputs(fn.resize(frames, resize_x=40, resize_y=30))
            resized.build()
            expected = np.asarray(resized.run()[0].at(0))
            resized.close()
            assert clip.shape == (4, 30, 40, 3) and label == want_label
            np.testing.assert_array_equal(clip, expected)


def test_a_batch_too_large_to_hold_twice_is_not_decoded_ahead(monkeypatch):
    """The next batch is decoded ahead only when its clips fit AHEAD_MOST_BYTES (it is one
    batch more in memory); above it, each batch is decoded when asked, with the same
    clips."""
    from stoker.operators.video import reader_source

    want = _batches(_pipe(1), 3)
    monkeypatch.setattr(reader_source, "AHEAD_MOST_BYTES", 0)
    pipe = _pipe(2)
    got = _batches(pipe, 3)
    reader = next(inst for inst in pipe._runtime.executor.instances.values()
                  if isinstance(inst, reader_source.VideoReader))
    assert reader._ahead is None
    assert _same(got, want)
    pipe.close()
