"""The benchmark pipelines, written once against DALI's API and built with either library.

``build(name, lib, ...)`` makes the named pipeline with ``lib`` = stoker or nvidia.dali
(DALI's CPU backend with ``device_id=None``), so both run the very same graph. The
torchvision peers are the recipes PyTorch users write for the same work.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import types as pytypes
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

# ImageNet statistics in 0..255 units, as DALI's examples use them.
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
CIFAR_MEAN = [125.307, 122.961, 113.8575]
CIFAR_STD = [51.5865, 50.847, 51.255]


def cifar_images(count: int, seed: int = 0) -> np.ndarray:
    """CIFAR-sized uint8 images (NHWC): smooth random fields, not white noise."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(count, 8, 8, 3), dtype=np.uint8)
    return np.repeat(np.repeat(coarse, 4, axis=1), 4, axis=2)


def _cifar_source(images: np.ndarray, batch_size: int) -> Callable[[Any], np.ndarray]:
    count = len(images) // batch_size

    def source(info: Any) -> np.ndarray:
        i = info.iteration % count
        return images[i * batch_size:(i + 1) * batch_size]

    return source


def _reader(fn: Any, root: str, shuffle: bool = True) -> Any:
    return fn.readers.file(file_root=root, random_shuffle=shuffle, seed=1, name="Reader")


def _train(fn: Any, types: Any, root: str) -> tuple:
    jpegs, labels = _reader(fn, root)
    images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_x=224, resize_y=224)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=MEAN, std=STD, mirror=fn.random.coin_flip())
    return images, labels


def _train_unfused(fn: Any, types: Any, root: str) -> tuple:
    jpegs, labels = _reader(fn, root)
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.random_resized_crop(images, size=224)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=MEAN, std=STD, mirror=fn.random.coin_flip())
    return images, labels


def _val(fn: Any, types: Any, root: str) -> tuple:
    jpegs, labels = _reader(fn, root, shuffle=False)
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=256)
    images = fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                      output_layout="CHW", mean=MEAN, std=STD)
    return images, labels


def _decode_crop(fn: Any, types: Any, root: str) -> tuple:
    jpegs, labels = _reader(fn, root)
    return fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB), labels


def _decode_full(fn: Any, types: Any, root: str) -> tuple:
    jpegs, labels = _reader(fn, root)
    return fn.decoders.image(jpegs, device="cpu", output_type=types.RGB), labels


# The video benchmark's clips (issue 24): 16 frames, every other frame, windows in a random
# order (each window's first frame 32 frames after the last: DALI's default step).
CLIP_LENGTH, CLIP_STRIDE = 16, 2


def _video(fn: Any, types: Any, root: str) -> tuple:
    return tuple(fn.experimental.readers.video(file_root=root, sequence_length=CLIP_LENGTH,
                                         stride=CLIP_STRIDE, random_shuffle=True, seed=1,
                                         name="Reader"))


FILE_PIPELINES = {"train": _train, "train-unfused": _train_unfused, "val": _val,
                  "decode-crop": _decode_crop, "decode": _decode_full, "video": _video}
NAMES = ("cifar", *FILE_PIPELINES)


# What a user's pipeline file may import its library as: the same names in stoker and in
# DALI, so a file written against either runs with either (``stoker bench FILE --compare
# dali``: the port is the import line).
_LIBRARY_MODULES = ("", ".fn", ".types", ".math")


@contextlib.contextmanager
def _library_as(library: str) -> Iterator[None]:
    """While it lasts, ``stoker``'s and ``nvidia.dali``'s modules are both ``library``'s
    ("stoker" or "dali")."""
    this, other = ("nvidia.dali", "stoker") if library == "dali" else ("stoker", "nvidia.dali")
    target = {other + s: importlib.import_module(this + s) for s in _LIBRARY_MODULES}
    if other == "nvidia.dali":  # (``import nvidia.dali.fn`` reads nvidia's attribute)
        target["nvidia"] = pytypes.ModuleType("nvidia")
        target["nvidia"].dali = target["nvidia.dali"]  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in target}
    sys.modules.update(target)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_user_pipeline(spec: str, batch_size: int, threads: int,
                       library: str = "stoker") -> Any:
    """The pipeline of ``file.py[:function]`` (default function: ``pipeline``): a
    @pipeline_def function, built with ``batch_size``, ``num_threads`` and
    ``device_id=None``, or a function returning a pipeline. The file's imports of stoker
    or of nvidia.dali give ``library``'s ("stoker" or "dali")."""
    path, _, name = spec.partition(":")
    name = name or "pipeline"
    if not os.path.isfile(path):
        raise SystemExit(f"stoker: no pipeline file {path!r}")
    module_spec = importlib.util.spec_from_file_location("stoker_user_pipeline", path)
    if module_spec is None or module_spec.loader is None:
        raise SystemExit(f"stoker: cannot load {path!r} as Python")
    module = importlib.util.module_from_spec(module_spec)
    with _library_as(library):
        module_spec.loader.exec_module(module)
        factory = getattr(module, name, None)
        if factory is None:
            raise SystemExit(f"stoker: {path!r} has no function {name!r}")
        if getattr(factory, "_is_pipeline_def", False):
            return factory(batch_size=batch_size, num_threads=threads, device_id=None)
        return factory()


def is_user_pipeline(name: str) -> bool:
    return name not in NAMES and name.partition(":")[0].endswith(".py")


def build(name: str, lib: Any, root: str | None, batch_size: int, threads: int) -> Any:
    """The named pipeline built with ``lib`` (stoker or nvidia.dali)."""
    fn, types = lib.fn, lib.types

    if name == "cifar":
        source = _cifar_source(cifar_images(batch_size * 32), batch_size)

        @lib.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=1)
        def cifar():
            imgs = fn.external_source(source=source, batch=True, batch_info=True, layout="HWC")
            padded = fn.crop(imgs, crop=(40, 40), out_of_bounds_policy="pad", fill_values=0)
            return fn.crop_mirror_normalize(
                padded, crop=(32, 32), crop_pos_x=fn.random.uniform(range=(0.0, 1.0)),
                crop_pos_y=fn.random.uniform(range=(0.0, 1.0)), mirror=fn.random.coin_flip(),
                mean=CIFAR_MEAN, std=CIFAR_STD, dtype=types.FLOAT, output_layout="CHW")

        return cifar()
    if root is None:
        raise SystemExit(f"stoker bench {name}: needs --data DIR (see stoker make-dataset)")
    body = FILE_PIPELINES[name]

    @lib.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=1)
    def file_pipeline():
        return body(fn, types, root)

    return file_pipeline()


def torchvision_loader(name: str, root: str | None, batch_size: int, threads: int) -> Any:
    """The torchvision + DataLoader recipe for the same work."""
    import torch
    from torchvision import datasets, transforms

    normalize = transforms.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])
    if name == "cifar":
        images = cifar_images(batch_size * 32)
        tf = transforms.Compose([
            transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize([m / 255 for m in CIFAR_MEAN], [s / 255 for s in CIFAR_STD])])

        class Arrays(torch.utils.data.Dataset):
            def __len__(self) -> int:
                return len(images)

            def __getitem__(self, i: int) -> Any:
                from PIL import Image

                return tf(Image.fromarray(images[i])), 0

        dataset: Any = Arrays()
    elif name in ("train", "train-unfused"):
        dataset = datasets.ImageFolder(root, transforms.Compose([
            transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
            transforms.ToTensor(), normalize]))
    elif name == "val":
        dataset = datasets.ImageFolder(root, transforms.Compose([
            transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
            normalize]))
    else:
        raise SystemExit(f"stoker bench: torchvision has no peer for {name!r}")
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                       num_workers=threads, persistent_workers=True,
                                       drop_last=True)


def decord_loader(name: str, root: str | None, batch_size: int, threads: int) -> Any:
    """The decord + DataLoader recipe for the ``video`` pipeline's work (the seed's peer):
    the same windows of every file under ``root``, in a random order, each read by a
    ``decord.VideoReader`` opened for it in a DataLoader worker (``get_batch``)."""
    import decord
    import torch

    if name != "video":
        raise SystemExit(f"stoker bench: decord has no peer for {name!r}")
    if root is None:
        raise SystemExit("stoker bench video: needs --data DIR (stoker make-dataset --video)")
    # The reader's windows: DALI 2.4's new reader needs stride x length frames from a
    # window's start, and steps by as many.
    span = CLIP_LENGTH * CLIP_STRIDE
    windows = []
    for folder, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            path = os.path.join(folder, f)
            n = len(decord.VideoReader(path, num_threads=1))
            windows += [(path, s) for s in range(0, n - span + 1, span)]

    class Clips(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(windows)

        def __getitem__(self, i: int) -> Any:
            path, start = windows[i]
            reader = decord.VideoReader(path, num_threads=1)
            frames = list(range(start, start + span, CLIP_STRIDE))  # 16 frames
            return torch.from_numpy(reader.get_batch(frames).asnumpy())

    return torch.utils.data.DataLoader(Clips(), batch_size=batch_size, shuffle=True,
                                       num_workers=threads, persistent_workers=True,
                                       drop_last=True)
