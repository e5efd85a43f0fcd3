"""Lookup operators: equalize (histogram equalization) and lookup_table (key -> value map).

equalize works on uint8 images, each channel of each frame on its own (DALI 2.4 matches
OpenCV's equalizeHist exactly; so does this). lookup_table maps integer data through
'keys' -> 'values' (keys in 0..65535), anything else to 'default_value', then converts
to 'dtype' (FLOAT by default) rounding half away from zero and saturating.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import lut as K
from stoker.operators.image.geometry import sample_kernel
from stoker.operators.image.image_args import check_input_type, layout_of
from stoker.operators.machinery.layouts import NdimLayout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_EQ_LAYOUTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def equalize_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    check_input_type(x, (np.uint8,))
    layout = layout_of(args, x.ndim - 1, _EQ_LAYOUTS)
    if layout not in ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW"):
        raise ValueError(f"expects HW, HWC, CHW or a sequence of them (F...), got layout "
                         f"{layout!r}")
    if layout.endswith("C"):  # channels interleaved: units are frames
        units = x.reshape(-1, x.shape[-3] * x.shape[-2], x.shape[-1])
    else:  # planes: every channel plane of every frame is a unit
        units = x.reshape(-1, x.shape[-2] * x.shape[-1], 1)
    return K.equalize(units).reshape(x.shape)


_RNG = np.random.default_rng(9)
_IMG = [_RNG.integers(0, 256, (8, 10, 3), dtype=np.uint8),
        (_RNG.random((6, 9, 3)) * 60 + 40).astype(np.uint8)]

register(OpSchema(
    name="equalize",
    doc="Histogram equalization of uint8 images, per channel (and per frame).",
    inputs=(Input("input", "uint8 images: HW, HWC, CHW, or FHW/FHWC/FCHW sequences."),),
    kernel=sample_kernel(equalize_batch), batch_kernel=equalize_batch,
    # An input without a layout: DALI names the output's axes as the kernel reads them.
    layout=lambda layouts, a: layouts[0] or NdimLayout(_EQ_LAYOUTS),
    examples=(
        Example(inputs=(_IMG,)),
        Example(inputs=([x[..., 0].copy() for x in _IMG],)),
        Example(inputs=([np.stack([_IMG[0], _IMG[0] // 2])],)),
        Example(inputs=([x.astype(np.float32) for x in _IMG],), raises=RuntimeError,
                match="input type float32 is not supported"),
    ),
))


# -- lookup_table -----------------------------------------------------------------------------

_INT_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64,
              np.int64)


def lookup_batch(ins: list, args: dict, ctx: Any) -> np.ndarray:
    x = ins[0]
    check_input_type(x, _INT_TYPES)
    return K.lookup(x, args["keys"], args["values"], args["default_value"],
                    types.to_numpy(args["dtype"]))


def _lookup_check(args: dict) -> None:
    keys, values = args["keys"], args["values"]
    if len(keys) != len(values):
        raise ArgumentError(f"fn.lookup_table: 'keys' ({len(keys)}) and 'values' "
                            f"({len(values)}) must have the same length")
    if keys and (min(keys) < 0 or max(keys) > 65535):
        raise ArgumentError(f"fn.lookup_table: argument 'keys' must be in [0, 65535], got "
                            f"{keys!r}")


register(OpSchema(
    name="lookup_table",
    renamed={"output_dtype": "dtype"},
    doc="Maps integer data through a table: keys[i] -> values[i], other values -> "
        "default_value.",
    inputs=(Input("input", "Integer data of any shape and layout."),),
    args=(Arg("keys", "ints", [], "Input values to map (0..65535)."),
          Arg("values", "floats", [], "What each key maps to."),
          Arg("default_value", "float", 0.0, "Output for values that are not keys."),
          Arg("dtype", "dtype", types.FLOAT, "Output type.")),
    kernel=lookup_batch, batch_kernel=lookup_batch, check=_lookup_check,
    dtype=lambda d, a: types.to_numpy(a["dtype"]),
    examples=(
        Example(args={"keys": [0, 1, 7], "values": [10.0, 20.0, 0.5]},
                inputs=([np.arange(12, dtype=np.uint8).reshape(3, 4),
                         np.arange(5, dtype=np.uint8).reshape(5, 1)],)),
        Example(args={"keys": [3, 300], "values": [1.5, -2.5], "default_value": -1.0,
                      "dtype": types.INT16},
                inputs=([np.array([-1, 3, 300, 70000], np.int32)] * 2,)),
        Example(args={"keys": [0, 1], "values": [1.0]}, inputs=([np.zeros(3, np.uint8)],),
                raises=ArgumentError, match="must have the same length"),
        Example(args={"keys": [70000], "values": [1.0]}, inputs=([np.zeros(3, np.uint8)],),
                raises=ArgumentError, match="'keys' must be in [0, 65535]"),
        Example(args={"keys": [1], "values": [1.0]}, inputs=([np.zeros(3, np.float32)],),
                raises=RuntimeError, match="input type float32 is not supported"),
    ),
))
