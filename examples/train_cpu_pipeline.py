"""Seed 000's recipe: an all-CPU pipeline, uint8 to the device, normalization on the device.

The recipe (a Medium post, "Speeding Up PyTorch by Four Times") keeps the whole DALI
pipeline on the CPU so that the GPU's memory goes to the model (a 50% larger batch), and
rebuilds the pipeline every epoch to keep host memory from growing:

- ``fn.readers.file`` (sharded, shuffled) -> ``fn.decoders.image_random_crop`` on the CPU
  (``random_aspect_ratio=[0.8, 1.25]``, ``random_area=[min_crop_size, 1]``, 100 attempts)
  -> ``fn.resize`` to ``crop x crop`` with triangular interpolation (to match torchvision)
  -> ``fn.flip(horizontal=coin_flip)``. The output stays uint8 HWC: a quarter of the
  bytes of float32 to copy to the GPU.
- The post's ``DaliIteratorCPU`` then pins each batch, copies it to the GPU on a side CUDA
  stream in a worker thread, permutes to NCHW, converts to float (or half) and applies
  ``sub_(mean).div_(std)`` there. ``stoker.plugin.pytorch.feed.DeviceFeeder`` is that
  wrapper: reused pinned buffers, an asynchronous copy on a side stream, normalization on
  the device, the next batch in flight while the model works. With ``--device cpu`` the
  same code runs without pinning or streams.
- ``--rebuild-per-epoch`` is the post's memory workaround: delete the iterator and the
  pipeline after each epoch and build new ones. The post had to use ``seed=-1`` (a random
  seed) so a rebuilt pipeline would not repeat the previous epoch's shuffle and crops;
  here the seed is ``--seed + epoch``: different every epoch and still reproducible. Note
  that a rebuilt sharded reader starts at its own shard again, so each rank keeps reading
  the same shard (a long-lived pipeline rotates shards between epochs, as DALI does).
  stoker's pipeline owns no GPU memory and its outputs are not recycled buffers, so the
  rebuild is rarely needed; the printed resident memory shows the difference.

The post wrote the pipeline with DALI's legacy class API (``ops.FileReader``,
``ops.ImageDecoderRandomCrop``, ``define_graph``). stoker implements the ``fn`` API only,
so the same graph is written with ``fn.*`` here; each ``ops.X`` maps to one ``fn.x`` call
with the same arguments.

Run it::

    python examples/train_cpu_pipeline.py --data /imagenet/train --batch-size 384 --fp16
    python examples/train_cpu_pipeline.py --rebuild-per-epoch --epochs 3
    # CPU smoke test on a generated dataset:
    python examples/train_cpu_pipeline.py --device cpu --iters 2 --images 16 \
        --image-size 64 --crop 32
"""

from __future__ import annotations

import argparse
import gc
import os
import time

import torch
import torch.nn.functional as F
from common import IMAGENET_MEAN, IMAGENET_STD, TinyResNet, add_common_args, data_root, num_classes

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from stoker.plugin.pytorch.distributed import shard_info
from stoker.plugin.pytorch.feed import DeviceFeeder


@pipeline_def
def cpu_train_pipeline(data_dir: str, crop: int, shard_id: int, num_shards: int,
                       min_crop_size: float = 0.08):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id,
                                    num_shards=num_shards, random_shuffle=True, name="Reader")
    # Combined decode and random crop: only the crop's part of each JPEG is decoded.
    images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                           random_aspect_ratio=[0.8, 1.25],
                                           random_area=[min_crop_size, 1.0],
                                           num_attempts=100)
    images = fn.resize(images, resize_x=crop, resize_y=crop,
                       interp_type=types.INTERP_TRIANGULAR)
    images = fn.flip(images, horizontal=fn.random.coin_flip(probability=0.5))
    return images, labels  # uint8 HWC; mean/std are applied on the device


def build_loader(data_dir: str, args: argparse.Namespace, seed: int, device: torch.device
                 ) -> tuple[object, DeviceFeeder]:
    shard = shard_info()
    pipe = cpu_train_pipeline(data_dir=data_dir, crop=args.crop, shard_id=shard.shard_id,
                              num_shards=shard.num_shards, batch_size=args.batch_size,
                              num_threads=args.num_threads, device_id=None, seed=seed)
    iterator = DALIClassificationIterator(pipe, reader_name="Reader", auto_reset=True,
                                          last_batch_policy=LastBatchPolicy.PARTIAL)
    dtype = torch.float32
    if args.fp16:
        dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    feeder = DeviceFeeder(iterator, device=device, keys=("data",), mean=IMAGENET_MEAN,
                          std=IMAGENET_STD, dtype=dtype, layout="HWC")
    return pipe, feeder


def resident_mb() -> float:
    """This process's resident memory now (Linux), else its peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, batch_size=128)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--crop", type=int, default=224)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--fp16", action="store_true", help="feed float16 (bfloat16 on the "
                        "CPU) and run the model under autocast in that type")
    parser.add_argument("--rebuild-per-epoch", action="store_true",
                        help="delete and rebuild the pipeline after every epoch (seed 000)")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    with data_root(args) as root:
        model = TinyResNet(num_classes(root)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        pipe, feeder = build_loader(str(root), args, args.seed, device)
        print(f"{len(feeder)} batches per epoch of {args.batch_size}; uint8 HWC from the "
              f"CPU pipeline, normalized on {device}")
        step, start = 0, time.perf_counter()
        for epoch in range(args.epochs):
            if args.rebuild_per_epoch and epoch > 0:
                pipe.close()  # stop its threads now rather than at garbage collection
                del pipe, feeder
                gc.collect()
                pipe, feeder = build_loader(str(root), args, args.seed + epoch, device)
            model.train()
            for batch in feeder:
                data = batch[0]["data"]  # on `device`, NCHW, normalized
                labels = batch[0]["label"].squeeze(-1).long()
                with torch.autocast(device.type, dtype=data.dtype, enabled=args.fp16):
                    loss = F.cross_entropy(model(data).float(), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                step += 1
                print(f"epoch {epoch} iter {step} loss {loss.item():.4f} "
                      f"shape {tuple(data.shape)} {str(data.dtype).removeprefix('torch.')}",
                      flush=True)
                if step == args.iters:
                    break
            print(f"epoch {epoch} done: resident memory {resident_mb():.0f} MB"
                  f"{' (pipeline rebuilt)' if args.rebuild_per_epoch and epoch else ''}",
                  flush=True)
            if step == args.iters:
                break
        pipe.close()
        print(f"done: {step} iterations in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
