"""Shared test helpers: build a one-off pipeline around a graph function and run it once.

Importable from any test file (pyproject's pytest ``pythonpath`` includes tests/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stoker import Pipeline, fn, pipeline_def
from stoker.tensors import TensorListCPU


class Batch(TensorListCPU):
    """A pipeline output as operator tests read it: ``[i]`` and iteration give the samples
    as numpy arrays (``at(i)``), where a ``TensorListCPU`` gives ``TensorCPU`` objects;
    ``layout()``, ``shape()``, ``dtype`` and the rest are the batch's."""

    __slots__ = ()

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        return self.at(i)

    def __iter__(self) -> Any:
        return iter(self.samples())


def _batch(out: Any) -> Any:
    return Batch(out) if isinstance(out, TensorListCPU) else out


def _constant(samples: Sequence[Any]) -> Callable[[], Sequence[Any]]:
    # Not `lambda s=s: s`: as in DALI, a parameter with a default still gets the iteration.
    return lambda: samples


def run_pipeline(build: Callable[..., Any], *inputs: Sequence[Any],
                 layouts: Sequence[str | None] | None = None, batch_size: int | None = None,
                 threads: int = 2, seed: int = 3) -> tuple:
    """Runs ``build(*nodes)`` once, where each node is an external_source over one list of
    samples in ``inputs``; returns the pipeline's outputs (a tuple of TensorLists)."""
    layouts = list(layouts or [None] * len(inputs))
    size = batch_size if batch_size is not None else len(inputs[0]) if inputs else 1

    @pipeline_def(batch_size=size, num_threads=threads, device_id=None, seed=seed,
                  exec_pipelined=False)
    def pipe():
        nodes = [fn.external_source(source=_constant(s), layout=lay)
                 for s, lay in zip(inputs, layouts, strict=True)]
        return build(*nodes)

    p = pipe()
    try:
        return tuple(_batch(out) for out in p.run())
    finally:
        p.close()


def run(build: Callable[..., Any], *inputs: Sequence[Any],
        layouts: Sequence[str | None] | None = None) -> Any:
    """``run_pipeline``, with a single output returned bare."""
    out = run_pipeline(build, *inputs, layouts=layouts)
    return out[0] if len(out) == 1 else out


def same(tl: Any, expected: Sequence[np.ndarray]) -> None:
    """A batch equals the expected samples exactly, dtype and shape included."""
    assert len(tl) == len(expected)
    samples = tl.samples() if hasattr(tl, "samples") else tl  # numpy, not TensorCPU
    for got, want in zip(samples, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_array_equal(got, want)


class CountingSource:
    """An external_source batch callback that counts its calls: batch k holds the value k
    in every sample; raises ValueError on batch ``fail_at``."""

    def __init__(self, batch_size: int = 2, fail_at: int | None = None):
        self.calls = 0
        self.batch_size = batch_size
        self.fail_at = fail_at

    def __call__(self) -> list[np.ndarray]:
        k = self.calls
        self.calls += 1
        if k == self.fail_at:
            raise ValueError(f"source broke on batch {k}")
        return [np.full((3,), k, np.int64) for _ in range(self.batch_size)]


def gradient_jpeg(h: int, w: int, seed: int = 0) -> np.ndarray:
    """The bytes of an h x w JPEG (quality 90) of colour gradients with a little noise."""
    import io

    from PIL import Image

    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(xx * 3) % 256, (yy * 4) % 256, ((xx + yy) * 2) % 256], -1)
    img = np.clip(img + np.random.default_rng(seed).integers(-20, 20, img.shape), 0, 255)
    buf = io.BytesIO()
    Image.fromarray(img.astype(np.uint8)).save(buf, "JPEG", quality=90)
    return np.frombuffer(buf.getvalue(), np.uint8)


def photo(h: int, w: int, seed: int) -> np.ndarray:
    """An h x w RGB uint8 image of smooth gradients plus texture, as a photo's JPEG holds."""
    import cv2

    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 3) % 256, (yy * 4) % 256, ((xx + yy) * 2) % 256], -1)
    noise = np.random.default_rng(seed).integers(-25, 25, (h, w, 3))
    return np.clip(cv2.GaussianBlur(base.astype(np.uint8), (0, 0), 1.5) + noise, 0, 255
                   ).astype(np.uint8)


def run_samples(build: Callable[..., Any], batch_size: int, threads: int = 2) -> list:
    """Runs a graph without inputs once: each output as a list of numpy samples."""
    outs = run_pipeline(build, batch_size=batch_size, threads=threads)
    return [[np.array(s) for s in tl] for tl in outs]


def apply_op(op: Callable[..., Any], images: Sequence[np.ndarray], layout: str = "HWC",
             **kwargs: Any) -> list:
    """``op(images, **kwargs)`` in a pipeline, as a list of numpy samples."""
    def build():
        return op(fn.external_source(source=lambda: images, layout=layout), **kwargs)

    return run_samples(build, len(images))[0]


def make_files(root: Any, names: list[str]) -> None:
    """Each file holds its own relative path as bytes, so outputs are easy to check."""
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())


def sized_files(root: Any, count: int) -> list[str]:
    """Paths of ``count`` files: f{i}.bin holds byte i, i + 1 times (each its own size)."""
    paths = []
    for i in range(count):
        path = root / f"f{i}.bin"
        path.write_bytes(bytes([i]) * (i + 1))
        paths.append(str(path))
    return paths


def read_files(runs: int = 1, batch_size: int = 1, pipe_seed: int = 1, **reader_args) -> list:
    """``runs`` batches of fn.readers.file as lists of (source_info, bytes, label)."""

    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=pipe_seed)
    def pipe():
        data, label = fn.readers.file(name="Reader", **reader_args)
        return data, label

    return collect_reads(pipe(), runs)


def collect_reads(p: Any, runs: int) -> list:
    """``runs`` batches of a (data, label) reader pipeline as lists of (source_info, bytes,
    label); closes the pipeline."""
    out = []
    for _ in range(runs):
        data, labels = p.run()
        out.append([(data.source_info(i), data.at(i).tobytes(), int(labels.at(i)[0]))
                    for i in range(len(data))])
    p.close()
    return out


def as_samples(outputs: Sequence[Any]) -> list[list[tuple]]:
    """Every sample of every pipeline output as (dtype, shape, bytes): equal means
    bit-identical."""
    return [[(str(a.dtype), a.shape, a.tobytes()) for a in (tl.at(i) for i in range(len(tl)))]
            for tl in outputs]


def play(pipe: Any, calls: list[str], checkpoints: list | None = None,
         outcome: Callable[[Any], Any] = as_samples) -> list:
    """Plays ``calls`` ("run" or "reset") on ``pipe``; what each returned (``outcome`` of
    its outputs, "stop" for StopIteration, or "reset"). With ``checkpoints``, appends the
    pipeline's checkpoint after every call (the checkpoint tests resume from each)."""
    out = []
    for call in calls:
        if call == "reset":
            pipe.reset()
            out.append("reset")
        else:
            try:
                out.append(outcome(pipe.run()))
            except StopIteration:
                out.append("stop")
        if checkpoints is not None:
            checkpoints.append(pipe.checkpoint())
    return out


def run_batches(build: Callable[..., Any], *batches: Sequence[Any]) -> list[list[np.ndarray]]:
    """Runs ``build(*nodes)`` once in a one-thread pipeline, each node an external_source
    giving one batch of ``batches``; every output's samples as numpy arrays."""
    pipe = Pipeline(batch_size=len(batches[0]), num_threads=1, device_id=None)
    with pipe:
        nodes = [fn.external_source(source=[b], cycle=True) for b in batches]
        out = build(*nodes)
        pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
    pipe.build()
    return [[np.array(t.at(i)) for i in range(len(t))] for t in pipe.run()]


def damaged_video(folder: Any) -> Any:
    """A copy of tests/data/video/h264_bframes.mp4 whose packets are all there (it
    indexes) but whose frame data is garbage past the first key frame: decoding its
    windows fails. Returns (the good file's path, the damaged copy's)."""
    import pathlib

    good = pathlib.Path(__file__).parent / "data" / "video" / "h264_bframes.mp4"
    data = bytearray(good.read_bytes())
    for k in range(1200, len(data) - 2000, 53):
        data[k:k + 16] = bytes(16)
    bad = pathlib.Path(folder) / "damaged.mp4"
    bad.write_bytes(bytes(data))
    return good, bad
