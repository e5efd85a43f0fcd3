"""``fn.debayer`` (and DALI's old name ``fn.experimental.debayer``): Bayer mosaics to RGB.

A sample is a single-channel raw image (HW or HWC with C = 1, or FHW/FHWC sequences) of
uint8 or uint16 with even height and width; 'blue_position' is the (y, x) of the blue
pixel in the top-left 2x2 tile ((0, 0): BGGR, (1, 1): RGGB, (0, 1): GBRG, (1, 0): GRBG).
The output is HWC (FHWC) RGB, or one gray channel with algorithm "gray_ocv". DALI 2.4's
CPU operator is OpenCV's demosaicing (measured: identical outputs), so this is too:
"default" and "bilinear_ocv" are bilinear, "edgeaware_ocv" edge-aware, "vng_ocv" variable
number of gradients; "bilinear_npp" is GPU-only in DALI and refused here as there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema

# (y, x) of blue -> OpenCV's pattern name (named by the second row's first two pixels).
_PATTERN = {(0, 0): "BG", (1, 1): "RG", (0, 1): "GB", (1, 0): "GR"}
_ALGORITHMS = {"default": "2RGB", "bilinear_ocv": "2RGB", "edgeaware_ocv": "2RGB_EA",
               "vng_ocv": "2RGB_VNG", "gray_ocv": "2GRAY"}


def _code(position: tuple[int, int], algorithm: str) -> int:
    import cv2  # (OpenCV loads with the first call, not at import)

    return getattr(cv2, f"COLOR_Bayer{_PATTERN[position]}{_ALGORITHMS[algorithm]}")


def debayer_sample(ins: list, args: dict, ctx: Any) -> np.ndarray:
    import cv2  # (OpenCV loads with the first call, not at import)
    x = np.asarray(ins[0])
    if x.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"expects uint8 or uint16 raw images, got {x.dtype.name}")
    layout = args["_in_layouts"][0] or {2: "HW", 3: "HWC"}.get(x.ndim, "")
    if layout not in ("HW", "HWC", "FHW", "FHWC") or len(layout) != x.ndim:
        raise ValueError(f"expects HW, HWC, FHW or FHWC raw images, got layout {layout!r} "
                         f"for a {x.ndim}-D sample")
    if layout.endswith("C"):
        if x.shape[-1] != 1:
            raise ValueError(f"expects one channel, got {x.shape[-1]}")
        x = x[..., 0]
    frames = x if layout.startswith("F") else x[None]
    h, w = frames.shape[1:3]
    if h % 2 or w % 2:
        raise ValueError(f"the height and width of a raw image must be even, got {h}x{w}")
    pos = np.ravel(np.asarray(args["blue_position"], np.int64)).tolist()
    if len(pos) == 1:  # one value stands for both, as DALI reads it
        pos = pos * 2
    if len(pos) != 2 or any(v not in (0, 1) for v in pos):
        raise ValueError(f"'blue_position' must be (y, x) with values 0 or 1, got {pos}")
    algorithm = args.get("algorithm") or "default"
    if algorithm == "vng_ocv" and frames.dtype != np.uint8:
        raise ValueError("algorithm 'vng_ocv' takes uint8 images only (OpenCV's)")
    code = _code((pos[0], pos[1]), algorithm)
    if not layout.startswith("F"):  # one image: no stacking copy
        out = cv2.cvtColor(np.ascontiguousarray(frames[0]), code)
        return out[..., None] if out.ndim == 2 else out
    out = np.stack([cv2.cvtColor(np.ascontiguousarray(f), code) for f in frames])
    return out[..., None] if out.ndim == 3 else out  # gray: one channel


def _check(args: dict) -> None:
    algorithm = args.get("algorithm")
    if algorithm is not None and algorithm not in _ALGORITHMS:
        extra = " (a GPU algorithm in DALI)" if algorithm == "bilinear_npp" else ""
        raise ArgumentError(f"fn.debayer: argument 'algorithm' must be one of "
                            f"{', '.join(repr(a) for a in _ALGORITHMS)}, got {algorithm!r}"
                            f"{extra}")


_RNG = np.random.default_rng(5)
_RAW = [_RNG.integers(0, 256, (8, 10), dtype=np.uint8),
        _RNG.integers(0, 256, (6, 4), dtype=np.uint8)]

register(OpSchema(
    name="debayer",
    doc="Demosaics Bayer raw images into RGB (OpenCV's algorithms, as DALI's CPU operator).",
    inputs=(Input("input", "uint8 or uint16 single-channel raw images: HW, HWC (C = 1), "
                           "FHW or FHWC, with even height and width."),),
    args=(Arg("blue_position", "ints", REQUIRED, "(y, x) of the blue pixel in the "
              "top-left 2x2 tile.", per_sample=True),
          Arg("algorithm", "str", None, "default, bilinear_ocv, edgeaware_ocv, vng_ocv or "
              "gray_ocv.")),
    kernel=debayer_sample, check=_check,
    layout=lambda layouts, a: "FHWC" if (layouts[0] or "").startswith("F") else "HWC",
    examples=(
        Example(args={"blue_position": [0, 0]}, inputs=(_RAW,)),
        Example(args={"blue_position": [1, 0], "algorithm": "edgeaware_ocv"},
                inputs=([x.astype(np.uint16) * 200 for x in _RAW],)),
        Example(args={"blue_position": [0, 1], "algorithm": "gray_ocv"}, inputs=(_RAW,)),
        Example(args={"blue_position": [0, 0], "algorithm": "bilinear_npp"}, inputs=(_RAW,),
                raises=ArgumentError, match="a GPU algorithm in DALI"),
        Example(args={"blue_position": [2, 0]}, inputs=(_RAW,), raises=RuntimeError,
                match="'blue_position' must be (y, x)"),
        Example(args={"blue_position": [0, 0]}, inputs=([x[:5] for x in _RAW],),
                raises=RuntimeError, match="must be even"),
    ),
))
