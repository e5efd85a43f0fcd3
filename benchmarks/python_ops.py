"""Speed of the Python escape hatches: python_function and conditionals, stoker vs DALI.

Each case runs in a pipeline fed by external_source with a batch of small uint8 samples
(32x32x3): a python_function per sample and per batch, a dl_tensor_python_function, and
`if`/`else` on a per-sample condition (enable_conditionals=True), each next to the same
operators without the `if` (every sample through them). The figure is the median
milliseconds per batch over repeated runs after warm-up, and the ratio DALI / stoker (> 1:
stoker is faster). DALI is optional: without it only stoker's times are printed.

    PYTHONPATH=. /work/dali-venv/bin/python benchmarks/python_ops.py [--batch 64] [case ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from op_timing import compare


def plus_one(a: np.ndarray) -> np.ndarray:
    return a + 1


def plus_one_batch(batch: list) -> list:
    return [a + 1 for a in batch]


def branches(lib: Any, x: Any) -> Any:
    if x[0, 0, 0] > 127:
        y = x // 2
    else:
        y = x * 2
    return y


def flip_half(lib: Any, x: Any) -> Any:
    if lib.fn.random.coin_flip(probability=0.5):
        y = lib.fn.flip(x, horizontal=1)
    else:
        y = x
    return y


CASES: dict[str, Callable[[Any, Any], Any]] = {
    "(source only)": lambda l, x: x,
    "python_function per sample": lambda l, x: l.fn.python_function(x, function=plus_one),
    "python_function batch": lambda l, x: l.fn.python_function(
        x, function=plus_one_batch, batch_processing=True),
    "dl_tensor_python_function": lambda l, x: l.fn.dl_tensor_python_function(
        x, function=lambda caps: caps),
    "if/else on pixels, arithmetic": branches,
    "(no if: both arithmetic)": lambda l, x: (x[0, 0, 0] > 127, x // 2, x * 2),
    "if coin_flip: flip": flip_half,
    "(no if: flip all)": lambda l, x: (l.fn.random.coin_flip(probability=0.5),
                                       l.fn.flip(x, horizontal=1)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="cases to time (default: all)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    batch = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(opts.batch)]
    print(f"median ms per batch of {opts.batch} 32x32x3 uint8 samples, 2 threads")
    compare(CASES, opts.cases, batch, width=30, label="case", digits=2, threads=2,
            repeats=opts.repeats, warmup=3, conditionals=True)


if __name__ == "__main__":
    main()
