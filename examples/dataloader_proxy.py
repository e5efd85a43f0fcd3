"""Seed 004 and DALI's proxy documentation: a torchvision dataset feeds one stoker pipeline.

The recipe keeps a PyTorch ``Dataset`` and ``DataLoader`` as they are and moves only the
image work into a pipeline that runs once, in the main process:

- ``torchvision.datasets.ImageFolder(root, transform=dali_server.proxy,
  loader=read_filepath)``: the loader returns each file's path as bytes, and the proxy
  stands in for the transform, so a worker process only sends paths;
- the pipeline starts from those paths: ``fn.external_source(name="images",
  no_copy=True)`` -> ``fn.io.file.read`` -> ``fn.decoders.image_random_crop(
  device="mixed")`` -> ``fn.resize(256 x 256)`` -> ``fn.crop_mirror_normalize(224 x 224,
  random mirror)``;
- ``dali_proxy.DataLoader(dali_server, dataset, ...)`` is torch's ``DataLoader`` that
  hands back ``(images, labels)`` with the pipeline's outputs in place of the proxies:
  (batch, 3, 224, 224) float32 and torch's collated labels.

The pipeline says ``device_id=0`` and ``device="mixed"``, as the recipe does; where no GPU
is usable stoker runs those operators on the CPU after one warning, with the same results.
Only the import lines differ from the recipe written for DALI.

Run it::

    python examples/dataloader_proxy.py --data /datasets/imagenet/train --batch-size 64
    # CPU smoke test on a generated dataset (two worker processes, two batches):
    python examples/dataloader_proxy.py --images 40 --image-size 64 --batch-size 16 --iters 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torchvision
from common import IMAGENET_MEAN, IMAGENET_STD, add_common_args, data_root

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch.experimental import proxy as dali_proxy


@pipeline_def(num_threads=4, device_id=0)
def rn50_train_pipe(resize: int = 256, crop: int = 224):
    # The DataLoader's workers send file paths; the pipeline reads and decodes them.
    filepaths = fn.external_source(name="images", no_copy=True)
    jpegs = fn.io.file.read(filepaths)
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=resize, resize_y=resize)
    images = fn.crop_mirror_normalize(images, crop_h=crop, crop_w=crop, mean=IMAGENET_MEAN,
                                      std=IMAGENET_STD, mirror=fn.random.coin_flip())
    return images


def read_filepath(path: str) -> np.ndarray:
    """ImageFolder's loader: the path itself, as the bytes fn.io.file.read expects."""
    return np.frombuffer(path.encode(), dtype=np.int8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(parser, batch_size=16)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--resize", type=int, default=256)
    parser.add_argument("--crop", type=int, default=224)
    args = parser.parse_args()

    with data_root(args) as root:
        pipe = rn50_train_pipe(args.resize, args.crop, batch_size=args.batch_size,
                               num_threads=args.num_threads, seed=args.seed)
        with dali_proxy.DALIServer(pipe) as dali_server:
            dataset = torchvision.datasets.ImageFolder(str(root), transform=dali_server.proxy,
                                                       loader=read_filepath)
            loader = dali_proxy.DataLoader(dali_server, dataset, batch_size=args.batch_size,
                                           num_workers=args.workers, drop_last=True)
            start, seen = time.perf_counter(), 0
            for step, (images, labels) in enumerate(loader):
                seen += len(labels)
                print(f"batch {step}: images {tuple(images.shape)} {images.dtype} on "
                      f"{images.device}, labels {labels.tolist()}")
                if args.iters is not None and step + 1 >= args.iters:
                    break
            rate = seen / (time.perf_counter() - start)
            print(f"{seen} images of {len(dataset)} in {step + 1} batches, {rate:.0f} images/s")


if __name__ == "__main__":
    main()
