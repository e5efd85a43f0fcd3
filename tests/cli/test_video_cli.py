"""The video commands: ``stoker make-dataset --video`` (clip sets per codec x GOP x size),
``stoker index-videos`` (the index cache built ahead, damaged files listed), and the
``video`` pipeline of ``stoker bench``/``stoker profile`` with its decode amplification."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("av")
pytest.importorskip("cv2")

from stoker.cli.main import main  # noqa: E402
from stoker.readers import video_index  # noqa: E402

VIDEOS = pathlib.Path(__file__).parents[1] / "data" / "video"


@pytest.fixture(scope="module")
def clip_sets(tmp_path_factory) -> pathlib.Path:
    pytest.importorskip("skimage")
    root = tmp_path_factory.mktemp("vds")
    assert main(["make-dataset", str(root), "--video", "--videos", "3", "--frames", "40",
                 "--sizes", "180p", "--gops", "10,25"]) == 0
    return root


def test_make_dataset_video_writes_one_file_root_set_per_codec_gop_and_size(clip_sets):
    sets = sorted(p.name for p in clip_sets.iterdir())
    assert sets == ["h264_gop10_180p", "h264_gop25_180p", "vp9_gop10_180p", "vp9_gop25_180p"]
    for name in sets:
        files = sorted(clip_sets.glob(f"{name}/*/*"))
        assert [f.parent.name for f in files] == ["class_000", "class_000", "class_001"]
        gop = int(name.split("_")[1][3:])
        for f in files:
            index = video_index.scan(str(f), str(f))
            assert (index.n_frames, index.width, index.height) == (40, 320, 180)
            assert index.codec in ("h264", "vp9", "libvpx-vp9")
            assert index.keyframes.tolist() == list(range(0, 40, gop))


def test_make_dataset_video_writes_hevc_with_its_gop_and_readable_reference_flags(tmp_path):
    """``--codecs hevc``: x265 clips whose key frames fall every GOP, in one temporal
    sub-layer, so the reader can leave out frames nobody refers to (kernels/cpu/video/nal.py)."""
    pytest.importorskip("skimage")
    import av

    from stoker.kernels.cpu.video.nal import NalLayout, is_non_reference, packet_layout

    assert main(["make-dataset", str(tmp_path), "--video", "--codecs", "hevc", "--videos", "1",
                 "--frames", "30", "--sizes", "180p", "--gops", "12"]) == 0
    (clip,) = tmp_path.glob("hevc_gop12_180p/*/*.mp4")
    index = video_index.scan(str(clip), str(clip))
    assert (index.codec, index.n_frames) == ("hevc", 30)
    assert index.keyframes.tolist() == [0, 12, 24]
    with av.open(str(clip)) as c:
        stream = c.streams.video[0]
        assert packet_layout(stream) == NalLayout("hevc", 4)
        flags = [is_non_reference(bytes(p), NalLayout("hevc", 4))
                 for p in c.demux(stream) if p.size]
    assert 0 < sum(flags) < len(flags)  # B-frames nobody refers to, and references


def test_the_sets_share_their_pictures_and_differ_only_in_coding(clip_sets):
    import av
    import numpy as np

    def first(path: pathlib.Path) -> np.ndarray:
        with av.open(str(path)) as c:
            return next(c.decode(video=0)).to_ndarray(format="rgb24").astype(int)

    a = first(next(clip_sets.glob("h264_gop10_180p/class_000/*")))
    b = first(next(clip_sets.glob("vp9_gop25_180p/class_000/*")))
    assert np.abs(a - b).mean() < 6  # the same picture, two lossy codings
    assert a.std() > 20  # photographs, not a flat field


def test_make_dataset_video_refuses_unknown_codecs_and_sizes(tmp_path):
    with pytest.raises(SystemExit, match="unknown codec 'av2'"):
        main(["make-dataset", str(tmp_path), "--video", "--codecs", "av2"])
    with pytest.raises(SystemExit, match="unknown size '4k'"):
        main(["make-dataset", str(tmp_path), "--video", "--sizes", "4k"])


def test_index_videos_builds_the_cache_once_and_lists_what_it_left_out(tmp_path,
                                                                       monkeypatch, capsys):
    data = tmp_path / "data" / "sub"
    data.mkdir(parents=True)
    for name in ("vp9_cfr.webm", "h264_bframes.mp4", "random.mkv", "empty.mp4"):
        shutil.copy(VIDEOS / name, data / name)
    cache = tmp_path / "cache"
    monkeypatch.setenv("STOKER_VIDEO_INDEX_DIR", str(cache))
    video_index.clear_memory_cache()
    assert main(["index-videos", str(tmp_path / "data"), "--threads", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 of 4 files indexed (0 were already, 88 frames)" in out
    assert "random.mkv" in out and "empty.mp4" in out
    assert len(list(cache.glob("*/*.npz"))) == 2
    video_index.clear_memory_cache()
    assert main(["index-videos", str(tmp_path / "data")]) == 0
    assert "(2 were already, 88 frames)" in capsys.readouterr().out
    # A reader in a fresh process finds the cached index: it does not demux again.
    assert video_index.cached_on_disk(str(data / "vp9_cfr.webm"))


def test_index_videos_refuses_a_missing_folder_or_a_disabled_cache(tmp_path, monkeypatch):
    with pytest.raises(SystemExit, match="no folder"):
        main(["index-videos", str(tmp_path / "nope")])
    monkeypatch.setenv("STOKER_VIDEO_INDEX_DIR", "off")
    with pytest.raises(SystemExit, match="off"):
        main(["index-videos", str(tmp_path)])


def test_profile_reports_the_decode_amplification(clip_sets, tmp_path):
    # GOP 25, 40 frames: each file holds one window (frames 0, 2, ..., 30), which starts at
    # a key frame and decodes 31 frames for 16 (VP9: every frame is a reference): 31/16.
    out = subprocess.run(
        [sys.executable, "-m", "stoker.cli.main", "profile", "video", "--data",
         str(clip_sets / "vp9_gop25_180p"), "--batch-size", "3", "--batches", "2",
         "--warmup", "1", "--threads", "2", "--out", str(tmp_path / "t.json")],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "STOKER_VIDEO_INDEX_DIR": "off"}).stdout
    assert "experimental.readers.video" in out
    assert "decode amplification 1.94" in out


def test_bench_runs_the_video_pipeline_and_prints_clips_per_second(clip_sets):
    out = subprocess.run(
        [sys.executable, "-m", "stoker.cli.main", "bench", "video", "--data",
         str(clip_sets / "vp9_gop10_180p"), "--compare", "torchvision", "--runs", "1",
         "--seconds", "0.3", "--batch-size", "2"],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "STOKER_VIDEO_INDEX_DIR": "off"}).stdout
    assert "torchvision: no recipe for video, skipped" in out
    assert "clips/s" in out and "decode amplification" in out
