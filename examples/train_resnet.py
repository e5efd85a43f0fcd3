"""ImageNet-style ResNet training fed by stoker: one process, DDP through torchrun, AMP.

The recipe is DALI's ResNet-50 example for PyTorch and seed 003's training templates
(DataParallel/DDP, ``torch.cuda.amp``), ported by changing the imports:

- training: ``fn.readers.file`` (sharded, shuffled) -> ``fn.decoders.image_random_crop``
  (decode only the random crop) -> ``fn.resize`` to the crop size with triangular
  interpolation (as torchvision's loader) -> ``fn.crop_mirror_normalize`` with a random
  horizontal flip, float CHW out;
- validation: decode -> resize the shorter side to crop * 256 / 224 -> centre crop.

With ``--ddp`` each process reads its own shard: ``shard_info()`` gives the *global* rank
as ``shard_id`` (never ``LOCAL_RANK``, which restarts at 0 on every machine) and the world
size as ``num_shards``. ``last_batch_policy=PARTIAL`` with ``reader_name`` makes every rank
run the same number of iterations, and across ranks every image counts exactly once per
epoch (the validation line prints the total it saw). A rank whose shard is one image
shorter may get a smaller, even empty, last batch; the loss is summed and divided by the
batch size so such a step still joins DDP's gradient all-reduce.

``--amp`` wraps the forward pass in ``torch.autocast``: float16 with a ``GradScaler`` on
CUDA, bfloat16 on the CPU (no scaler needed).

Seed 003 launched with ``python -m torch.distributed.launch`` and a ``--local_rank``
argument; ``torchrun`` sets ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` instead, which is what
``shard_info()`` reads. Its ``nn.SyncBatchNorm.convert_sync_batchnorm(model)`` can be
added before wrapping in DDP on GPUs (SyncBatchNorm does not run on the CPU).

Run it::

    python examples/train_resnet.py --data /imagenet --epochs 90 --batch-size 256
    torchrun --nproc_per_node=8 examples/train_resnet.py --ddp --amp --data /imagenet
    # --data holds train/ and val/, each with one sub-folder per class. Without --data a
    # small dataset is generated; a CPU smoke test:
    python examples/train_resnet.py --device cpu --iters 2 --images 16 --image-size 64 --crop 32

The model is a small ResNet defined in ``examples/common.py`` (no torchvision needed);
use ``torchvision.models.resnet50()`` for the real thing.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from common import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    TinyResNet,
    add_common_args,
    data_root,
    make_train_val,
    num_classes,
)

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from stoker.plugin.pytorch.distributed import shard_info


@pipeline_def
def train_pipeline(data_dir: str, crop: int, shard_id: int, num_shards: int):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id,
                                    num_shards=num_shards, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB,
                                           random_aspect_ratio=[0.75, 4 / 3],
                                           random_area=[0.08, 1.0], num_attempts=100)
    images = fn.resize(images, resize_x=crop, resize_y=crop,
                       interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop), mean=IMAGENET_MEAN, std=IMAGENET_STD,
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


@pipeline_def
def val_pipeline(data_dir: str, crop: int, shard_id: int, num_shards: int):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id,
                                    num_shards=num_shards, random_shuffle=False, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_shorter=round(crop * 256 / 224),
                       interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop), mean=IMAGENET_MEAN, std=IMAGENET_STD)
    return images, labels


def make_loader(pipeline, data_dir: pathlib.Path, args: argparse.Namespace, shard, seed: int):
    pipe = pipeline(data_dir=str(data_dir), crop=args.crop, shard_id=shard.shard_id,
                    num_shards=shard.num_shards, batch_size=args.batch_size,
                    num_threads=args.num_threads, device_id=None, seed=seed)
    return DALIClassificationIterator(pipe, reader_name="Reader",
                                      last_batch_policy=LastBatchPolicy.PARTIAL)


def setup_distributed(args: argparse.Namespace) -> torch.device:
    if not args.ddp:
        return torch.device(args.device)
    if "RANK" not in os.environ:
        raise SystemExit("--ddp needs torchrun: torchrun --nproc_per_node=N "
                         "examples/train_resnet.py --ddp ...")
    cuda = args.device == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo")
    if cuda:
        local = shard_info().local_rank
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


def batch_to(batch: list[dict], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    data = batch[0]["data"].to(device, non_blocking=True)
    labels = batch[0]["label"].squeeze(-1).long().to(device, non_blocking=True)
    return data, labels


def autocast(args: argparse.Namespace, device: torch.device):
    dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    return torch.autocast(device.type, dtype=dtype, enabled=args.amp)


def train(args: argparse.Namespace) -> None:
    device = setup_distributed(args)
    shard = shard_info()
    rank0 = shard.shard_id == 0
    torch.manual_seed(args.seed)
    with data_root(args, make=make_train_val) as root:
        train_dir, val_dir = root / "train", root / "val"
        # Each rank gets its own augmentation stream; the model starts identical everywhere.
        train_loader = make_loader(train_pipeline, train_dir, args, shard,
                                   seed=args.seed + shard.shard_id)
        val_loader = make_loader(val_pipeline, val_dir, args, shard, seed=args.seed)
        model = TinyResNet(num_classes(train_dir)).to(device)
        if args.ddp:
            model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[device.index] if device.type == "cuda" else None)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                                    weight_decay=1e-4)
        scaler = torch.amp.GradScaler(device.type, enabled=args.amp and device.type == "cuda")
        if rank0:
            print(f"rank {shard.shard_id}/{shard.num_shards} on {device}: "
                  f"{len(train_loader)} train batches per epoch (batch {args.batch_size})")
        step, images, start = 0, 0, time.perf_counter()
        for epoch in range(args.epochs):
            model.train()
            for batch in train_loader:  # a new `for` starts the next epoch
                data, labels = batch_to(batch, device)
                with autocast(args, device):
                    logits = model(data)
                    loss = F.cross_entropy(logits.float(), labels, reduction="sum")
                loss = loss / max(len(labels), 1)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                step += 1
                images += len(labels)
                if rank0:
                    print(f"epoch {epoch} iter {step} loss {loss.item():.4f} "
                          f"shape {tuple(data.shape)}", flush=True)
                if step == args.iters:
                    break
            evaluate(model, val_loader, args, device, rank0, epoch)
            if step == args.iters:  # a smoke test: stop after the first validation
                break
        elapsed = time.perf_counter() - start
        if rank0:
            print(f"done: {step} iterations, {images} images on rank 0 in {elapsed:.1f} s "
                  f"({images / elapsed:.1f} images/s per rank)")
    if args.ddp:
        dist.destroy_process_group()


@torch.no_grad()
def evaluate(model, loader, args, device: torch.device, rank0: bool, epoch: int) -> None:
    model.eval()
    counts = torch.zeros(2, dtype=torch.float64, device=device)  # correct, seen
    for batch in loader:
        data, labels = batch_to(batch, device)
        with autocast(args, device):
            logits = model(data)
        counts += torch.tensor([(logits.argmax(1) == labels).sum().item(), len(labels)],
                               dtype=torch.float64, device=device)
    if args.ddp:
        dist.all_reduce(counts)
    correct, seen = (int(v) for v in counts.tolist())
    if rank0:
        top1 = correct / seen if seen else math.nan
        print(f"epoch {epoch} val: {seen} images, top-1 {top1:.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, batch_size=64, data_help="folder with train/ and val/, each "
                    "with one sub-folder per class")
    parser.add_argument("--val-images", type=int, default=None,
                        help="size of the generated validation set (default: --images / 4)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--crop", type=int, default=224, help="training image size")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--ddp", action="store_true", help="DistributedDataParallel (torchrun)")
    parser.add_argument("--amp", action="store_true",
                        help="mixed precision: float16 on CUDA, bfloat16 on the CPU")
    train(parser.parse_args())


if __name__ == "__main__":
    main()
