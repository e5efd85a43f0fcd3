"""TensorFlow: a stoker pipeline as a ``tf.data.Dataset`` (``stoker.plugin.tf.DALIDataset``)
feeding Keras ``model.fit`` on the CPU.

The recipe of DALI's TensorFlow examples: build the pipeline, wrap it in ``DALIDataset``
with the outputs' dtypes and shapes (the labels' trailing size-1 dimension is squeezed to
reach the requested ``(batch,)``), and hand the dataset to ``fit`` with
``steps_per_epoch``: a reader inside a pipeline run this way goes round forever, as in
DALI. ``.prefetch`` shows the dataset composes like any other.

Run it::

    python examples/tf_keras_fit.py --images 32 --batch-size 8 --epochs 2
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
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--num-threads", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TF's start-up notes quiet
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            from stoker.cli.make_dataset import make_dataset

            root = pathlib.Path(tmp)
            make_dataset(root, images=args.images, classes=args.classes)
        fit(args, str(root))


def fit(args: argparse.Namespace, root: str) -> None:
    import keras
    import tensorflow as tf

    from stoker import fn, pipeline_def, types
    from stoker.plugin.tf import DALIDataset

    @pipeline_def(batch_size=args.batch_size, num_threads=args.num_threads, device_id=None)
    def images():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=1)
        img = fn.decoders.image(jpegs, output_type=types.RGB)
        img = fn.resize(img, resize_x=16, resize_y=16)
        img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="HWC",
                                       mean=[128.0] * 3, std=[64.0] * 3)
        return img, labels

    bs = args.batch_size
    dataset = DALIDataset(images(), output_dtypes=(tf.float32, tf.int32),
                          output_shapes=((bs, 16, 16, 3), (bs,)), batch_size=bs)
    model = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(args.classes)])
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    steps = max(args.images // bs, 1)
    history = model.fit(dataset.prefetch(2), steps_per_epoch=steps, epochs=args.epochs,
                        verbose=0, shuffle=False)
    print(f"element spec {dataset.element_spec}")
    for epoch, loss in enumerate(history.history["loss"]):
        print(f"epoch {epoch} steps {steps} loss {loss:.4f}")


if __name__ == "__main__":
    main()
