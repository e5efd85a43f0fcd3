"""The GPU video path's decoders (``kernels/gpu/video/nvdec.py``) on torch CPU tensors: a
file's clips go to one decoder in frame order, and decoders stay open between batches
(an NVDEC session costs more to set up than a short clip decodes), for the fake NVDEC
backend and the CPU fallback alike; outputs stay in request order, and a decoder whose
clip failed is closed, not reused."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("av")
pytest.importorskip("torch")

from stoker import Pipeline, fn  # noqa: E402
from stoker.kernels.gpu.video import nvdec  # noqa: E402
from stoker.readers.video_index import VideoError, index_file  # noqa: E402
from stoker.readers.video_synth import frame_indices  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"
FILES = [str(VIDEOS / "hevc.mp4"), str(VIDEOS / "vp9_cfr.webm")]


@pytest.fixture(autouse=True)
def _fresh_decoders(monkeypatch):
    """Each test starts with no decoder open, and closes what it left open."""
    monkeypatch.setattr(nvdec, "OPEN", nvdec._OpenDecoders(nvdec.KEPT_OPEN))
    yield
    nvdec.OPEN.close()


def _request(path, frames):
    return nvdec.ClipRequest(path, index_file(path), np.asarray(frames, np.int64))


@pytest.mark.parametrize("backend", ["fake", "off"])
def test_gpu_reader_keeps_one_decoder_per_file_across_batches(monkeypatch, backend):
    monkeypatch.setenv("STOKER_GPU_ON_CPU", "1")
    monkeypatch.setenv("STOKER_NVDEC", backend)
    pipe = Pipeline(batch_size=4, num_threads=2, device_id=0, seed=1)
    with pipe:
        video, label = fn.readers.video(device="gpu", filenames=FILES, labels=[0, 1],
                                        sequence_length=4, stride=2, step=5,
                                        random_shuffle=True, name="R")
        pipe.set_outputs(video, label)
    pipe.build()
    epoch = pipe.reader_meta("R")["epoch_size"]
    seen = []
    for _ in range(2 * -(-epoch // 4)):  # two epochs
        video, label = pipe.run()
        cpu = video.as_cpu()
        for j in range(4):
            got = frame_indices(np.array(cpu.at(j)))
            assert np.diff(got).tolist() == [2, 2, 2], got  # the clip the window names
            seen.append((int(np.array(label.as_cpu().at(j))[0]), got[0]))
    pipe.close()
    assert len(set(seen)) == epoch  # every window once an epoch (the padding repeats)
    # Each batch's clips of one file are one run on one decoder, kept for the next batch:
    # at most one decoder a file at once, at most two files; a decoder per clip before.
    assert nvdec.OPEN.opened <= len(FILES), nvdec.OPEN.opened


def test_runs_group_a_files_clips_in_frame_order_and_keep_request_order():
    a, b = FILES
    requests = [_request(a, [20, 22]), _request(b, [3, 4]), _request(a, [1, 3]),
                _request(b, [-1, 0]), nvdec.ClipRequest(b"bytes", None, np.arange(2))]
    runs = nvdec._runs(requests)
    assert sorted(map(sorted, runs)) == [[0, 2], [1, 3], [4]]
    assert [2, 0] in runs and [3, 1] in runs  # by first wanted frame (padding left out)
    assert len(runs[-1]) == 1  # longest first

    out = nvdec.decode_clips(requests[:4], device=_cpu(), cpu_map=_serial)
    for r, clip in zip(requests[:4], out, strict=True):
        want = [int(k) for k in r.frames]
        got = frame_indices(clip.numpy())
        assert [g for g, k in zip(got, want, strict=True) if k >= 0] == [k for k in want if k >= 0]
    assert nvdec.OPEN.opened == 2


def test_a_failed_clip_closes_its_decoder_and_the_next_clip_opens_a_fresh_one():
    path = FILES[0]
    good = _request(path, [0, 1])
    with nvdec.OPEN.decoder(good, hwaccel=False) as dec:
        pass
    with pytest.raises(VideoError, match="frame 10000"):
        with nvdec.OPEN.decoder(good, hwaccel=False) as again:
            assert again is dec  # the idle one, reused
            again.read(np.array([10000]), np.empty((1, 1, 1, 3), np.uint8))
    assert not nvdec.OPEN.idle  # closed, not given back
    with nvdec.OPEN.decoder(good, hwaccel=False) as fresh:
        assert fresh is not dec
    assert nvdec.OPEN.opened == 2


def test_idle_decoders_are_capped_least_recently_used_first():
    pool = nvdec._OpenDecoders(most=1)
    a, b = (_request(p, [0]) for p in FILES)
    with pool.decoder(a, hwaccel=False) as da:
        pass
    with pool.decoder(b, hwaccel=False):
        pass
    assert [k[0] for k in pool.idle] == [FILES[1]]  # a's closed when b's came back
    with pool.decoder(a, hwaccel=False) as again:
        assert again is not da
    pool.close()
    assert not pool.idle


def _cpu():
    import torch

    return torch.device("cpu")


def _serial(fn, n):
    return [fn(k) for k in range(n)]
