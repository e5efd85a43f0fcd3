"""stoker.plugin.jax in one process (one CPU device): values equal to the pipeline's own
run(), data_iterator with checkpoints, the peekable iterator, and bad uses. The
multi-device forms and DALI's recorded behaviour: test_jax_vs_dali.py."""

from __future__ import annotations

import math
import os
import pathlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.errors import ArgumentError, PipelineError, ShapeError  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, LastBatchPolicy, data_iterator  # noqa: E402
from stoker.plugin.jax.clu import (  # noqa: E402
    DALIGenericPeekableIterator,
    peekable_data_iterator,
)

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _files(tmp_path, n=10):
    folder = tmp_path / "c0"
    folder.mkdir(exist_ok=True)
    for i in range(n):
        (folder / f"{i:03d}.bin").write_bytes(bytes([i, 255 - i]))
    return str(tmp_path)


def _graph(root):
    def graph(shard_id=0, num_shards=1):
        data, label = fn.readers.file(file_root=root, file_filters=["*.bin"], name="Reader",
                                      shard_id=shard_id, num_shards=num_shards)
        return fn.cast(data, dtype=types.FLOAT) * 0.5, label
    return graph


def _pipe(root, **kw):
    return pipeline_def(_graph(root), batch_size=4, num_threads=1, device_id=None, **kw)()


def test_outputs_are_jax_arrays_equal_to_the_pipeline_run(tmp_path):
    root = _files(tmp_path)
    reference = _pipe(root)
    reference.build()
    it = DALIGenericIterator([_pipe(root)], ["x", "y"], reader_name="Reader")
    assert len(it) == math.ceil(10 / 4)
    for batch in it:
        x, y = reference.run()
        assert isinstance(batch["x"], jax.Array) and batch["x"].dtype == np.float32
        np.testing.assert_array_equal(np.asarray(batch["x"]), x.as_array())
        np.testing.assert_array_equal(np.asarray(batch["y"]), y.as_array())
        assert batch["x"].devices() == {jax.devices()[0]}


def test_one_device_sharding_gives_the_batch_as_one_array(tmp_path):
    mesh = jax.sharding.Mesh(jax.devices(), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    it = DALIGenericIterator([_pipe(_files(tmp_path))], ["x", "y"], reader_name="Reader",
                             sharding=sharding)
    batch = next(it)
    assert batch["x"].sharding == sharding and batch["x"].shape == (4, 2)


def test_data_iterator_checkpoints_resume_with_the_same_batches(tmp_path):
    make = data_iterator(_graph(_files(tmp_path)), output_map=["x", "y"],
                         reader_name="Reader")
    it = make(batch_size=3, enable_checkpointing=True)
    next(it), next(it)
    saved = it.checkpoints()
    again = make(batch_size=3, enable_checkpointing=True, checkpoints=saved)
    for _ in range(5):  # across the epoch's end (10 samples, 3 a batch)
        try:
            want = next(it)
        except StopIteration:
            with pytest.raises(StopIteration):
                next(again)
            it.reset(), again.reset()
            continue
        got = next(again)
        np.testing.assert_array_equal(np.asarray(got["y"]), np.asarray(want["y"]))


def test_peekable_iterator_looks_ahead_without_taking(tmp_path):
    it = DALIGenericPeekableIterator([_pipe(_files(tmp_path))], ["x", "y"],
                                     reader_name="Reader")
    assert it.element_spec["x"].shape == (4, 2)
    peeked = it.peek()
    with pytest.raises(PipelineError, match="peeked batch"):
        it.checkpoints()
    first = next(it)
    np.testing.assert_array_equal(np.asarray(first["x"]), np.asarray(peeked["x"]))
    future = it.peek_async()
    second = next(it)
    np.testing.assert_array_equal(np.asarray(future.result()["x"]), np.asarray(second["x"]))
    assert not np.array_equal(np.asarray(first["x"]), np.asarray(second["x"]))


def test_peekable_decorator_builds_peekable_iterators(tmp_path):
    make = peekable_data_iterator(_graph(_files(tmp_path)), output_map=["x", "y"],
                                  reader_name="Reader")
    it = make(batch_size=2)
    assert isinstance(it, DALIGenericPeekableIterator) and len(it) == 5


def test_bad_uses_raise_clear_errors(tmp_path):
    root = _files(tmp_path)
    with pytest.raises(ArgumentError, match="PARTIAL"):
        DALIGenericIterator([_pipe(root)], ["x", "y"], reader_name="Reader",
                            last_batch_policy=LastBatchPolicy.PARTIAL)
    with pytest.raises(ArgumentError, match="jax.sharding.Sharding"):
        DALIGenericIterator([_pipe(root)], ["x", "y"], reader_name="Reader", sharding="batch")
    with pytest.raises(ArgumentError, match="2 outputs but output_map names 3"):
        DALIGenericIterator([_pipe(root)], ["x", "y", "z"], reader_name="Reader")
    mesh = jax.sharding.Mesh(jax.devices(), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    with pytest.raises(ArgumentError, match="not both"):
        data_iterator(_graph(root), output_map=["x", "y"], sharding=sharding,
                      devices=jax.devices())
    with pytest.raises(ArgumentError, match="2 pipelines"):
        DALIGenericIterator([_pipe(root), _pipe(root)], ["x", "y"], reader_name="Reader",
                            sharding=sharding)
    make = data_iterator(_graph(root), output_map=["x", "y"], reader_name="Reader")
    with pytest.raises(ArgumentError, match="checkpoints for one pipeline"):
        make(batch_size=2, checkpoints=["a", "b"])


def test_ragged_batch_cannot_become_one_array():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def ragged():
        return fn.external_source(source=lambda: [np.zeros(1, np.uint8), np.zeros(2, np.uint8)])

    it = DALIGenericIterator([ragged()], ["x"], size=4)
    with pytest.raises(ShapeError, match="one array"):
        next(it)


def test_jax_train_step_example_runs_sharded_over_two_cpu_devices():
    import subprocess
    import sys

    pytest.importorskip("skimage")  # make-dataset's photographs
    done = subprocess.run([sys.executable, str(EXAMPLES / "jax_train_step.py"), "--images",
                           "16", "--batch-size", "8", "--epochs", "2", "--devices", "2"],
                          capture_output=True, text=True, timeout=300, cwd=EXAMPLES.parent,
                          env={**os.environ, "PYTHONPATH": str(EXAMPLES.parent)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [ln for ln in done.stdout.splitlines() if "loss" in ln]
    assert "2 devices, 2 steps per epoch" in done.stdout
    assert len(lines) == 4 and all("shape (8, 16, 16, 3) shards 2" in ln for ln in lines)
    assert all(math.isfinite(float(ln.rsplit(" ", 1)[1])) for ln in lines)
