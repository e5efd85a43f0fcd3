"""Pieces the examples share: command-line arguments, a generated dataset, a small ResNet.

They live here so that each example script reads as its recipe. Nothing in this file is
part of stoker's API; copy what you need.
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import tempfile
from collections.abc import Callable, Iterator

import torch
from torch import nn

# ImageNet's per-channel mean and standard deviation, in 0..255 units.
IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def add_common_args(parser: argparse.ArgumentParser, batch_size: int = 64,
                    data_help: str = "image folder (one sub-folder per class)") -> None:
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--data", help=f"{data_help}; when omitted, a small dataset is "
                        "generated in a temporary folder")
    parser.add_argument("--iters", type=int, default=None,
                        help="stop after this many iterations in total (smoke tests)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=default_device,
                        help=f"where the model runs (default here: {default_device})")
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--num-threads", type=int, default=4, help="stoker's CPU threads")
    parser.add_argument("--seed", type=int, default=42)
    generated = parser.add_argument_group("generated dataset (when --data is omitted)")
    generated.add_argument("--images", type=int, default=64)
    generated.add_argument("--classes", type=int, default=4)
    generated.add_argument("--image-size", type=int, default=None,
                           help="shrink generated images so that their longer side is this "
                           "many pixels (default: ImageNet-like sizes, about 470 x 390)")


def generate_images(root: str | pathlib.Path, images: int, classes: int,
                    image_size: int | None = None, seed: int = 0) -> pathlib.Path:
    """An ImageNet-like folder of JPEGs (``stoker make-dataset``), optionally shrunk."""
    import cv2

    from stoker.cli.make_dataset import make_dataset

    root = pathlib.Path(root)
    make_dataset(root, images=images, classes=classes, seed=seed)
    if image_size is not None:
        for path in sorted(root.glob("*/*.jpg")):
            img = cv2.imread(str(path), cv2.IMREAD_COLOR)
            scale = image_size / max(img.shape[:2])
            size = (max(1, round(img.shape[1] * scale)), max(1, round(img.shape[0] * scale)))
            small = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(path), small, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return root


def make_class_folders(root: pathlib.Path, args: argparse.Namespace) -> None:
    """``--images`` JPEGs in ``--classes`` sub-folders of ``root``."""
    generate_images(root, args.images, args.classes, args.image_size, args.seed)


def make_train_val(root: pathlib.Path, args: argparse.Namespace) -> None:
    """``root/train`` and ``root/val`` (``--val-images``, default a quarter as many), the
    ImageNet layout."""
    val_images = getattr(args, "val_images", None) or max(args.images // 4, 1)
    generate_images(root / "train", args.images, args.classes, args.image_size, args.seed)
    generate_images(root / "val", val_images, args.classes, args.image_size, args.seed + 1)


@contextlib.contextmanager
def data_root(args: argparse.Namespace, make: Callable[[pathlib.Path, argparse.Namespace],
              None] = make_class_folders) -> Iterator[pathlib.Path]:
    """``--data`` as given, or a dataset written by ``make`` into a temporary folder that
    lives as long as the ``with`` block."""
    if args.data is not None:
        yield pathlib.Path(args.data)
        return
    with tempfile.TemporaryDirectory(prefix="stoker-example-") as tmp:
        root = pathlib.Path(tmp)
        make(root, args)
        yield root


def conv_bn(cin: int, cout: int, stride: int = 1, kernel: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(cout))


class BasicBlock(nn.Module):
    """ResNet's two-convolution block with an identity (or 1x1 projection) shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(conv_bn(cin, cout, stride), nn.ReLU(inplace=True),
                                  conv_bn(cout, cout))
        self.shortcut = (nn.Identity() if stride == 1 and cin == cout
                         else conv_bn(cin, cout, stride, kernel=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


class TinyResNet(nn.Module):
    """A ResNet-shaped classifier small enough for a CPU smoke test; swap in
    ``torchvision.models.resnet50()`` for real training."""

    def __init__(self, num_classes: int, widths: tuple[int, ...] = (16, 32, 64)):
        super().__init__()
        layers: list[nn.Module] = [conv_bn(3, widths[0], stride=2), nn.ReLU(inplace=True)]
        for cin, cout in zip(widths, widths[1:], strict=False):
            layers.append(BasicBlock(cin, cout, stride=2))
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(widths[-1], num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


def num_classes(root: pathlib.Path) -> int:
    """What ``fn.readers.file(file_root=root)`` labels: one class per sub-folder."""
    return sum(1 for p in root.iterdir() if p.is_dir())
