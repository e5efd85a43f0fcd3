"""Dynamic-mode calls replayed on DALI 2.4's ``nvidia.dali.experimental.dynamic``
(tests/data/record/dynamic_mode.py) and on ``stoker.experimental.dynamic``
(tests/experimental/test_dynamic.py): the same code drives either module.

Each case (called with the dynamic module and the library's ``types``) returns a Tensor,
a Batch or a tuple of them; ``outcome`` turns that into (array per sample, dtype name,
layout) for the comparison.
"""

from __future__ import annotations

import numpy as np

RNG = np.random.default_rng(7)
IMAGE = RNG.integers(0, 256, (6, 9, 3), dtype=np.uint8)
SMALL = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
VALUES = RNG.normal(size=(3, 4)).astype(np.float32)


def _img(nd, a=IMAGE):
    return nd.as_tensor(a, layout="HWC")


CASES = {
    "flip_h": lambda nd, t: nd.flip(_img(nd), horizontal=1),
    "flip_v_batch": lambda nd, t: nd.flip(nd.as_batch([IMAGE, SMALL], layout="HWC"),
                                       horizontal=0, vertical=1),
    "flip_per_sample_arg": lambda nd, t: nd.flip(nd.as_batch([IMAGE, SMALL], layout="HWC"),
                                              horizontal=nd.as_batch([np.int32(1),
                                                                      np.int32(0)])),
    "cmn": lambda nd, t: nd.crop_mirror_normalize(_img(nd), crop=(4, 5), mirror=1,
                                               mean=[100.0, 110.0, 120.0],
                                               std=[50.0, 60.0, 70.0], output_layout="CHW"),
    "cmn_u8_pad": lambda nd, t: nd.crop_mirror_normalize(_img(nd), crop=(4, 5),
                                                      crop_pos_x=0.0, crop_pos_y=1.0,
                                                      dtype=nd.uint8, pad_output=True,
                                                      mean=[0.0], std=[1.0]),
    "resize_linear": lambda nd, t: nd.resize(_img(nd), resize_x=5, resize_y=4),
    "resize_nn": lambda nd, t: nd.resize(_img(nd), size=(12, 7), interp_type=t.INTERP_NN),
    "gray": lambda nd, t: nd.color_space_conversion(_img(nd), image_type=t.RGB,
                                                 output_type=t.GRAY),
    "cast_float": lambda nd, t: nd.cast(_img(nd), dtype=nd.float32),
    "transpose": lambda nd, t: nd.transpose(_img(nd), perm=[2, 0, 1]),
    "arith_u8": lambda nd, t: _img(nd) * 2 + 1,
    "arith_float": lambda nd, t: nd.as_tensor(VALUES) / 4.0 - 1.5,
    "slice": lambda nd, t: nd.slice(_img(nd), rel_start=(0.25, 0.5), rel_shape=(0.5, 0.5),
                                 axis_names="HW"),
    "normalize": lambda nd, t: nd.normalize(nd.as_tensor(VALUES), axes=[1]),
}


def outcome(result) -> dict:
    """``{"samples": [array, ...], "dtype": str, "layout": str, "batch": bool}``."""
    if isinstance(result, tuple):
        return {"outputs": [outcome(r) for r in result]}
    tensors = getattr(result, "tensors", None)
    batch = tensors is not None
    items = list(tensors) if batch else [result]
    samples = [np.array(np.asarray(t.cpu() if hasattr(t, "cpu") else t)) for t in items]
    return {"samples": samples, "dtype": str(samples[0].dtype),
            "layout": str(getattr(result, "layout", "") or ""), "batch": batch}
