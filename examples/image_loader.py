"""Seed 002's image loader: decode, resize to 640 x 640, PARTIAL last batch, auto_reset.

The recipe (a Korean blog post timing DALI against an OpenCV ``DataLoader`` on 21,453 VOC
images) wraps a pipeline in a small loader class:

- ``fn.readers.file(file_root, initial_fill=1024, random_shuffle=True, name="Reader")``
  -> ``fn.decoders.image(output_type=RGB)`` -> ``fn.resize(size=[640, 640],
  interp_type=INTERP_LINEAR)``. Both extents are given, so in resize's default mode every
  image is stretched to exactly 640 x 640 (the aspect ratio is not kept) and the batch is
  dense: (batch, 640, 640, 3) uint8 HWC.
- The label is ``labels[0]``: the reader's (1,)-shaped int32 label as a scalar, so a batch
  of labels has shape (batch,).
- ``DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
  last_batch_policy=PARTIAL, auto_reset=True)``: an epoch is every image once; when the
  batch size does not divide the dataset the last batch is smaller (10 images, batch 4:
  4, 4, 2), and the iterator resets itself at the end of an epoch, so ``for inp in
  loader`` works again for the next one.

The post decodes with ``device="mixed"`` and resizes with ``device="gpu"``; this version
runs both on the CPU, which is stoker's strength. The post's ``__len__`` returned
``self.epoch_size``, an attribute it never set; here it is ``len(self.dali_iterator)``.

Run it::

    python examples/image_loader.py --data /datasets/VOC/images --batch-size 32 --num-threads 8
    # CPU smoke test on a generated dataset (10 images, batches of 4):
    python examples/image_loader.py --images 10 --batch-size 4 --image-size 64 --size 64
"""

from __future__ import annotations

import argparse
import time

from common import add_common_args, data_root

from stoker import fn, pipeline_def, types
from stoker.plugin import pytorch


@pipeline_def
def image_pipe(file_root: str, image_size: int = 640):
    jpegs, labels = fn.readers.file(file_root=file_root, initial_fill=1024,
                                    random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, size=[image_size, image_size],
                       interp_type=types.INTERP_LINEAR)
    return images, labels[0]


class DALIImageLoader:
    def __init__(self, path: str, batch_size: int, num_threads: int, image_size: int = 640,
                 seed: int = 123456):
        pipe = image_pipe(batch_size=batch_size, num_threads=num_threads, device_id=None,
                          file_root=path, image_size=image_size, seed=seed)
        pipe.build()
        self.dali_iterator = pytorch.DALIGenericIterator(
            pipe, ["data", "label"], reader_name="Reader",
            last_batch_policy=pytorch.LastBatchPolicy.PARTIAL, auto_reset=True)

    def __len__(self) -> int:
        return len(self.dali_iterator)

    def __iter__(self):
        return self.dali_iterator.__iter__()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, batch_size=32)
    parser.add_argument("--size", type=int, default=640, help="output height and width")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    with data_root(args) as root:
        start = time.time()
        loader = DALIImageLoader(str(root), args.batch_size, args.num_threads, args.size,
                                 seed=args.seed)
        step = 0
        for epoch in range(args.epochs):
            images = batches = 0
            for inp in loader:  # auto_reset: each `for` is a fresh epoch
                data, label = inp[0]["data"], inp[0]["label"]
                print(f"image shape: {tuple(data.shape)} {str(data.dtype).removeprefix('torch.')}"
                      f"  label shape: {tuple(label.shape)}", flush=True)
                images += data.shape[0]
                batches += 1
                step += 1
                if step == args.iters:
                    break
            print(f"epoch {epoch}: {images} images in {batches} batches (len {len(loader)})",
                  flush=True)
            if step == args.iters:
                break
        print(f"[stoker image loader] time: {time.time() - start:.2f} s")


if __name__ == "__main__":
    main()
