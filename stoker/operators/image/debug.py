"""``fn.dump_image``: writes each image to a PPM file (for debugging) and passes it on.

Sample j of a batch goes to ``<j>-<suffix>-0.ppm`` in the working directory, overwritten
by the next batch, as DALI 2.4 names it (measured): ASCII PPM (P3) for 3 channels, PGM
(P2) for 1, maxval 255, one image row per line. The output is the input, unchanged.

The directory is the working directory when the pipeline is built (prefetching runs
batches later, perhaps after the caller changed directory), and each file is written
whole under a temporary name and then renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from stoker.operators.machinery.base import SampleOp
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema


def ppm_text(img: np.ndarray) -> str:
    """The ASCII PPM/PGM file of an HWC uint8 image with 1 or 3 channels."""
    h, w, c = img.shape
    magic = {1: "P2", 3: "P3"}[c]
    rows = ["".join(f"{v} " for v in row.ravel().tolist()) for row in img]
    return f"{magic}\n{w} {h}\n255\n" + "".join(r + "\n" for r in rows)


def dump_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = np.asarray(ins[0])
    layout = args.get("input_layout") or "HWC"
    if x.dtype != np.uint8:
        raise TypeError(f"expects uint8 images, got {x.dtype.name}")
    if layout not in ("HWC", "CHW") or x.ndim != 3:
        raise ValueError(f"expects 3-D HWC or CHW images ('input_layout'), got a {x.ndim}-D "
                         f"sample with input_layout {layout!r}")
    img = x if layout == "HWC" else np.moveaxis(x, 0, -1)
    if img.shape[2] not in (1, 3):
        raise ValueError(f"expects 1 or 3 channels, got {img.shape[2]}")
    path = os.path.join(args.get("_dir", ""), f"{ctx.idx_in_batch}-{args['suffix']}-0.ppm")
    temp = f"{path}.{os.getpid()}.{id(ctx)}.tmp"
    with open(temp, "w", encoding="ascii") as f:
        f.write(ppm_text(img))
    os.replace(temp, path)
    return x.copy()


def _instance(op: Any, pipeline: Any) -> SampleOp:
    inst = SampleOp(op, pipeline)
    inst.args = {**inst.args, "_dir": os.getcwd()}
    return inst


register(OpSchema(
    name="dump_image",
    doc="Writes each image to '<sample index>-<suffix>-0.ppm' in the working directory "
        "(ASCII PPM, for debugging) and outputs it unchanged.",
    inputs=(Input("input", "uint8 images with 1 or 3 channels."),),
    args=(Arg("suffix", "str", "", "Part of the file names."),
          Arg("input_layout", "layout", "HWC", "Layout of the images: HWC or CHW.")),
    kernel=dump_sample, instance=_instance,
    examples=(
        Example(args={"suffix": "stoker-contract"},
                inputs=([np.arange(18, dtype=np.uint8).reshape(2, 3, 3),
                         np.full((1, 2, 1), 7, np.uint8)],)),
        Example(args={"suffix": "stoker-contract"},
                inputs=([np.zeros((2, 2, 2), np.uint8)],), raises=RuntimeError,
                match="expects 1 or 3 channels"),
    ),
))
