"""TensorFlow plugin: ``DALIDataset``, a real ``tf.data.Dataset`` over a stoker pipeline.

DALI runs its pipeline inside a compiled TF op; stoker has no compiled plugin: the dataset
is TF's generator dataset fed by the live pipeline, so ``.map``, ``.prefetch``,
``model.fit`` and ``tf.distribute`` see an ordinary dataset. Each element is one batch: a
tuple of CPU tensors (one per output), or one tensor when ``output_dtypes`` is a single
``tf.DType``. A batch is copied once, from the pipeline's array into the tensor TF makes;
it is checked against ``output_dtypes``/``output_shapes`` first (TF's generator dataset
would silently cast a wrong dtype), with size-1 dimensions squeezed to reach a requested
shape of lower rank as in DALI. TensorFlow is imported here only (``stoker[tf]``).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from stoker.errors import ArgumentError, ArgumentTypeError, PipelineError, ShapeError
from stoker.tensors import TensorListGPU

__all__ = ["DALIDataset"]


def _deprecated(new: Any, old: Any, name: str) -> Any:
    if old is None:
        return new
    if new is not None:
        raise ArgumentError(f"DALIDataset: give output_{name}, not both output_{name} and "
                            f"the deprecated {name}")
    warnings.warn(f"DALIDataset: {name} is deprecated; use output_{name}", stacklevel=3)
    return tuple(old) if isinstance(old, list) else old


class _Batches:
    """The pipeline's batches, checked and shaped for the dataset's element spec."""

    def __init__(self, pipe: Any, dtypes: tuple, shapes: tuple, single: bool):
        self.pipe, self.dtypes, self.shapes, self.single = pipe, dtypes, shapes, single
        self.lock = threading.Lock()
        self.first: tuple | None = None
        self.ended = False

    def pull(self) -> tuple:
        outputs = self.pipe.run()
        return tuple(self._fit(i, tl) for i, tl in enumerate(outputs))

    def _fit(self, i: int, tl: Any) -> np.ndarray:
        if isinstance(tl, TensorListGPU):
            tl = tl.as_cpu()
        try:
            array = tl.as_array()
        except ValueError as e:
            raise ShapeError(f"DALIDataset: output {i}: the samples of a batch differ in shape "
                             f"and cannot form one tensor (pad or resize them): {e}") from None
        want = self.dtypes[i]
        if array.dtype != want.as_numpy_dtype:
            raise ArgumentTypeError(f"DALIDataset: output {i} is {array.dtype} but "
                                    f"output_dtypes[{i}] is tf.{want.name}; give the "
                                    "pipeline's type (or cast in the pipeline)")
        shape = self.shapes[i]
        if shape.rank is not None and shape.rank < array.ndim:
            squeezable = [d for d in range(array.ndim) if array.shape[d] == 1]
            extra = array.ndim - shape.rank
            if len(squeezable) >= extra:  # DALI drops size-1 dimensions, last ones first
                array = array.squeeze(axis=tuple(squeezable[-extra:]))
        if not shape.is_compatible_with(array.shape):
            raise ShapeError(f"DALIDataset: output {i} has shape {list(array.shape)}, not "
                             f"compatible with output_shapes[{i}] = {shape}")
        return array

    def __call__(self) -> Iterator:
        """The generator TF calls each time the dataset is iterated; a new iteration after
        a finite source ended starts the pipeline over."""
        while True:
            with self.lock:
                if self.first is not None:
                    batch, self.first = self.first, None
                else:
                    if self.ended:
                        self.pipe.reset()
                        self.ended = False
                    try:
                        batch = self.pull()
                    except StopIteration:
                        self.ended = True
                        return
            yield batch[0] if self.single else batch


class DALIDataset(dataset_ops.DatasetSource):
    """``tf.data.Dataset`` of a pipeline's batches, with DALI's arguments.

    ``output_dtypes``: one ``tf.DType`` or a tuple of them, one per pipeline output.
    ``output_shapes``: optional, the same structure; ``None`` dimensions are free.
    The pipeline's own batch size, threads and device are used: ``batch_size``, when
    given, must equal the pipeline's; ``num_threads``, ``device_id``, the queue depths and
    ``exec_*`` are accepted for compatibility and have no effect (DALI rebuilds the
    pipeline from them; stoker keeps the one given)."""

    def __init__(self, pipeline: Any, output_dtypes: Any = None, output_shapes: Any = None,
                 fail_on_device_mismatch: bool = True, *, batch_size: int | None = None,
                 num_threads: int | None = None, device_id: int | None = None,
                 exec_separated: bool = False, exec_dynamic: bool = False,
                 prefetch_queue_depth: int = 2, cpu_prefetch_queue_depth: int = 2,
                 gpu_prefetch_queue_depth: int = 2, dtypes: Any = None, shapes: Any = None):
        output_dtypes = _deprecated(output_dtypes, dtypes, "dtypes")
        output_shapes = _deprecated(output_shapes, shapes, "shapes")
        single = isinstance(output_dtypes, tf.DType)
        dtypes_t = (output_dtypes,) if single else output_dtypes
        if not isinstance(dtypes_t, tuple) or not dtypes_t or \
                not all(isinstance(d, tf.DType) for d in dtypes_t):
            raise ArgumentTypeError(f"DALIDataset: output_dtypes must be a tf.DType or a tuple "
                                    f"of tf.DType, got {output_dtypes!r}")
        if output_shapes is None:
            shapes_t = tuple(tf.TensorShape(None) for _ in dtypes_t)
        else:
            shapes_t = (output_shapes,) if single else output_shapes
            if not isinstance(shapes_t, tuple | list) or len(shapes_t) != len(dtypes_t):
                raise ArgumentError(f"DALIDataset: output_shapes {output_shapes!r} must have "
                                    f"one shape per dtype ({len(dtypes_t)})")
            try:
                shapes_t = tuple(tf.TensorShape(s) for s in shapes_t)
            except (TypeError, ValueError) as e:
                raise ArgumentError(f"DALIDataset: output_shapes {output_shapes!r}: {e}") \
                    from None
        pipeline.build()
        if batch_size is not None and batch_size != pipeline.batch_size:
            raise ArgumentError(f"DALIDataset: batch_size={batch_size} but the pipeline's "
                                f"batch size is {pipeline.batch_size}")
        n = len(pipeline._outputs)
        if n != len(dtypes_t):
            raise ArgumentError(f"DALIDataset: the pipeline has {n} outputs but "
                                f"output_dtypes gives {len(dtypes_t)}")
        self._batches = _Batches(pipeline, dtypes_t, shapes_t, single)
        # The first batch is made and checked now: a wrong dtype or shape is an error here,
        # not a TF error from inside the generator at the first step.
        try:
            self._batches.first = self._batches.pull()
        except StopIteration:
            raise PipelineError("DALIDataset: the pipeline produced no batch") from None
        specs = tuple(tf.TensorSpec(s, d) for s, d in zip(shapes_t, dtypes_t, strict=True))
        self._pipeline = pipeline
        self._inner = tf.data.Dataset.from_generator(
            self._batches, output_signature=specs[0] if single else specs)
        super().__init__(self._inner._variant_tensor)

    @property
    def element_spec(self) -> Any:
        return self._inner.element_spec
