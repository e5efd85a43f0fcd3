"""stoker.plugin.tf.DALIDataset: a real tf.data.Dataset whose elements equal the
pipeline's own run(); dtypes and shapes checked when it is made; Keras fit on the CPU.

DALI's TF plugin (a compiled op, the separate nvidia-dali-tf-plugin package built against
CUDA and the installed TF) cannot run here, so nothing is recorded from it; the argument
rules follow its documented behaviour (``output_dtypes`` a tf.DType or a tuple of them,
size-1 dimensions squeezed to reach a requested shape)."""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.errors import ArgumentError, ArgumentTypeError, ShapeError  # noqa: E402
from stoker.plugin.tf import DALIDataset  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
def numbers(n=None):
    def sample(si):
        if n is not None and si.idx_in_epoch >= n:
            raise StopIteration
        return np.full((3,), si.idx_in_epoch, np.float32)

    x = fn.external_source(source=sample, batch=False)
    noisy = x + fn.random.uniform(range=[0.0, 1.0])
    return noisy, fn.cast(x[0:1], dtype=types.INT32)


def test_a_real_dataset_whose_batches_equal_the_pipeline_run():
    reference = numbers()
    reference.build()
    ds = DALIDataset(numbers(), output_dtypes=(tf.float32, tf.int32), batch_size=4)
    assert isinstance(ds, tf.data.Dataset)
    doubled = ds.map(lambda x, y: (x * 2.0, y)).prefetch(2).take(3)
    for x, y in doubled:
        rx, ry = reference.run()
        assert x.device.endswith("CPU:0")
        np.testing.assert_allclose(x.numpy(), rx.as_array() * 2.0, rtol=1e-6)
        np.testing.assert_array_equal(y.numpy(), ry.as_array())


def test_single_dtype_gives_single_tensors_and_shapes_squeeze_size_one_dims():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def labels():
        return fn.external_source(source=lambda: [np.array([7], np.int32)] * 2)

    ds = DALIDataset(labels(), output_dtypes=tf.int32, output_shapes=(2,))
    assert ds.element_spec == tf.TensorSpec((2,), tf.int32)
    (first,) = list(ds.take(1))
    np.testing.assert_array_equal(first.numpy(), [7, 7])


def test_finite_source_ends_the_dataset_and_a_new_pass_starts_over():
    ds = DALIDataset(numbers(n=8), output_dtypes=(tf.float32, tf.int32))
    first = [y.numpy()[:, 0].tolist() for _, y in ds]
    second = [y.numpy()[:, 0].tolist() for _, y in ds]
    assert first == second == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ArgumentTypeError, match="output_dtypes"):
        DALIDataset(numbers(), output_dtypes=[tf.float32, tf.int32])  # a list: DALI refuses
    with pytest.raises(ArgumentTypeError, match="output_dtypes"):
        DALIDataset(numbers())
    with pytest.raises(ArgumentError, match="2 outputs but output_dtypes gives 1"):
        DALIDataset(numbers(), output_dtypes=(tf.float32,))
    with pytest.raises(ArgumentTypeError, match=r"output 1 is int32 but output_dtypes\[1\]"):
        DALIDataset(numbers(), output_dtypes=(tf.float32, tf.float32))
    with pytest.raises(ShapeError, match=r"output 0 has shape \[4, 3\]"):
        DALIDataset(numbers(), output_dtypes=(tf.float32, tf.int32),
                    output_shapes=((4, 5), None))
    with pytest.raises(ArgumentError, match="one shape per dtype"):
        DALIDataset(numbers(), output_dtypes=(tf.float32, tf.int32), output_shapes=((4, 3),))
    with pytest.raises(ArgumentError, match="batch_size=8"):
        DALIDataset(numbers(), output_dtypes=(tf.float32, tf.int32), batch_size=8)
    with pytest.raises(ArgumentError, match="not both"):
        DALIDataset(numbers(), output_dtypes=(tf.float32, tf.int32),
                    dtypes=(tf.float32, tf.int32))


def test_ragged_batch_is_refused():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def ragged():
        return fn.external_source(source=lambda: [np.zeros(1, np.uint8), np.zeros(2, np.uint8)])

    with pytest.raises(ShapeError, match="differ in shape"):
        DALIDataset(ragged(), output_dtypes=tf.uint8)


def test_keras_fit_example_runs_on_the_cpu():
    pytest.importorskip("skimage")  # make-dataset's photographs
    done = subprocess.run([sys.executable, str(EXAMPLES / "tf_keras_fit.py"), "--images", "16",
                           "--batch-size", "4", "--epochs", "2"], capture_output=True,
                          text=True, timeout=300, cwd=EXAMPLES.parent,
                          env={**os.environ, "PYTHONPATH": str(EXAMPLES.parent)})
    assert done.returncode == 0, done.stderr[-3000:]
    losses = [float(ln.rsplit(" ", 1)[1]) for ln in done.stdout.splitlines() if "loss" in ln]
    assert len(losses) == 2 and all(math.isfinite(v) for v in losses), done.stdout
    assert "epoch 1 steps 4" in done.stdout
