"""GPU color operators and fn.normalize (on torch CPU tensors) against the CPU operators:
color operators exact; normalize within 1 for integer outputs and 1e-6 (relative) for
float ones (README, "GPU operators: tolerance against the CPU operators")."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_ops_helpers import both

from stoker import fn, types

pytest.importorskip("torch")

_RNG = np.random.default_rng(21)


def _u8(*shape: int) -> np.ndarray:
    return _RNG.integers(0, 256, shape, dtype=np.uint8)


U8 = [_u8(7, 9, 3) for _ in range(4)]
RAGGED = [_u8(7 + i, 9 - i, 3) for i in range(4)]
TYPED = {"uint8": RAGGED, "int16": [(x.astype(np.int16) - 128) * 100 for x in RAGGED],
         "int32": [x.astype(np.int32) * 1000 for x in RAGGED],
         "float32": [x.astype(np.float32) / 255 for x in RAGGED],
         "float16": [(x.astype(np.float32) / 255).astype(np.float16) for x in RAGGED]}
SEQ = [np.stack([_u8(5, 6, 3) for _ in range(3)]) for _ in range(2)]


def _uniform(lo: float, hi: float, seed: int):
    return fn.random.uniform(range=[lo, hi], seed=seed)


# -- brightness, contrast ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["uint8", "int16", "int32", "float32"])
@pytest.mark.parametrize("dtype", [None, types.UINT8, types.INT16, types.FLOAT])
@pytest.mark.parametrize("dense", [True, False])
def test_brightness_contrast_is_exact(kind, dtype, dense):
    data = TYPED[kind] if not dense else [TYPED[kind][0]] * 3
    extra = {} if dtype is None else {"dtype": dtype}
    b = both(lambda x: fn.brightness_contrast(
        x, brightness=_uniform(0.5, 1.5, 1), brightness_shift=_uniform(-0.2, 0.2, 2),
        contrast=_uniform(0.3, 1.7, 3), **extra), data, layouts=["HWC"], dense=dense)
    b.assert_exact()


def test_brightness_and_contrast_alone_and_center():
    both(lambda x: fn.brightness(x, brightness=1.7), RAGGED, layouts=["HWC"]).assert_exact()
    both(lambda x: fn.contrast(x, contrast=_uniform(0.0, 2.0, 4), contrast_center=40.0),
         RAGGED, layouts=["HWC"]).assert_exact()
    both(lambda x: fn.contrast(x, contrast=1.4), SEQ, layouts=["FHWC"]).assert_exact()


# -- hue, saturation, hsv, color_twist --------------------------------------------------------


@pytest.mark.parametrize("kind", list(TYPED))
@pytest.mark.parametrize("dense", [True, False])
def test_color_twist_is_exact(kind, dense):
    data = TYPED[kind] if not dense else [TYPED[kind][1]] * 3
    b = both(lambda x: fn.color_twist(x, hue=_uniform(-60, 60, 1),
                                      saturation=_uniform(0.2, 1.8, 2),
                                      brightness=_uniform(0.6, 1.4, 3),
                                      contrast=_uniform(0.6, 1.4, 4)), data,
             layouts=["HWC"], dense=dense)
    b.assert_exact()


@pytest.mark.parametrize("dtype", [types.UINT8, types.INT16, types.FLOAT, types.FLOAT16])
def test_hue_saturation_hsv(dtype):
    both(lambda x: fn.hue(x, hue=_uniform(-90, 90, 5), dtype=dtype), RAGGED,
         layouts=["HWC"]).assert_exact()
    both(lambda x: fn.saturation(x, saturation=0.3, dtype=dtype), U8,
         layouts=["HWC"]).assert_exact()
    both(lambda x: fn.hsv(x, hue=20.0, saturation=_uniform(0.5, 1.5, 6), value=1.2,
                          dtype=dtype), RAGGED, layouts=["HWC"]).assert_exact()
    both(lambda x: fn.hsv(x, hue=20.0, dtype=dtype), SEQ, layouts=["FHWC"]).assert_exact()


# -- color_space_conversion -------------------------------------------------------------------

SPACES = [types.RGB, types.BGR, types.GRAY, types.YCbCr]


@pytest.mark.parametrize("src", SPACES, ids=lambda t: types.DALIImageType(t).name)
@pytest.mark.parametrize("dst", SPACES, ids=lambda t: types.DALIImageType(t).name)
@pytest.mark.parametrize("dense", [True, False])
def test_color_space_conversion_is_exact(src, dst, dense):
    if src == dst:
        pytest.skip("refused at the call, as in DALI")
    # Every level in every channel: 256 x 256 pixels cover each (level, channel) pair often.
    full = np.stack([_u8(64, 64, 3) for _ in range(2)])
    data = [x[..., :1].copy() for x in full] if src == types.GRAY else list(full)
    if not dense:
        data = [data[0], data[1][:40, :50]]
    b = both(lambda x: fn.color_space_conversion(x, image_type=src, output_type=dst), data,
             layouts=["HWC"], dense=dense)
    b.assert_exact()


# -- normalize --------------------------------------------------------------------------------


def _normalize_tol(b) -> None:
    if b.cpu[0][0].dtype.kind in "iu":
        assert b.assert_within(1) <= 1
    else:
        b.assert_within(1e-6, rtol=1e-6)


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("axes", [None, [0, 1], [2], [0]])
@pytest.mark.parametrize("kind", ["uint8", "int16", "float32"])
def test_normalize_computed_statistics(dense, axes, kind):
    data = TYPED[kind] if not dense else [x[:7, :6] for x in TYPED[kind]]
    extra = {} if axes is None else {"axes": axes}
    _normalize_tol(both(lambda x: fn.normalize(x, **extra), data, layouts=["HWC"],
                        dense=dense))


def test_normalize_batch_ddof_epsilon_and_integer_output():
    _normalize_tol(both(lambda x: fn.normalize(x, batch=True, axes=[0, 1], ddof=1,
                                               epsilon=0.5), RAGGED, layouts=["HWC"]))
    _normalize_tol(both(lambda x: fn.normalize(x, axis_names="HW", scale=64.0, shift=128.0,
                                               dtype=types.UINT8), RAGGED, layouts=["HWC"]))
    _normalize_tol(both(lambda x: fn.normalize(x, scale=3000.0, dtype=types.INT16), RAGGED,
                        layouts=["HWC"]))


def test_normalize_given_mean_and_stddev():
    _normalize_tol(both(lambda x: fn.normalize(x, mean=100.0, stddev=50.0), RAGGED,
                        layouts=["HWC"]))
    _normalize_tol(both(lambda x: fn.normalize(x, mean=_uniform(50, 150, 3), axes=[0, 1]),
                        RAGGED, layouts=["HWC"]))
    _normalize_tol(both(lambda x: fn.normalize(x, stddev=_uniform(20, 60, 4)), RAGGED,
                        layouts=["HWC"]))


def test_normalize_constant_sample_comes_out_as_shift():
    flat = [np.full((4, 5, 3), 7, np.uint8), np.full((3, 2, 3), 9, np.uint8)]
    b = both(lambda x: fn.normalize(x, shift=0.25), flat, layouts=["HWC"])
    b.assert_exact()
    assert (b.gpu[0][0] == 0.25).all()
