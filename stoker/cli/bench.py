"""``stoker bench``: the same pipeline in stoker and its peers, side by side, alternating.

A pipeline is written once against DALI's API and built with either library's ``fn`` /
``types`` / ``pipeline_def`` (DALI's CPU backend runs with ``device_id=None``). The
torchvision peer is the usual ``Dataset`` + transforms + ``DataLoader``. Runs alternate
between peers so a noisy machine hurts all of them alike; medians and ratios are printed.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

CIFAR_MEAN = [125.307, 122.961, 113.8575]
CIFAR_STD = [51.5865, 50.847, 51.255]


def load_library(name: str) -> Any:
    """An object with ``fn``, ``types``, ``pipeline_def`` for 'stoker' or 'dali', or None."""
    try:
        if name == "stoker":
            import stoker as lib

            return lib
        lib = importlib.import_module("nvidia.dali")
        importlib.import_module("nvidia.dali.fn")
        importlib.import_module("nvidia.dali.types")
        return lib
    except ImportError:
        return None


def cifar_images(count: int, seed: int = 0) -> np.ndarray:
    """CIFAR-sized uint8 images (NHWC): smooth random fields, not white noise."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(count, 8, 8, 3), dtype=np.uint8)
    return np.repeat(np.repeat(coarse, 4, axis=1), 4, axis=2)


def _batches(images: np.ndarray, batch_size: int) -> Callable[[Any], np.ndarray]:
    count = len(images) // batch_size

    def source(info: Any) -> np.ndarray:
        i = info.iteration % count
        return images[i * batch_size:(i + 1) * batch_size]

    return source


def cifar_pipeline(lib: Any, images: np.ndarray, batch_size: int, threads: int) -> Any:
    """Pad 4 + random crop 32 + random mirror + normalize to CHW float (DALI's idiom)."""
    fn, types = lib.fn, lib.types

    @lib.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=1)
    def cifar():
        imgs = fn.external_source(source=_batches(images, batch_size), batch=True,
                                  batch_info=True, layout="HWC")
        padded = fn.crop(imgs, crop=(40, 40), out_of_bounds_policy="pad", fill_values=0)
        return fn.crop_mirror_normalize(
            padded, crop=(32, 32), crop_pos_x=fn.random.uniform(range=(0.0, 1.0)),
            crop_pos_y=fn.random.uniform(range=(0.0, 1.0)), mirror=fn.random.coin_flip(),
            mean=CIFAR_MEAN, std=CIFAR_STD, dtype=types.FLOAT, output_layout="CHW")

    return cifar()


def torchvision_cifar(images: np.ndarray, batch_size: int, threads: int) -> Any:
    """The torchvision recipe: RandomCrop(32, padding=4), flip, ToTensor, Normalize."""
    import torch
    from torchvision import transforms

    class Images(torch.utils.data.Dataset):
        def __init__(self, data: np.ndarray):
            self.data = data
            self.transform = transforms.Compose([
                transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
                transforms.Normalize([m / 255 for m in CIFAR_MEAN], [s / 255 for s in CIFAR_STD]),
            ])

        def __len__(self) -> int:
            return len(self.data)

        def __getitem__(self, i: int) -> Any:
            from PIL import Image

            return self.transform(Image.fromarray(self.data[i]))

    loader = torch.utils.data.DataLoader(Images(images), batch_size=batch_size, shuffle=True,
                                         num_workers=threads, persistent_workers=True,
                                         drop_last=True)
    return loader


class Runner:
    """One peer: ``step()`` yields one batch; counts images."""

    def __init__(self, name: str, step: Callable[[], None], batch_size: int,
                 close: Callable[[], None] = lambda: None):
        self.name = name
        self.step = step
        self.batch_size = batch_size
        self.close = close

    def rate(self, seconds: float) -> float:
        n = 0
        start = time.perf_counter()
        while True:
            self.step()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return n * self.batch_size / elapsed


def _pipeline_runner(name: str, pipe: Any, batch_size: int) -> Runner:
    pipe.build()
    return Runner(name, lambda: pipe.run(), batch_size,
                  close=getattr(pipe, "close", lambda: None))


def _loader_runner(name: str, loader: Any, batch_size: int) -> Runner:
    state = {"it": iter(loader)}

    def step() -> None:
        try:
            next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            next(state["it"])

    return Runner(name, step, batch_size)


def make_runners(pipeline: str, peers: list[str], batch_size: int, threads: int) -> list[Runner]:
    images = cifar_images(batch_size * 32)
    runners = []
    for peer in ["stoker", *peers]:
        if peer in ("stoker", "dali"):
            lib = load_library(peer)
            if lib is None:
                print(f"  {peer}: not installed (pip install nvidia-dali-cuda130), skipped")
                continue
            runners.append(_pipeline_runner(peer, cifar_pipeline(lib, images, batch_size,
                                                                 threads), batch_size))
        elif peer == "torchvision":
            try:
                loader = torchvision_cifar(images, batch_size, threads)
            except ImportError:
                print("  torchvision: not installed, skipped")
                continue
            runners.append(_loader_runner("torchvision", loader, batch_size))
        else:
            raise SystemExit(f"stoker bench: unknown peer {peer!r}")
    return runners


def run_bench(args: Any) -> int:
    threads = args.threads or os.cpu_count() or 1
    peers = [p.strip() for p in args.compare.split(",") if p.strip()]
    print(f"stoker bench {args.pipeline}: batch {args.batch_size}, {threads} threads, "
          f"{args.runs} runs of {args.seconds:.1f} s per peer, alternating")
    runners = make_runners(args.pipeline, peers, args.batch_size, threads)
    for r in runners:  # warm-up: compiles kernels, starts workers, fills queues
        r.rate(min(1.0, args.seconds))
    rates: dict[str, list[float]] = {r.name: [] for r in runners}
    for i in range(args.runs):
        for r in runners:
            rates[r.name].append(r.rate(args.seconds))
        line = "  ".join(f"{name} {vals[-1]:>9,.0f}" for name, vals in rates.items())
        print(f"  run {i + 1}: {line}  images/s", flush=True)
    base = statistics.median(rates["stoker"])
    print(f"\n  {'peer':<12} {'median images/s':>16} {'stoker / peer':>14}")
    for name, vals in rates.items():
        med = statistics.median(vals)
        print(f"  {name:<12} {med:>16,.0f} {base / med:>13.2f}x")
    for r in runners:
        r.close()
    sys.stdout.flush()
    return 0
