"""A stoker iterator as a drop-in data source: a plain ``for`` loop, and PyTorch Lightning.

The iterator behaves like a ``DataLoader`` where a training loop cares:

- ``len(it)`` is the number of batches in an epoch (with ``reader_name`` and PARTIAL:
  ``ceil(images per shard / batch_size)``; with DROP: whole batches only);
- ``for batch in it:`` runs one epoch; starting a new ``for`` loop after it starts the
  next epoch (no ``reset()`` call needed), with the reader's next shuffle;
- no surprise copies: a CPU batch becomes a torch tensor that shares memory with the
  pipeline's output (``torch.from_numpy``), ``.to(device, non_blocking=True)`` is the one
  copy, and a batch stays valid after the next one arrives: stoker does not recycle
  output buffers under you, so you may keep batches around (``--keep-check`` verifies
  that the first batch is unchanged after the whole epoch).

Each element is a list with one dict per pipeline: ``batch[0]["data"]``,
``batch[0]["label"]``.

PyTorch Lightning (not installed here, so this part is not run in CI) takes the same
object: Lightning accepts any iterable as ``train_dataloaders``, uses ``len()`` for its
progress bar and calls ``iter()`` at every epoch, and moves the tensors inside the list of
dicts to the module's device itself::

    import lightning as L
    import torch.nn.functional as F

    class LitClassifier(L.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def training_step(self, batch, batch_idx):
            data, labels = batch[0]["data"], batch[0]["label"].squeeze(-1).long()
            loss = F.cross_entropy(self.model(data), labels)
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

    it = make_iterator(data_dir, batch_size=64, num_threads=8, shard=shard_info())
    trainer = L.Trainer(max_epochs=10, use_distributed_sampler=False)
    trainer.fit(LitClassifier(TinyResNet(num_classes)), train_dataloaders=it)

Under Lightning's DDP strategy build the iterator inside the module's ``setup()`` or
``train_dataloader()`` (each process then reads its own shard via ``shard_info()``), and
avoid ``limit_train_batches``: an epoch cut short is not reset by the next ``iter()``, the
iterator goes on where it stopped (DALI's iterators behave the same).

Run it::

    python examples/plain_loop.py --data /imagenet/train --epochs 2
    python examples/plain_loop.py --device cpu --images 10 --batch-size 4 --image-size 64 --crop 32
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F
from common import IMAGENET_MEAN, IMAGENET_STD, TinyResNet, add_common_args, data_root, num_classes

from stoker import fn, pipeline_def, types
from stoker.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy
from stoker.plugin.pytorch.distributed import ShardInfo, shard_info


@pipeline_def
def classification_pipeline(data_dir: str, crop: int, shard_id: int, num_shards: int):
    jpegs, labels = fn.readers.file(file_root=data_dir, shard_id=shard_id,
                                    num_shards=num_shards, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=crop, resize_y=crop)
    images = fn.crop_mirror_normalize(images, mean=IMAGENET_MEAN, std=IMAGENET_STD,
                                      mirror=fn.random.coin_flip(), output_layout="CHW")
    return images, labels


def make_iterator(data_dir: str, batch_size: int, num_threads: int, shard: ShardInfo,
                  crop: int = 224, seed: int = 42) -> DALIClassificationIterator:
    pipe = classification_pipeline(data_dir=data_dir, crop=crop, shard_id=shard.shard_id,
                                   num_shards=shard.num_shards, batch_size=batch_size,
                                   num_threads=num_threads, device_id=None, seed=seed)
    return DALIClassificationIterator(pipe, reader_name="Reader",
                                      last_batch_policy=LastBatchPolicy.PARTIAL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, batch_size=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--crop", type=int, default=224)
    parser.add_argument("--keep-check", action="store_true",
                        help="keep the first batch and verify it is unchanged after the epoch")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    with data_root(args) as root:
        it = make_iterator(str(root), args.batch_size, args.num_threads, shard_info(),
                           crop=args.crop, seed=args.seed)
        model = TinyResNet(num_classes(root)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        print(f"len(it) = {len(it)} batches per epoch")
        step, start = 0, time.perf_counter()
        for epoch in range(args.epochs):
            kept, kept_copy, images = None, None, 0
            for i, batch in enumerate(it):
                data = batch[0]["data"].to(device, non_blocking=True)  # no copy on the CPU
                labels = batch[0]["label"].squeeze(-1).long().to(device, non_blocking=True)
                if args.keep_check and i == 0:
                    kept, kept_copy = batch[0]["data"], batch[0]["data"].clone()
                loss = F.cross_entropy(model(data), labels)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                images += len(labels)
                step += 1
                print(f"epoch {epoch} batch {i} loss {loss.item():.4f} "
                      f"shape {tuple(data.shape)}", flush=True)
                if step == args.iters:
                    break
            line = f"epoch {epoch}: {i + 1} batches, {images} images"
            if kept is not None:
                line += f"; first batch unchanged after the epoch: {torch.equal(kept, kept_copy)}"
            print(line, flush=True)
            if step == args.iters:
                break
        print(f"done: {step} iterations in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
