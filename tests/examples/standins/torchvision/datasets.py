"""``ImageFolder`` as torchvision documents it: one class per sub-folder, classes in sorted
order, each class's files in sorted walk order, filtered by image extension."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


class ImageFolder:
    def __init__(self, root: str, transform: Callable | None = None,
                 target_transform: Callable | None = None,
                 loader: Callable[[str], Any] | None = None):
        if loader is None:
            raise NotImplementedError("the stand-in needs a loader")
        self.root = str(root)
        self.classes = sorted(e.name for e in os.scandir(self.root) if e.is_dir())
        if not self.classes:
            raise FileNotFoundError(f"Couldn't find any class folder in {self.root}.")
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = []
        for cls in self.classes:
            for folder, _, names in sorted(os.walk(os.path.join(self.root, cls),
                                                   followlinks=True)):
                for name in sorted(names):
                    if name.lower().endswith(IMG_EXTENSIONS):
                        self.samples.append((os.path.join(folder, name),
                                             self.class_to_idx[cls]))
        self.imgs = self.samples
        self.targets = [t for _, t in self.samples]
        self.transform, self.target_transform, self.loader = transform, target_transform, loader

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target
