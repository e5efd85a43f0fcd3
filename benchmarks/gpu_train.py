"""ResNet-50 training pipeline with a GPU: stoker mixed decode vs stoker's CPU path vs
torchvision's GPU decode, in images/s for several CPU thread counts.

Peers (the same work: read JPEG files, decode a random crop, resize to SIZE x SIZE, random
mirror, normalize to float CHW on the GPU; labels alongside):

- ``stoker-mixed``: readers.file -> decoders.image_random_crop(device="mixed") ->
  resize(device="gpu") -> crop_mirror_normalize(device="gpu"); batches handed over as
  CUDA tensors through stoker.plugin.pytorch's iterator (no copy).
- ``stoker-cpu``: the same graph on the CPU (device="cpu", fused decode+resize), each
  batch then copied to the GPU, as a CPU loader's batches are.
- ``torchvision-gpu``: the recipe PyTorch users write: files read by NUM_THREADS threads,
  ``torchvision.io.decode_jpeg(list, device="cuda")`` (batched nvJPEG), then
  ``transforms.v2`` RandomResizedCrop per image, flip and normalize on the GPU.

    python benchmarks/gpu_train.py --data /path/to/jpegs --batch-size 256 \
        --threads 1,2,4,8,16 --seconds 10          # on a GPU machine
    STOKER_GPU_ON_CPU=1 python benchmarks/gpu_train.py --smoke   # anywhere: 8 tiny images

Without ``--data`` it writes synthetic JPEGs (``--images``, ImageNet-like 500x375) to a
temporary folder. ``STOKER_MIXED_DECODER`` forces the mixed decoders' library. Target on
one H100 with 16 CPU threads: stoker-mixed >= 19,000 images/s.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
PEERS = ("stoker-mixed", "stoker-cpu", "torchvision-gpu")


def write_jpegs(root: Path, count: int, height: int, width: int) -> Path:
    """``count`` smooth synthetic JPEGs (quality 90) in two class folders under ``root``."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in range(2):
        (root / f"class_{c}").mkdir(parents=True, exist_ok=True)
    for i in range(count):
        coarse = rng.integers(0, 256, (height // 16 + 1, width // 16 + 1, 3), dtype=np.uint8)
        img = Image.fromarray(coarse).resize((width, height), Image.BILINEAR)
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=90)
        (root / f"class_{i % 2}" / f"img_{i:06d}.jpg").write_bytes(buf.getvalue())
    return root


def _device() -> Any:
    import torch

    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


# -- peers: each returns a function that yields one batch's (images, labels) on the device ---

def stoker_peer(root: str, batch: int, threads: int, size: int, mixed: bool) -> Any:
    from stoker import fn, pipeline_def, types
    from stoker.plugin.pytorch import DALIClassificationIterator

    device_id = 0 if mixed else None

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=device_id, seed=1,
                  prefetch_queue_depth=2)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=1,
                                        name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed" if mixed else "cpu",
                                               output_type=types.RGB)
        images = fn.resize(images, resize_x=size, resize_y=size)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=fn.random.coin_flip())
        return images, labels

    p = pipe()
    it = DALIClassificationIterator(p, auto_reset=True)
    target = _device()

    def next_batch() -> tuple:
        try:
            out = next(it)[0]
        except StopIteration:
            out = next(it)[0]
        images = out["data"]
        if images.device != target:  # the CPU path's batches go to the GPU like a loader's
            images = images.pin_memory().to(target, non_blocking=True) \
                if target.type == "cuda" else images
        return images, out["label"]

    def close() -> None:
        p.close()

    next_batch.close = close  # type: ignore[attr-defined]
    return next_batch


def torchvision_peer(root: str, batch: int, threads: int, size: int) -> Any:
    import torch
    from torchvision.io import ImageReadMode, decode_jpeg
    from torchvision.transforms import v2

    files = sorted(str(p) for p in Path(root).rglob("*.jpg"))
    labels = torch.tensor([0 if "class_0" in f else 1 for f in files])
    device = _device()
    crop = v2.RandomResizedCrop(size, antialias=True)
    pool = ThreadPoolExecutor(threads)
    rng = np.random.default_rng(1)
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1)

    def read(path: str) -> Any:
        with open(path, "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)

    def next_batch() -> tuple:
        picks = rng.integers(0, len(files), batch)
        encoded = list(pool.map(read, [files[i] for i in picks]))
        images = decode_jpeg(encoded, mode=ImageReadMode.RGB, device=device)
        out = torch.stack([crop(img) for img in images]).float()
        flip = torch.rand(batch, device=device) < 0.5
        out = torch.where(flip.view(-1, 1, 1, 1), out.flip(-1), out)
        return (out - mean) / std, labels[picks].to(device, non_blocking=True)

    next_batch.close = pool.shutdown  # type: ignore[attr-defined]
    return next_batch


def make_peer(name: str, root: str, batch: int, threads: int, size: int) -> Any:
    if name == "stoker-mixed":
        return stoker_peer(root, batch, threads, size, mixed=True)
    if name == "stoker-cpu":
        return stoker_peer(root, batch, threads, size, mixed=False)
    return torchvision_peer(root, batch, threads, size)


def measure(next_batch: Any, batch: int, seconds: float, warmup: int) -> float:
    """Images/s over ``seconds`` after ``warmup`` batches; the GPU work is waited for."""
    for _ in range(warmup):
        next_batch()
    _sync()
    count, start = 0, time.perf_counter()
    while True:
        images, _ = next_batch()
        count += 1
        if time.perf_counter() - start >= seconds:
            break
    _sync()
    return count * batch / (time.perf_counter() - start)


def available(name: str) -> str | None:
    """None when the peer can run here, else why not."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    if name == "torchvision-gpu" and importlib.util.find_spec("torchvision") is None:
        return "torchvision is not installed"
    if name == "stoker-mixed":
        from stoker.kernels import gpu

        if not gpu.available():
            return "no CUDA GPU (set STOKER_GPU_ON_CPU=1 to run it on CPU tensors)"
    return None


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="folder of JPEGs in class folders (default: synthetic)")
    ap.add_argument("--images", type=int, default=2048, help="synthetic images to write")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--size", type=int, default=224, help="output side")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=int, default=5, help="batches before timing")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--smoke", action="store_true",
                    help="8 tiny images, batch 4, size 32, threads 1,2, 0.2 s: checks it runs")
    args = ap.parse_args(argv)
    if args.smoke:
        args.images, args.batch_size, args.size = 8, 4, 32
        args.threads, args.seconds, args.warmup = "1,2", 0.2, 1
    threads = [int(t) for t in args.threads.split(",")]
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r}; peers: {', '.join(PEERS)}")

    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            h, w = (48, 64) if args.smoke else (375, 500)
            root = str(write_jpegs(Path(tmp), args.images, h, w))
        results: dict[str, dict[int, float | str]] = {}
        for name in peers:
            why = available(name)
            results[name] = {}
            for t in threads:
                if why is not None:
                    results[name][t] = why
                    continue
                next_batch = make_peer(name, root, args.batch_size, t, args.size)
                try:
                    results[name][t] = measure(next_batch, args.batch_size, args.seconds,
                                               args.warmup)
                finally:
                    next_batch.close()
    print_table(results, threads, args)
    return results


def print_table(results: dict, threads: list[int], args: Any) -> None:
    print(f"ResNet-50 train pipeline, batch {args.batch_size}, output {args.size}x{args.size}, "
          f"device {_device()}; images/s")
    head = "| peer | " + " | ".join(f"{t} threads" for t in threads) + " |"
    print(head)
    print("|" + "---|" * (len(threads) + 1))
    for name, row in results.items():
        cells = [f"{v:,.0f}" if isinstance(v, float) else "-" for v in row.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for name, row in results.items():
        for v in row.values():
            if isinstance(v, str):
                print(f"{name}: skipped: {v}")
                break


if __name__ == "__main__":
    main()
