"""Every script in examples/ runs end to end on a tiny generated dataset, on the CPU.

Each runs as a subprocess, as a user would run it (the DDP one under torchrun with two
gloo processes), and the test reads what it prints: finite losses, batch shapes, epoch
sizes, alignment of the paired images.
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import socket
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("skimage")  # stoker make-dataset's photographs

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# Small images and one torch thread keep each run to a few seconds on two cores.
TINY = ["--device", "cpu", "--image-size", "64", "--num-threads", "1"]


def run_example(*args: str, module: bool = False) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, *(["-m"] if module else []), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                          cwd=EXAMPLES.parent)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def losses(out: str) -> list[float]:
    return [float(v) for v in re.findall(r"loss (\S+)", out)]


def shapes(out: str, key: str = "shape") -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in re.findall(r"\d+", m))
            for m in re.findall(rf"{key} \(([\d, ]*)\)", out)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_example_documents_its_recipe_and_how_to_run_it():
    scripts = sorted(p for p in EXAMPLES.glob("*.py") if p.name != "common.py")
    assert len(scripts) >= 5
    for script in scripts:
        text = script.read_text()
        assert text.startswith('"""') and "Run it::" in text, script.name


def test_train_resnet_single_process_with_amp():
    out = run_example(str(EXAMPLES / "train_resnet.py"), *TINY, "--iters", "2", "--images",
                      "16", "--crop", "32", "--batch-size", "4", "--amp")
    values = losses(out)
    assert len(values) == 2 and all(math.isfinite(v) for v in values), out
    assert shapes(out) == [(4, 3, 32, 32)] * 2
    assert "val: 4 images" in out  # validated once after the cut-short epoch


def test_train_resnet_ddp_two_processes_under_torchrun():
    # 17 training images: shards of 8 and 9, so rank 0's third batch is empty (PARTIAL keeps
    # the iteration count equal on both ranks); 5 validation images: shards of 2 and 3.
    out = run_example("torch.distributed.run", "--nproc_per_node=2",
                      f"--master_port={free_port()}", str(EXAMPLES / "train_resnet.py"),
                      "--ddp", *TINY, "--images", "17", "--val-images", "5", "--epochs", "1",
                      "--crop", "32", "--batch-size", "4", module=True)
    assert "rank 0/2 on cpu: 3 train batches per epoch" in out
    values = losses(out)
    assert len(values) == 3 and all(math.isfinite(v) for v in values), out
    assert shapes(out) == [(4, 3, 32, 32), (4, 3, 32, 32), (0, 3, 32, 32)]
    assert "epoch 0 val: 5 images" in out  # every validation image once across both ranks


def test_cpu_pipeline_rebuilt_every_epoch_normalizes_on_the_device():
    out = run_example(str(EXAMPLES / "train_cpu_pipeline.py"), *TINY, "--images", "8",
                      "--crop", "32", "--batch-size", "4", "--epochs", "2",
                      "--rebuild-per-epoch", "--fp16")
    values = losses(out)
    assert len(values) == 4 and all(math.isfinite(v) for v in values), out
    assert out.count("(4, 3, 32, 32) bfloat16") == 4  # NCHW, converted by DeviceFeeder
    assert "epoch 1 done" in out and "(pipeline rebuilt)" in out


def test_image_loader_resizes_to_square_with_partial_last_batch_and_auto_reset():
    out = run_example(str(EXAMPLES / "image_loader.py"), *TINY, "--images", "10",
                      "--batch-size", "4", "--size", "80", "--epochs", "2")
    per_epoch = [(4, 80, 80, 3), (4, 80, 80, 3), (2, 80, 80, 3)]
    assert shapes(out, "image shape:") == per_epoch * 2
    assert shapes(out, "label shape:") == [(4,), (4,), (2,)] * 2
    for epoch in (0, 1):
        assert f"epoch {epoch}: 10 images in 3 batches (len 3)" in out


def test_paired_loader_gives_both_images_the_same_crop_and_flip():
    out = run_example(str(EXAMPLES / "paired_deblur_loader.py"), *TINY, "--images", "8",
                      "--batch-size", "3", "--resize", "48", "--crop", "32", "--check")
    assert shapes(out, "imgs") == [(3, 3, 32, 32), (3, 3, 32, 32), (2, 3, 32, 32)] * 2
    assert shapes(out, "gts") == shapes(out, "imgs")
    assert "epoch 0: 8 pairs of 8" in out and "epoch 1: 8 pairs of 8" in out
    assert "aligned pairs: 16/16" in out
    for low, high in re.findall(r"range \[(\S+), (\S+)\]", out):
        assert -1.0 <= float(low) <= float(high) <= 1.0


def test_paired_loader_check_catches_separately_drawn_crops():
    out = run_example(str(EXAMPLES / "paired_deblur_loader.py"), *TINY, "--images", "8",
                      "--batch-size", "4", "--resize", "48", "--crop", "32", "--check",
                      "--epochs", "1", "--no-share")
    aligned, pairs = (int(v) for v in re.search(r"aligned pairs: (\d+)/(\d+)", out).groups())
    assert pairs == 8 and aligned < 4, out


def test_plain_loop_runs_epochs_with_len_and_keeps_batches_valid():
    out = run_example(str(EXAMPLES / "plain_loop.py"), *TINY, "--images", "10",
                      "--batch-size", "4", "--crop", "32", "--epochs", "2", "--keep-check")
    assert "len(it) = 3 batches per epoch" in out
    values = losses(out)
    assert len(values) == 6 and all(math.isfinite(v) for v in values), out
    for epoch in (0, 1):
        assert (f"epoch {epoch}: 3 batches, 10 images; first batch unchanged after the "
                "epoch: True") in out


def _torchvision_path() -> dict:
    """PYTHONPATH with the torchvision stand-in when the real one cannot be imported."""
    probe = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True)
    if probe.returncode == 0:
        return {}
    standins = pathlib.Path(__file__).parent / "standins"
    return {"PYTHONPATH": os.pathsep.join([str(standins), os.environ.get("PYTHONPATH", "")])}


def test_dataloader_proxy_recipe_runs_as_written_for_dali():
    # DALI's recipe: ImageFolder with a path loader, the server's proxy as transform,
    # worker processes; device="mixed" runs on the CPU here (one warning).
    env = {**os.environ, "OMP_NUM_THREADS": "1", **_torchvision_path()}
    cmd = [sys.executable, str(EXAMPLES / "dataloader_proxy.py"), "--device", "cpu",
           "--image-size", "64", "--images", "40", "--classes", "4", "--batch-size", "16",
           "--iters", "2", "--workers", "2", "--num-threads", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                          cwd=EXAMPLES.parent)
    assert done.returncode == 0, f"failed:\n{done.stdout}\n{done.stderr}"
    out = done.stdout
    assert shapes(out, "images") == [(16, 3, 224, 224)] * 2, out
    assert "torch.float32 on cpu" in out
    labels = [[int(v) for v in m.split(",")] for m in re.findall(r"labels \[([\d, ]+)\]", out)]
    assert [len(batch) for batch in labels] == [16, 16]
    assert all(0 <= v < 4 for batch in labels for v in batch)
    assert "32 images of 40 in 2 batches" in out
    assert done.stderr.count("GpuFallbackWarning") == 1


def test_ssd_coco_pipeline_encodes_boxes_for_8732_anchors_with_partial_epochs():
    # 12 generated images, every fifth without objects: skip_empty leaves 10, so epochs
    # come in batches of 4, 4 and 2 (PARTIAL), and the fourth step starts epoch two.
    out = run_example(str(EXAMPLES / "ssd_coco.py"), *TINY, "--images", "12",
                      "--batch-size", "4", "--iters", "4")
    assert "8732 default boxes; 3 batches per epoch" in out
    assert shapes(out, "images shape") == [(4, 3, 300, 300), (4, 3, 300, 300),
                                           (2, 3, 300, 300), (4, 3, 300, 300)]
    assert shapes(out, "boxes shape") == [(4, 8732, 4), (4, 8732, 4), (2, 8732, 4),
                                          (4, 8732, 4)]
    positives = [float(v) for v in re.findall(r"positives per image (\S+)", out)]
    assert len(positives) == 4 and all(p >= 1 for p in positives)


def test_ssd_coco_file_is_dalis_pipeline_with_only_the_import_changed():
    text = (EXAMPLES / "ssd_coco.py").read_text()
    assert "from stoker import fn, pipeline_def, types" in text
    assert "nvidia" not in text.split('"""', 2)[2]  # no DALI import in the code itself


def test_asr_features_runs_dalis_jasper_pipeline():
    # Six generated utterances (2-16 s), batches of 3: two batches of 64-band features.
    out = run_example(str(EXAMPLES / "asr_features.py"), "--files", "6", "--batch-size", "3",
                      "--num-threads", "1")
    lines = [line for line in out.splitlines() if line.startswith("epoch 0 batch")]
    assert len(lines) == 2, out
    for line in lines:
        assert "3 x 64 mel bands float32" in line and "finite True" in line, line
        widths = [int(w) for w in re.findall(r"padded frames \[([\d, ]+)\]", line)[0].split(",")]
        assert len(widths) == 1 and widths[0] % 16 == 0, line  # padded to the batch, aligned
        shortest, longest = (int(v) for v in re.findall(r"frames (\d+)\.\.(\d+)", line)[0])
        assert 2 * 100 * 0.85 <= shortest <= longest <= widths[0]
    assert "2 batches" in out


def test_video_loader_reads_every_window_once_with_the_right_frames():
    pytest.importorskip("av")
    # 4 generated videos of 60 frames: readers.video's windows of 8 frames 3 apart start
    # every 24 frames (0 and 24), 8 clips in batches of 3: 3, 3, 2 (PARTIAL).
    out = run_example(str(EXAMPLES / "video_loader.py"), "--videos", "4", "--frames", "60",
                      "--sequence-length", "8", "--stride", "3", "--batch-size", "3",
                      "--num-threads", "2", "--device", "cpu", "--check")
    assert shapes(out, "video shape:") == [(3, 8, 120, 160, 3)] * 2 + [(2, 8, 120, 160, 3)]
    assert shapes(out, "label shape:") == [(3,), (3,), (2,)]
    assert "epoch: 8 clips (len 3)" in out
    assert "every clip holds the frames it should" in out
