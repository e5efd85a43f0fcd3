"""Per-operator speed of issue 28's operators: stoker vs DALI's CPU backend, side by side.

Reductions, constructors, batch reordering, filters and image effects run on a batch of
natural 640x480 RGB images (scikit-image's samples, resized); debayer on their green
planes as raw mosaics; power_spectrum on float32 signals (16 channels x 4096 samples);
decoders.numpy on .npy files of 480x640x3 float32 arrays. Each operator runs alone in a
pipeline fed by external_source; the figure is the median milliseconds per batch over
--repeats runs after warm-up, and the ratio DALI / stoker (> 1: stoker is faster). DALI
is optional: without it only stoker's times are printed.

    PYTHONPATH=. /work/dali-venv/bin/python benchmarks/ops_reductions_filters.py \\
        [--threads 1] [--batch 16] [--repeats 7] [op ...]
"""

from __future__ import annotations

import argparse
import io
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
from op_timing import dali_or_none, header, natural_images, row, time_pipeline

_K5 = (np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]) / 256).astype(np.float32)
_K3 = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
_M = [0.9, 0.1, 20.0, -0.05, 1.1, -10.0, 0.0002, 0.0001, 1.0]

# name -> (input kind, build(lib, x))
OPS: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "(source only)": ("rgb", lambda l, x: x),
    "reductions.mean HW": ("rgb", lambda l, x: l.fn.reductions.mean(x, axis_names="HW")),
    "reductions.sum all": ("rgb", lambda l, x: l.fn.reductions.sum(x)),
    "reductions.max C": ("rgb", lambda l, x: l.fn.reductions.max(x, axes=[2])),
    "reductions.rms HW": ("rgb", lambda l, x: l.fn.reductions.rms(x, axis_names="HW")),
    "reductions.std_dev HW": ("rgb", lambda l, x: l.fn.reductions.std_dev(
        x, l.fn.reductions.mean(x, axis_names="HW"), axis_names="HW")),
    "zeros_like": ("rgb", lambda l, x: l.fn.zeros_like(x)),
    "full_like": ("rgb", lambda l, x: l.fn.full_like(x, np.float32(7.0))),
    "permute_batch": ("rgb", lambda l, x: l.fn.permute_batch(
        x, indices=l.fn.batch_permutation())),
    "filter 3x3": ("rgb", lambda l, x: l.fn.filter(x, _K3)),
    "filter 5x5 float": ("rgb", lambda l, x: l.fn.filter(x, _K5, dtype=l.types.FLOAT)),
    "laplacian": ("rgb", lambda l, x: l.fn.laplacian(x)),
    "laplacian 5 float": ("rgb", lambda l, x: l.fn.laplacian(x, window_size=5,
                                                              dtype=l.types.FLOAT)),
    "water": ("rgb", lambda l, x: l.fn.water(x)),
    "water linear": ("rgb", lambda l, x: l.fn.water(x, interp_type=l.types.INTERP_LINEAR)),
    "sphere": ("rgb", lambda l, x: l.fn.sphere(x)),
    "warp_perspective": ("rgb", lambda l, x: l.fn.experimental.warp_perspective(x, matrix=_M)),
    "clahe": ("rgb", lambda l, x: l.fn.clahe(x, tiles_x=8, tiles_y=8, clip_limit=2.0)),
    "tensor_resize": ("rgb", lambda l, x: l.fn.tensor_resize(x, sizes=[240, 320], axes=[0, 1])),
    "debayer": ("raw", lambda l, x: l.fn.debayer(x, blue_position=[0, 0])),
    "power_spectrum": ("signal", lambda l, x: l.fn.power_spectrum(x, nfft=512)),
    "decoders.numpy": ("npy", lambda l, x: l.fn.decoders.numpy(x)),
}


def inputs(kind: str, batch: int) -> tuple[list[np.ndarray], str]:
    rgb = natural_images(batch, (640, 480))
    if kind == "rgb":
        return rgb, "HWC"
    if kind == "raw":
        return [np.ascontiguousarray(x[..., 1]) for x in rgb], "HW"
    if kind == "signal":
        rng = np.random.default_rng(0)
        return [rng.normal(size=(16, 4096)).astype(np.float32) for _ in range(batch)], ""
    files = []
    for x in rgb:
        buf = io.BytesIO()
        np.save(buf, x.astype(np.float32))
        files.append(np.frombuffer(buf.getvalue(), np.uint8).copy())
    return files, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", help="operators to time (default: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()
    import warnings

    import stoker

    warnings.simplefilter("ignore")
    dali = dali_or_none()
    cache: dict[str, tuple[list[np.ndarray], str]] = {}
    print(f"median ms per batch of {opts.batch}, {opts.threads} thread(s)")
    print(header(24))
    ratios = []
    for name in opts.ops or list(OPS):
        kind, build = OPS[name]
        if kind not in cache:
            cache[kind] = inputs(kind, opts.batch)
        batch, layout = cache[kind]
        timing = {"layout": layout, "threads": opts.threads, "repeats": opts.repeats}
        ours = time_pipeline(stoker, build, batch, **timing)
        theirs = time_pipeline(dali, build, batch, **timing) if dali else None
        if theirs and name != "(source only)":
            ratios.append(theirs / ours)
        print(row(name, ours, theirs, 24), flush=True)
    if ratios:
        print(f"median ratio DALI/stoker over {len(ratios)} operators: "
              f"{statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
