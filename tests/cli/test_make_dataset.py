"""stoker make-dataset writes decodable JPEGs of ImageNet-like sizes in class folders."""

from __future__ import annotations

import cv2
import numpy as np

from stoker.cli.main import main
from stoker.cli.make_dataset import make_dataset


def test_dataset_has_class_folders_of_decodable_jpegs(tmp_path):
    stats = make_dataset(tmp_path, images=24, classes=3, seed=1)
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["class_000", "class_001", "class_002"]
    files = sorted(tmp_path.rglob("*.jpg"))
    assert len(files) == 24 and stats["images"] == 24
    for f in files:
        data = f.read_bytes()
        assert data[:2] == b"\xff\xd8"  # JPEG start-of-image marker
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert img is not None and img.ndim == 3 and 120 <= img.shape[0] <= 1000


def test_sizes_follow_imagenet_scale(tmp_path):
    stats = make_dataset(tmp_path, images=60, classes=2, seed=2)
    h, w = stats["mean_hw"]
    assert 380 < w < 560 and 300 < h < 480  # ImageNet: about 470 x 390 on average
    assert 50 < stats["mean_kb"] < 160


def test_same_seed_writes_the_same_bytes(tmp_path):
    make_dataset(tmp_path / "a", images=4, classes=2, seed=3)
    make_dataset(tmp_path / "b", images=4, classes=2, seed=3)
    for f in (tmp_path / "a").rglob("*.jpg"):
        assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()


def test_command_line_reports_what_it_wrote(tmp_path, capsys):
    assert main(["make-dataset", str(tmp_path), "--images", "5", "--classes", "5"]) == 0
    assert "5 JPEGs in 5 classes" in capsys.readouterr().out


def test_demo_runs_the_train_pipeline_and_says_when_it_compiled(tmp_path, capsys,
                                                                monkeypatch):
    from stoker.cli import demo

    make_dataset(tmp_path, images=64, classes=2, seed=3)
    for compiling, noted in ((1e9, False), (0.0, True)):
        monkeypatch.setattr(demo, "COMPILING_SECONDS", compiling)
        assert demo.run_demo(str(tmp_path), 0.2) == 0
        out = capsys.readouterr().out
        assert "images (64, 3, 224, 224) FLOAT CHW" in out and "images/s over" in out
        assert ("stoker build-kernels" in out) == noted
        assert "wrote" not in out  # (the folder had JPEGs: none written)
