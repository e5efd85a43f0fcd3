"""``fn.water`` and ``fn.sphere``: displacement effects on HWC images.

Each output pixel reads the input at a displaced point (``kernels/cpu/image/displace.py``
has the formulas, fitted to DALI 2.4's outputs): water ripples the image with two sine
waves, sphere bulges it outwards from the middle. interp_type is INTERP_NN (DALI's
default) or INTERP_LINEAR; points outside the image read 'fill_value'. 'mask' (per
sample) 0 leaves the sample as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker import types
from stoker.kernels.cpu.image import displace as D
from stoker.operators.image.image_args import check_input_type, column
from stoker.operators.machinery.layouts import image_layout
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_IN_TYPES = (np.uint8, np.float32)
_INTERP = (types.INTERP_NN, types.INTERP_LINEAR)


def hwc_image(x: np.ndarray, args: dict) -> None:
    layout = args["_in_layouts"][0] or ("HWC" if x.ndim == 3 else "")
    if layout != "HWC" or x.ndim != 3:
        raise ValueError(f"expects HWC images, got a {x.ndim}-D sample with layout "
                         f"{layout!r}")
    check_input_type(x, _IN_TYPES)


def _interp(args: dict) -> bool:
    interp = int(args["interp_type"])
    if interp not in (int(t) for t in _INTERP):
        raise ValueError(f"'interp_type' must be INTERP_NN or INTERP_LINEAR, got "
                         f"{types.DALIInterpType(interp).name}")
    return interp == int(types.INTERP_LINEAR)


def _effect(name: str, points: Any, keys: tuple[str, ...] = ()) -> Any:
    def kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
        x = np.asarray(ins[0])
        hwc_image(x, args)
        linear = _interp(args)
        if not int(column(args["mask"], 1, "mask")[0]):
            return x.copy()
        sx, sy = D.points((name, x.shape[0], x.shape[1], *(float(args[k]) for k in keys)),
                          lambda: points(x.shape[0], x.shape[1], args))
        fill = np.full(x.shape[2], float(args["fill_value"]), np.float32)
        return D.remap(x, sx, sy, linear, fill)
    return kernel


def _water_points(h: int, w: int, a: dict) -> tuple:
    return D.water_points(h, w, a["ampl_x"], a["ampl_y"], a["freq_x"], a["freq_y"],
                          a["phase_x"], a["phase_y"])


_COMMON = (Arg("interp_type", "interp_type", types.INTERP_NN, "INTERP_NN or "
               "INTERP_LINEAR."),
           Arg("fill_value", "float", 0.0, "Value of output pixels whose source point lies "
               "outside the image."),
           Arg("mask", "int", 1, "0 leaves the sample unchanged.", per_sample=True))
_RNG = np.random.default_rng(24)
_IMG = [_RNG.integers(0, 256, (12, 16, 3), dtype=np.uint8),
        _RNG.integers(0, 256, (9, 7, 3), dtype=np.uint8)]
_ERRORS = (
    Example(inputs=([x[..., 0].copy() for x in _IMG],), raises=RuntimeError,
            match="expects HWC images"),
    Example(args={"interp_type": types.INTERP_CUBIC}, inputs=(_IMG,), raises=RuntimeError,
            match="must be INTERP_NN or INTERP_LINEAR"),
    Example(inputs=([x.astype(np.int32) for x in _IMG],), raises=RuntimeError,
            match="int32 is not supported"),
)

register(OpSchema(
    name="water",
    doc="Ripples images as if seen through water: pixel (x, y) shows the input at (x + "
        "ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y)).",
    inputs=(Input("input", "uint8 or float32 HWC images."),),
    args=(Arg("ampl_x", "float", 10.0, "Amplitude of the wave along x, in pixels."),
          Arg("ampl_y", "float", 10.0, "Amplitude of the wave along y, in pixels."),
          # DALI documents 0.049087; its default is 2 pi / 128 exactly (the pixels it
          # displaces by cos(pi / 2) show the difference).
          Arg("freq_x", "float", 2 * np.pi / 128, "Frequency of the wave along x (radians "
              "per pixel)."),
          Arg("freq_y", "float", 2 * np.pi / 128, "Frequency of the wave along y."),
          Arg("phase_x", "float", 0.0, "Phase of the wave along x (radians)."),
          Arg("phase_y", "float", 0.0, "Phase of the wave along y (radians).")) + _COMMON,
    kernel=_effect("water", _water_points, ("ampl_x", "ampl_y", "freq_x", "freq_y",
                                            "phase_x", "phase_y")),
    layout=image_layout,
    examples=(
        Example(inputs=(_IMG,)),
        Example(args={"interp_type": types.INTERP_LINEAR, "ampl_x": 3.0, "fill_value": 9.0,
                      "phase_y": 1.0}, inputs=([x.astype(np.float32) for x in _IMG],)),
        Example(args={"mask": 0}, inputs=(_IMG,)),
    ) + _ERRORS,
))

register(OpSchema(
    name="sphere",
    doc="Bulges images outwards from their middle, as if mapped onto a sphere.",
    inputs=(Input("input", "uint8 or float32 HWC images."),),
    args=_COMMON,
    kernel=_effect("sphere", lambda h, w, a: D.sphere_points(h, w)), layout=image_layout,
    examples=(
        Example(inputs=(_IMG,)),
        Example(args={"interp_type": types.INTERP_LINEAR, "fill_value": 5.0},
                inputs=([x.astype(np.float32) for x in _IMG],)),
    ) + _ERRORS,
))
