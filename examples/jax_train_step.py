"""JAX: a stoker pipeline feeding a ``jax.jit`` training step through
``stoker.plugin.jax.data_iterator``, sharded over the JAX devices (CPU devices here).

The recipe of DALI's JAX examples: the decorator turns the pipeline function into an
iterator factory; ``batch_size`` is the global batch, split over one pipeline per device
(each reads its own shard); every step yields ``{"images": jax.Array, "labels":
jax.Array}`` already laid out with the ``NamedSharding`` the jitted step expects, so no
data moves between devices. The model is a softmax regression on 16 x 16 pixels (the
point is the feeding, not the model). ``--devices N`` makes N CPU devices (XLA_FLAGS) to show
the sharded form on a machine without accelerators.

Run it::

    python examples/jax_train_step.py --images 32 --batch-size 8 --epochs 2 --devices 2
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (one sub-folder per class); when "
                        "omitted, a small dataset is generated")
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16, help="the global batch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--devices", type=int, default=1, help="CPU devices to shard over")
    parser.add_argument("--num-threads", type=int, default=2)
    args = parser.parse_args()
    # Before jax is imported: how many CPU devices XLA makes.
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            from stoker.cli.make_dataset import make_dataset

            root = pathlib.Path(tmp)
            make_dataset(root, images=args.images, classes=args.classes)
        train(args, str(root))


def train(args: argparse.Namespace, root: str) -> None:
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from stoker import fn, types
    from stoker.plugin.jax import LastBatchPolicy, data_iterator

    mesh = Mesh(jax.devices(), ("batch",))
    sharding = NamedSharding(mesh, PartitionSpec("batch"))

    @data_iterator(output_map=["images", "labels"], reader_name="Reader",
                   last_batch_policy=LastBatchPolicy.DROP, sharding=sharding)
    def images(shard_id: int, num_shards: int):
        jpegs, labels = fn.readers.file(file_root=root, name="Reader", shard_id=shard_id,
                                        num_shards=num_shards, random_shuffle=True, seed=1)
        img = fn.decoders.image(jpegs, output_type=types.RGB)
        img = fn.resize(img, resize_x=16, resize_y=16)
        img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="HWC",
                                       mean=[128.0] * 3, std=[64.0] * 3)
        return img, labels

    it = images(batch_size=args.batch_size, num_threads=args.num_threads)
    features = 16 * 16 * 3
    params = {"w": jnp.zeros((features, args.classes)), "b": jnp.zeros((args.classes,))}

    def loss_fn(p, x, y):
        logits = x.reshape(x.shape[0], -1) @ p["w"] + p["b"]
        onehot = jax.nn.one_hot(y[:, 0], args.classes)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))

    @jax.jit
    def step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree.map(lambda a, g: a - 0.01 * g, p, grads), loss

    print(f"{len(jax.devices())} devices, {len(it)} steps per epoch")
    for epoch in range(args.epochs):
        for batch in it:
            x, y = batch["images"], batch["labels"]
            params, loss = step(params, x, y)
            print(f"epoch {epoch} shape {tuple(x.shape)} shards {len(x.addressable_shards)} "
                  f"loss {float(loss):.4f}")
        it.reset()


if __name__ == "__main__":
    main()
