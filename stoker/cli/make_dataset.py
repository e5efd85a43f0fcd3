"""``stoker make-dataset``: an ImageNet-like folder of JPEGs, made without a network.

The pixels come from the real photographs that ship inside scikit-image's wheel. Each
output image is a random crop of one photograph, resized to a size drawn from ImageNet's
distribution (mean about 470 x 390), colour-jittered, given the sensor-like grain real
photos have, and written as a quality-90 JPEG (about 100 KB on average, as ImageNet's),
into one sub-folder per class: the layout ``fn.readers.file(file_root=...)`` expects.
"""

from __future__ import annotations

import os
import pathlib
import time
from typing import Any

import numpy as np

# Photographs in skimage/data (color first; grayscale ones are tinted to 3 channels).
PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
          "motorcycle_right.png", "rocket.jpg", "retina.jpg", "hubble_deep_field.jpg",
          "ihc.png", "camera.png", "brick.png", "grass.png", "gravel.png", "coins.png",
          "moon.png")
# Mostly landscape, as in ImageNet (its typical photo is 500 x 375).
ASPECTS = (4 / 3, 4 / 3, 4 / 3, 4 / 3, 4 / 3, 3 / 2, 3 / 2, 16 / 9, 1.0, 3 / 4)


def _load_photos() -> list[np.ndarray]:
    try:
        import cv2
        import skimage
    except ImportError:
        raise SystemExit("stoker make-dataset needs scikit-image and OpenCV: "
                         "pip install 'stoker[data]'") from None
    root = pathlib.Path(skimage.__file__).parent / "data"
    photos = []
    for name in PHOTOS:
        img = cv2.imread(str(root / name), cv2.IMREAD_COLOR)  # BGR, gray replicated
        if img is not None:
            photos.append(img)
    if not photos:
        raise SystemExit(f"stoker make-dataset: no photographs found in {root}")
    return photos


def _target_size(rng: np.random.Generator) -> tuple[int, int]:
    width = int(np.clip(rng.normal(470, 110), 160, 1000))
    aspect = ASPECTS[rng.integers(len(ASPECTS))]
    height = int(np.clip(width / aspect * rng.uniform(0.95, 1.05), 120, 1000))
    return width, height


def make_image(photos: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    import cv2

    src = photos[rng.integers(len(photos))]
    w, h = _target_size(rng)
    sh, sw = src.shape[:2]
    # A crop of the photograph with the target's aspect ratio, covering 35-100% of it.
    scale = np.sqrt(rng.uniform(0.35, 1.0))
    cw = min(sw, int(sw * scale))
    ch = min(sh, int(cw * h / w))
    cw = min(cw, int(ch * w / h))
    y = rng.integers(0, sh - ch + 1)
    x = rng.integers(0, sw - cw + 1)
    img = cv2.resize(src[y:y + ch, x:x + cw], (w, h), interpolation=cv2.INTER_AREA
                     if cw > w else cv2.INTER_CUBIC)
    if rng.random() < 0.5:
        img = img[:, ::-1]
    gains = rng.uniform(0.85, 1.15, 3)
    # Film/sensor grain is mostly in brightness, which JPEG keeps at full resolution.
    luma = rng.normal(0.0, rng.uniform(12.0, 19.0), img.shape[:2])[..., None]
    grain = luma + rng.normal(0.0, 3.0, img.shape)
    out = img.astype(np.float32) * gains + rng.uniform(-12, 12) + grain
    return np.clip(out, 0, 255).astype(np.uint8)


def make_dataset(root: str | os.PathLike, images: int = 1000, classes: int = 10,
                 quality: int = 90, seed: int = 0) -> dict[str, Any]:
    """Writes ``images`` JPEGs in ``classes`` folders under ``root``; returns statistics."""
    import cv2

    photos = _load_photos()
    rng = np.random.default_rng(seed)
    root = pathlib.Path(root)
    sizes, shapes = [], []
    for c in range(classes):
        (root / f"class_{c:03d}").mkdir(parents=True, exist_ok=True)
    for i in range(images):
        img = make_image(photos, rng)
        ok, data = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise RuntimeError("OpenCV failed to encode a JPEG")
        path = root / f"class_{i % classes:03d}" / f"img_{i:06d}.jpg"
        path.write_bytes(data.tobytes())
        sizes.append(len(data))
        shapes.append(img.shape[:2])
    shapes_arr = np.array(shapes)
    return {"images": images, "classes": classes, "mean_kb": float(np.mean(sizes) / 1024),
            "mean_hw": tuple(float(v) for v in shapes_arr.mean(axis=0)),
            "total_mb": float(np.sum(sizes) / 2**20)}


def run_make_dataset(args: Any) -> int:
    start = time.perf_counter()
    stats = make_dataset(args.root, args.images, args.classes, args.quality, args.seed)
    print(f"stoker make-dataset: {stats['images']} JPEGs in {stats['classes']} classes under "
          f"{args.root} ({stats['total_mb']:.1f} MB, mean {stats['mean_kb']:.0f} KB, mean "
          f"size {stats['mean_hw'][1]:.0f}x{stats['mean_hw'][0]:.0f}) in "
          f"{time.perf_counter() - start:.1f} s")
    return 0
