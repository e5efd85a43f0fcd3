"""Seed 003's paired loader: blurry and sharp images, the same random crop and flip on both.

The recipe (a Chinese PyTorch training template for image deblurring, ``loader_DALI.py``)
feeds (blurry, sharp) file pairs through ``fn.external_source`` and must augment the two
images of a pair identically, or the network learns from misaligned targets:

- an iterator object returns, per batch, a tuple (blurry files, sharp files), each a list
  of encoded images as uint8 arrays (``np.fromfile``); ``fn.external_source(source=it,
  num_outputs=2)`` turns it into two inputs;
- the random parameters are drawn once, as DataNodes, and passed to both chains:
  ``crop_pos_x/crop_pos_y = fn.random.uniform(range=(0, 1))`` and
  ``horizontal/vertical = fn.random.coin_flip()``. A DataNode argument is one value per
  sample, so sample i of both outputs gets the same crop window and the same flips;
- each chain: ``fn.decoders.image`` -> ``fn.resize(resize_y=resize)`` (the height, width
  follows the aspect ratio) -> ``fn.crop(crop=(crop, crop), crop_pos_x, crop_pos_y)`` ->
  ``fn.flip(horizontal, vertical)`` -> ``fn.transpose(perm=[2, 0, 1])`` -> ``/127.5 - 1``
  (float CHW in [-1, 1]);
- ``DALIGenericIterator(pipe, ["imgs", "gts"], last_batch_policy=PARTIAL,
  auto_reset=True)``: no reader, so the epoch ends when the iterator object raises
  StopIteration, and the loader resets itself for the next epoch.

Two changes from the post: its iterator filled the last batch by wrapping around to the
first pairs (repeating them every epoch); this one returns a shorter last batch instead,
which ``external_source`` accepts, and reshuffles every epoch with its own generator. And
the post decodes with ``device="mixed"``; here decoding runs on the CPU.

The generated dataset follows the post's layout, ``DIR/train/{blurry,sharp}/<scene>/``:
sharp images from ``stoker make-dataset`` and blurry copies made with a Gaussian blur,
both saved as PNG. ``--check`` verifies, for every pair, that the blurry output matches
the blurred sharp output better in place than under any other flip or a small shift;
``--no-share`` draws separate random values for the two images (the bug the recipe
avoids) so that the check can be seen to fail.

Run it::

    python examples/paired_deblur_loader.py --data /datasets/GoPro --resize 256 --crop 192
    # CPU smoke test on a generated dataset:
    python examples/paired_deblur_loader.py --images 8 --image-size 64 --resize 48 --crop 32 --check
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
import torch
from common import add_common_args, data_root, generate_images

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

BLUR_SIGMA = 2.0  # of the generated blurry images, in pixels of the original image


class ExternalInputIterator:
    """Batches of (blurry, sharp) encoded files; rewinds itself before StopIteration, so
    a reset pipeline asks it for the next epoch."""

    def __init__(self, data_source: str, batch_size: int, shuffle: bool, seed: int = 0):
        self.batch_size = batch_size
        root = pathlib.Path(data_source) / "train"
        img_paths = sorted((root / "blurry").glob("*/*.*"))
        gt_paths = sorted((root / "sharp").glob("*/*.*"))
        if not img_paths or len(img_paths) != len(gt_paths):
            raise ValueError(f"{root}: expected as many files in blurry/ as in sharp/ (got "
                             f"{len(img_paths)} and {len(gt_paths)})")
        self.paths = list(zip(img_paths, gt_paths, strict=True))
        self.shuffle = shuffle
        self.rng = np.random.default_rng(seed)
        self.__iter__()

    def __iter__(self) -> ExternalInputIterator:
        self.i = 0
        if self.shuffle:
            self.rng.shuffle(self.paths)
        return self

    def __next__(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if self.i >= len(self.paths):
            self.__iter__()
            raise StopIteration
        pairs = self.paths[self.i:self.i + self.batch_size]
        self.i += len(pairs)
        imgs = [np.fromfile(img_path, dtype=np.uint8) for img_path, _ in pairs]
        gts = [np.fromfile(gt_path, dtype=np.uint8) for _, gt_path in pairs]
        return imgs, gts

    def __len__(self) -> int:
        return len(self.paths)


def transform(images, resize: int, crop: int, crop_pos, flip_p):
    images = fn.decoders.image(images, output_type=types.RGB)
    images = fn.resize(images, resize_y=resize)
    images = fn.crop(images, crop=(crop, crop), crop_pos_x=crop_pos[0], crop_pos_y=crop_pos[1])
    images = fn.flip(images, horizontal=flip_p[0], vertical=flip_p[1])
    images = fn.transpose(images, perm=[2, 0, 1])
    return images / 127.5 - 1


def random_params():
    crop_pos = (fn.random.uniform(range=(0.0, 1.0)), fn.random.uniform(range=(0.0, 1.0)))
    flip_p = (fn.random.coin_flip(), fn.random.coin_flip())
    return crop_pos, flip_p


@pipeline_def
def external_source_pipeline(external_data, resize: int, crop: int, share: bool = True):
    imgs, gts = fn.external_source(source=external_data, num_outputs=2, dtype=types.UINT8)
    crop_pos, flip_p = random_params()
    imgs = transform(imgs, resize, crop, crop_pos, flip_p)
    if not share:  # the bug the recipe avoids: the target gets its own crop and flips
        crop_pos, flip_p = random_params()
    gts = transform(gts, resize, crop, crop_pos, flip_p)
    return imgs, gts


def generate_pairs(root: pathlib.Path, args: argparse.Namespace) -> None:
    """DIR/train/sharp/<scene>/*.png and a Gaussian-blurred copy in DIR/train/blurry/."""
    import cv2

    source = generate_images(root / "source", args.images, args.classes, args.image_size,
                             args.seed)
    for path in sorted(source.glob("*/*.jpg")):
        sharp = cv2.imread(str(path), cv2.IMREAD_COLOR)
        blurry = cv2.GaussianBlur(sharp, (0, 0), BLUR_SIGMA)
        scene = path.parent.name.replace("class", "scene")
        for kind, image in (("sharp", sharp), ("blurry", blurry)):
            out = root / "train" / kind / scene / f"{path.stem}.png"
            out.parent.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(out), image)


def alignment(imgs: torch.Tensor, gts: torch.Tensor, sigma: float) -> list[bool]:
    """Per pair: does blur(sharp) match blurry best in place, rather than flipped or shifted?

    The blur is re-applied on the output, so it only approximates the original one after
    the resize; a geometric mismatch shows up as a much larger difference.
    """
    import cv2

    results = []
    for blurry, sharp in zip(imgs.numpy(), gts.numpy(), strict=True):
        blurry, sharp = blurry.transpose(1, 2, 0), sharp.transpose(1, 2, 0)  # HWC
        blurred = cv2.GaussianBlur(np.ascontiguousarray(sharp), (0, 0), sigma)
        m = max(2, int(3 * sigma))  # the borders blur differently; compare the interior
        inner = blurry[m:-m, m:-m]
        others = [blurred[:, ::-1], blurred[::-1], blurred[::-1, ::-1]]
        others += [np.roll(blurred, s, axis=a) for a in (0, 1) for s in (-3, 3)]
        errors = [float(np.abs(c[m:-m, m:-m] - inner).mean()) for c in [blurred, *others]]
        results.append(errors[0] < 0.7 * min(errors[1:]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, batch_size=16, data_help="folder with train/blurry/<scene>/ and "
                    "train/sharp/<scene>/ (files paired in sorted order)")
    parser.add_argument("--resize", type=int, default=256, help="height after resizing")
    parser.add_argument("--crop", type=int, default=192, help="square crop (<= the width)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="verify that pairs stay aligned")
    parser.add_argument("--no-share", action="store_true",
                        help="give the two images separate random crops and flips (a bug)")
    args = parser.parse_args()
    with data_root(args, make=generate_pairs) as root:
        eii = ExternalInputIterator(str(root), args.batch_size, shuffle=True, seed=args.seed)
        pipe = external_source_pipeline(external_data=eii, resize=args.resize, crop=args.crop,
                                        share=not args.no_share, batch_size=args.batch_size,
                                        num_threads=args.num_threads, device_id=None,
                                        seed=args.seed)
        dgi = DALIGenericIterator(pipe, output_map=["imgs", "gts"],
                                  last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
        # The check's blur, in output pixels: the generated blur, scaled as resize scales
        # a typical generated image (longer side --image-size, aspect about 4:3).
        scale = args.resize / (0.8 * args.image_size) if args.image_size else 1.0
        step, aligned, pairs, start = 0, 0, 0, time.perf_counter()
        for epoch in range(args.epochs):
            seen = 0
            for data in dgi:
                imgs, gts = data[0]["imgs"], data[0]["gts"]
                seen += len(imgs)
                line = (f"epoch {epoch} batch: imgs {tuple(imgs.shape)} gts {tuple(gts.shape)} "
                        f"range [{float(imgs.min()):.2f}, {float(imgs.max()):.2f}]")
                if args.check:
                    ok = alignment(imgs, gts, BLUR_SIGMA * scale)
                    aligned, pairs = aligned + sum(ok), pairs + len(ok)
                    line += f" aligned {sum(ok)}/{len(ok)}"
                print(line, flush=True)
                step += 1
                if step == args.iters:
                    break
            print(f"epoch {epoch}: {seen} pairs of {len(eii)}", flush=True)
            if step == args.iters:
                break
        if args.check:
            print(f"aligned pairs: {aligned}/{pairs}")
        print(f"done: {step} batches in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
