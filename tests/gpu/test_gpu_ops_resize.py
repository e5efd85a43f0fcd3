"""GPU resize, resize_crop_mirror and random_resized_crop (on torch CPU tensors) against
the CPU operators. Tolerances are the published ones (README, "GPU operators: tolerance
against the CPU operators"): integer outputs within 1, float outputs within 1e-6 of the
value range; nearest neighbour exact; random windows identical."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_ops_helpers import both

from stoker import fn, types

pytest.importorskip("torch")

_RNG = np.random.default_rng(11)
FILTERS = [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC, types.INTERP_LANCZOS3,
           types.INTERP_TRIANGULAR, types.INTERP_GAUSSIAN]


def _image(h: int, w: int, c: int = 3) -> np.ndarray:
    """A smooth image with noise: values land on and between rounding boundaries."""
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.sin(yy / 7.0)[..., None] * 80 + np.cos(xx / 5.0)[..., None] * 60 + 128
    return np.clip(base + _RNG.normal(0, 20, (h, w, c)), 0, 255).astype(np.uint8)


U8 = [_image(48, 64) for _ in range(3)]
RAGGED = [_image(40 + 7 * i, 64 - 5 * i) for i in range(4)]
F32 = [x.astype(np.float32) / 255 for x in RAGGED]


def _tol(b, out_range: float) -> None:
    """uint8: within 1; float: within 1e-6 of the value range."""
    if b.cpu[0][0].dtype.kind in "iu":
        assert b.assert_within(1) <= 1
    else:
        b.assert_within(1e-6 * out_range)


@pytest.mark.parametrize("interp", FILTERS, ids=lambda t: types.DALIInterpType(t).name)
@pytest.mark.parametrize("size", [[17, 23], [90, 110]], ids=["shrink", "enlarge"])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_cpu_for_every_filter(interp, size, antialias):
    build = lambda x: fn.resize(x, size=size, interp_type=interp, antialias=antialias)  # noqa: E731
    b8 = both(build, RAGGED, layouts=["HWC"])
    bf = both(build, F32, layouts=["HWC"])
    if interp == types.INTERP_NN:
        b8.assert_exact()
        bf.assert_exact()
        return
    _tol(b8, 255)
    _tol(bf, 1.0)


def test_resize_dense_batch_is_one_group_and_matches_cpu():
    b = both(lambda x: fn.resize(x, resize_shorter=30.0), U8, layouts=["HWC"])
    _tol(b, 255)
    assert b.raw[0].shape == (3, 30, 40, 3)  # a dense tensor out of a dense batch


def test_resize_to_float_output():
    b = both(lambda x: fn.resize(x, size=[20, 21], dtype=types.FLOAT), RAGGED,
             layouts=["HWC"])
    assert b.gpu[0][0].dtype == np.float32
    _tol(b, 255)


def test_resize_float16_input():
    half = [x.astype(np.float16) for x in F32]
    b = both(lambda x: fn.resize(x, size=[20, 21]), half, layouts=["HWC"])
    b.assert_within(1e-3)  # float16's own step near 1


def test_resize_roi_and_flip_by_negative_size():
    b = both(lambda x: fn.resize(x, resize_x=-25.0, resize_y=19.0, roi_start=[30.0, 5.0],
                                 roi_end=[2.0, 40.0]), RAGGED, layouts=["HWC"])
    _tol(b, 255)


def test_resize_relative_roi_not_smaller_and_max_size():
    b = both(lambda x: fn.resize(x, size=[30, 30], mode="not_smaller", max_size=[40, 40],
                                 roi_start=[0.1, 0.2], roi_end=[0.9, 0.7], roi_relative=True),
             RAGGED, layouts=["HWC"])
    _tol(b, 255)


def test_resize_per_sample_sizes_and_filters():
    def build(x):
        size = fn.random.uniform(range=[10.0, 50.0], shape=[2], seed=4)
        interp = fn.cast(fn.random.uniform(range=[0.0, 3.99], seed=5), dtype=types.INT32)
        return fn.resize(x, size=size, interp_type=interp)

    _tol(both(build, U8, layouts=["HWC"]), 255)


@pytest.mark.parametrize("layout", ["CHW", "FHWC", "FCHW", "CFHW", "HW"])
def test_resize_layouts(layout):
    seq = [np.stack([_image(20, 24), _image(20, 24)]) for _ in range(2)]
    data = {"CHW": [x.transpose(2, 0, 1) for x in RAGGED], "FHWC": seq,
            "FCHW": [s.transpose(0, 3, 1, 2) for s in seq],
            "CFHW": [s.transpose(3, 0, 1, 2) for s in seq],
            "HW": [x[..., 0] for x in RAGGED]}[layout]
    _tol(both(lambda x: fn.resize(x, size=[13, 17]), data, layouts=[layout]), 255)


def test_resize_save_attrs():
    b = both(lambda x: fn.resize(x, size=[13, 17], save_attrs=True), RAGGED, layouts=["HWC"])
    _tol(b, 255)
    b.assert_exact(1)


def test_resize_uint16_and_int16():
    u16 = [x.astype(np.uint16) * 257 for x in RAGGED]
    _tol(both(lambda x: fn.resize(x, size=[19, 25]), u16, layouts=["HWC"]), 65535)
    i16 = [x.astype(np.int16) - 128 for x in RAGGED]
    _tol(both(lambda x: fn.resize(x, size=[19, 25], interp_type=types.INTERP_CUBIC), i16,
              layouts=["HWC"]), 255)


@pytest.mark.parametrize("dense", [True, False])
def test_random_resized_crop_draws_the_cpu_windows(dense):
    data = U8 if dense else RAGGED
    b = both(lambda x: fn.random_resized_crop(x, size=[24, 24], seed=77), data,
             layouts=["HWC"], dense=dense)
    _tol(b, 255)
    # Nearest neighbour leaves no rounding: identical pixels mean identical windows.
    nn = both(lambda x: fn.random_resized_crop(x, size=[24, 24], seed=77,
                                               interp_type=types.INTERP_NN), data,
              layouts=["HWC"], dense=dense)
    nn.assert_exact()


def test_random_resized_crop_float_output_and_area():
    b = both(lambda x: fn.random_resized_crop(x, size=[16, 20], random_area=[0.3, 0.6],
                                              dtype=types.FLOAT, seed=9), RAGGED,
             layouts=["HWC"])
    _tol(b, 255)


def test_resize_crop_mirror():
    b = both(lambda x: fn.resize_crop_mirror(x, resize_shorter=30.0, crop=[20.0, 22.0],
                                             mirror=fn.random.coin_flip(seed=3)),
             RAGGED, layouts=["HWC"])
    _tol(b, 255)
