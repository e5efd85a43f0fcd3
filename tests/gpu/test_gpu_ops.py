"""GPU crop, flip, crop_mirror_normalize, cast, transpose, pad and arithmetic (on torch
CPU tensors) against the CPU operators: all exact (README, "GPU operators: tolerance
against the CPU operators"), on dense and ragged batches, with per-sample arguments."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_ops_helpers import both

from stoker import fn, math, types

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(5)


def _u8(*shape: int) -> np.ndarray:
    return _RNG.integers(0, 256, shape, dtype=np.uint8)


U8 = [_u8(9, 12, 3) for _ in range(4)]
RAGGED = [_u8(9 + i, 12 - 2 * i, 3) for i in range(4)]
F32 = [_RNG.normal(0, 50, (9 + i, 12 - 2 * i, 3)).astype(np.float32) for i in range(4)]
SEQ = [np.stack([_u8(8, 10, 3) for _ in range(2)]) for _ in range(3)]
LAYOUT_DATA = {"HWC": RAGGED, "CHW": [x.transpose(2, 0, 1) for x in RAGGED],
               "HW": [x[..., 0] for x in RAGGED], "FHWC": SEQ,
               "FCHW": [s.transpose(0, 3, 1, 2) for s in SEQ]}


# -- crop -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("layout", list(LAYOUT_DATA))
def test_crop_layouts(layout, dense):
    b = both(lambda x: fn.crop(x, crop=[5, 6], crop_pos_x=0.3, crop_pos_y=0.8),
             LAYOUT_DATA[layout], layouts=[layout], dense=dense)
    b.assert_exact()


def test_crop_per_sample_positions_dense_batch_is_one_tensor():
    b = both(lambda x: fn.crop(x, crop=[4, 5],
                               crop_pos_x=fn.random.uniform(range=[0.0, 1.0], seed=1),
                               crop_pos_y=fn.random.uniform(range=[0.0, 1.0], seed=2)),
             U8, layouts=["HWC"])
    b.assert_exact()
    assert isinstance(b.raw[0], torch.Tensor) and b.raw[0].shape == (4, 4, 5, 3)


def test_crop_per_sample_window_sizes_make_a_ragged_batch():
    sizes = fn.random.uniform(range=[3.0, 8.0], shape=[2], seed=6)
    b = both(lambda x: fn.crop(x, crop=sizes), U8, layouts=["HWC"])
    b.assert_exact()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int16, np.uint16])
def test_crop_pad_fill_and_types(dtype):
    data = [x.astype(dtype) for x in RAGGED]
    b = both(lambda x: fn.crop(x, crop=[14, 7], crop_pos_x=0.9, out_of_bounds_policy="pad",
                               fill_values=[300.0, -2.5, 7.0]), data, layouts=["HWC"])
    b.assert_exact()


def test_crop_trim_to_shape_and_truncate():
    b = both(lambda x: fn.crop(x, crop_h=20.0, crop_w=5.0, out_of_bounds_policy="trim_to_shape",
                               rounding="truncate", crop_pos_x=0.55), U8, layouts=["HWC"])
    b.assert_exact()


def test_crop_outside_refused_as_on_cpu():
    from stoker.executor.context import BatchContext, GpuContext
    from stoker.operators.machinery.registry import REGISTRY

    with pytest.raises(Exception, match="can't be placed out of bounds"):
        both(lambda x: fn.crop(x, crop=[20, 2]), U8, layouts=["HWC"])  # the CPU operator
    args = {"crop": [20.0, 2.0], "crop_pos_x": 0.5, "crop_pos_y": 0.5, "crop_h": 0.0,
            "crop_w": 0.0, "out_of_bounds_policy": "error", "fill_values": [0.0],
            "rounding": "round", "_in_layouts": ("HWC",)}
    ctx = GpuContext(BatchContext(0, 0, 1, None), 0, 1, None, torch.device("cpu"))
    with pytest.raises(ValueError, match="can't be placed out of bounds"):
        REGISTRY["crop"].gpu_kernel([torch.zeros(1, 9, 12, 3, dtype=torch.uint8)], args, ctx)


# -- flip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("layout", list(LAYOUT_DATA))
def test_flip_per_sample_flags(layout, dense):
    data = LAYOUT_DATA[layout] if not dense else \
        {"HWC": U8, "CHW": [x.transpose(2, 0, 1) for x in U8], "HW": [x[..., 0] for x in U8],
         "FHWC": SEQ, "FCHW": [s.transpose(0, 3, 1, 2) for s in SEQ]}[layout]
    b = both(lambda x: fn.flip(x, horizontal=fn.random.coin_flip(seed=1),
                               vertical=fn.random.coin_flip(seed=2)), data, layouts=[layout],
             dense=dense)
    b.assert_exact()


@pytest.mark.parametrize("dtype", [np.float32, np.uint16, np.int64])
def test_flip_constant_flags_other_types(dtype):
    b = both(lambda x: fn.flip(x, horizontal=1, vertical=1), [x.astype(dtype) for x in U8],
             layouts=["HWC"])
    b.assert_exact()


# -- crop_mirror_normalize ------------------------------------------------------------------

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("dtype", [types.FLOAT, types.FLOAT16, types.UINT8, types.INT8,
                                   types.INT16])
@pytest.mark.parametrize("output_layout", ["CHW", "HWC"])
def test_cmn_uint8_constant_mean_is_bit_identical(dense, dtype, output_layout):
    data = U8 if dense else RAGGED
    b = both(lambda x: fn.crop_mirror_normalize(
        x, crop=[6, 5], mean=MEAN, std=STD, dtype=dtype, output_layout=output_layout,
        mirror=fn.random.coin_flip(seed=4), scale=2.0 if dtype != types.FLOAT else 1.0,
        shift=10.0 if dtype in (types.UINT8,) else 0.0), data, layouts=["HWC"], dense=dense)
    b.assert_exact()


@pytest.mark.parametrize("dense", [True, False])
def test_cmn_per_sample_mean_std_float_path(dense):
    def build(x):
        mean = fn.random.uniform(range=[50.0, 150.0], shape=[3], seed=7)
        std = fn.random.uniform(range=[20.0, 80.0], shape=[3], seed=8)
        return fn.crop_mirror_normalize(x, crop=[5, 5], mean=mean, std=std,
                                        mirror=fn.random.coin_flip(seed=9),
                                        crop_pos_x=fn.random.uniform(range=[0.0, 1.0],
                                                                     seed=10))

    b = both(build, U8 if dense else RAGGED, layouts=["HWC"], dense=dense)
    b.assert_exact()


@pytest.mark.parametrize("dtype", [types.FLOAT, types.UINT8, types.INT16])
def test_cmn_float_input(dtype):
    b = both(lambda x: fn.crop_mirror_normalize(x, crop=[6, 5], mean=[1.5], std=[3.0],
                                                scale=4.0, dtype=dtype, mirror=1), F32,
             layouts=["HWC"])
    b.assert_exact()


def test_cmn_pad_window_fill_and_pad_output():
    # (pad_output with policy "pad" fills the added channel too: one fill value per output
    # channel, as DALI requires)
    for fill, pad_output in (([1.0, 2.0, 3.0], False), ([1.0, 2.0, 3.0, 4.0], True)):
        b = both(lambda x, f_=fill, p_=pad_output: fn.crop_mirror_normalize(
            x, crop=[13, 14], out_of_bounds_policy="pad", fill_values=f_,
            mean=MEAN, std=STD, pad_output=p_, mirror=fn.random.coin_flip(seed=3),
            crop_pos_y=0.1), RAGGED, layouts=["HWC"])
        b.assert_exact()
    f = both(lambda x: fn.crop_mirror_normalize(
        x, crop=[13, 14], out_of_bounds_policy="pad", fill_values=[-1.0], mean=[3.0],
        output_layout="HWC"), F32, layouts=["HWC"])
    f.assert_exact()


@pytest.mark.parametrize("layout", ["CHW", "FHWC", "FCHW"])  # DALI refuses HW
def test_cmn_layouts(layout):
    b = both(lambda x: fn.crop_mirror_normalize(x, crop=[4, 5], mean=[100.0], std=[50.0],
                                                mirror=fn.random.coin_flip(seed=1)),
             LAYOUT_DATA[layout], layouts=[layout])
    b.assert_exact()


# -- cast, transpose, pad -------------------------------------------------------------------

_SPECIAL = np.array([-300.7, -2.5, -0.5, 0.3, 0.5, 1.5, 2.5, 254.6, 300.0, 7e4, 3e9, 1e20,
                     np.inf, -np.inf], np.float32)


@pytest.mark.parametrize("dtype", [types.UINT8, types.INT8, types.INT16, types.UINT16,
                                   types.INT32, types.UINT32, types.INT64, types.BOOL,
                                   types.FLOAT16, types.FLOAT64])
def test_cast_from_float_rounds_and_saturates(dtype):
    b = both(lambda x: fn.cast(x, dtype=dtype), [_SPECIAL, _SPECIAL[::-1].copy()])
    b.assert_exact()


@pytest.mark.parametrize("src", [np.int32, np.int64, np.uint16, np.uint32, np.int8, np.bool_])
@pytest.mark.parametrize("dtype", [types.UINT8, types.INT8, types.INT16, types.UINT64,
                                   types.FLOAT])
def test_cast_between_integers_saturates(src, dtype):
    values = np.array([-70000, -129, -1, 0, 1, 127, 128, 255, 256, 65535, 70000], np.int64)
    data = [values.astype(src), values[::-1].astype(src)]
    both(lambda x: fn.cast(x, dtype=dtype), data).assert_exact()


@pytest.mark.parametrize("dtype", [types.UINT8, types.INT32, types.UINT64, types.BOOL])
def test_cast_of_scalars_and_empty_samples(dtype):
    scalars = [np.array(v, np.float32) for v in (2.5, -300.5, 1e10)]
    both(lambda x: fn.cast(x, dtype=dtype), scalars, dense=False).assert_exact()
    empty = [np.zeros((0, 3), np.float32), np.zeros((2, 0), np.float32)]
    both(lambda x: fn.cast(x, dtype=dtype), empty, dense=False).assert_exact()


def test_cast_like_takes_the_second_inputs_type():
    data = [np.array([1.5, -2.5, 300.7], np.float32), np.array([np.nan, 7e4], np.float32)]
    ref = [np.zeros(2, np.uint8), np.zeros(1, np.uint8)]
    b = both(lambda x, r: fn.cast_like(x, r), data, ref, dense=False)
    b.assert_exact()
    assert [s.tolist() for s in b.gpu[0]] == [[2, 0, 255], [0, 255]]


def test_cast_cpu_matches_dali_measurements():
    # Measured on DALI 2.4's CPU fn.cast.
    x = np.array([-1.5, -0.5, 0.5, 1.7, 254.6, 255.5, 300.0, 1e10], np.float32)
    b = both(lambda d: fn.cast(d, dtype=types.UINT8), [x])
    np.testing.assert_array_equal(b.cpu[0][0], [0, 0, 1, 2, 255, 255, 255, 255])
    b = both(lambda d: fn.cast(d, dtype=types.INT32), [x])
    np.testing.assert_array_equal(b.cpu[0][0], [-2, -1, 1, 2, 255, 256, 300, 2147483647])
    b = both(lambda d: fn.cast(d, dtype=types.BOOL), [np.array([0.0, 0.3, -0.2, 2.5],
                                                              np.float32)])
    np.testing.assert_array_equal(b.cpu[0][0], [False, False, False, True])


@pytest.mark.parametrize("dense", [True, False])
def test_transpose(dense):
    data = U8 if dense else RAGGED
    both(lambda x: fn.transpose(x, perm=[2, 0, 1]), data, layouts=["HWC"],
         dense=dense).assert_exact()
    b = both(lambda x: fn.transpose(x), [x.astype(np.uint16) for x in data], layouts=["HWC"],
             dense=dense)
    b.assert_exact()
    assert b.layouts == ["CWH"]


@pytest.mark.parametrize("dense", [True, False])
def test_pad_to_batch_max_and_align(dense):
    data = U8 if dense else RAGGED
    both(lambda x: fn.pad(x, fill_value=-1.0), data, layouts=["HWC"],
         dense=dense).assert_exact()
    both(lambda x: fn.pad(x, axes=[0, 1], align=[4, 8], fill_value=300.0), data,
         layouts=["HWC"], dense=dense).assert_exact()
    both(lambda x: fn.pad(x, axis_names="W", shape=[16]), data, layouts=["HWC"],
         dense=dense).assert_exact()


def test_pad_per_sample_fill_and_shape():
    def build(x):
        fill = fn.random.uniform(range=[0.0, 9.0], seed=3)
        return fn.pad(x, axes=[0], shape=fn.cast(fn.random.uniform(range=[8.0, 14.0], shape=[1],
                                                                    seed=4), dtype=types.INT32),
                      fill_value=fill)

    for data in (RAGGED, [x.astype(np.uint16) for x in RAGGED], F32):
        both(build, data, layouts=["HWC"]).assert_exact()


# -- arithmetic -----------------------------------------------------------------------------

_TYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float16,
          np.float32, np.float64]


def _values(dtype: type, n: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.normal(0, 20, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 200), n).astype(dtype)


@pytest.mark.parametrize("a", _TYPES)
@pytest.mark.parametrize("b", [np.uint8, np.int16, np.int32, np.uint32, np.float32])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "min", "lt", "eq"])
def test_arithmetic_promotion_matches_cpu(a, b, op):
    fns = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
           "min": math.min, "lt": lambda x, y: x < y, "eq": lambda x, y: x == y}
    data_a = [_values(a, seed=1), _values(a, seed=2)]
    data_b = [_values(b, seed=3), _values(b, seed=4)]
    res = both(fns[op], data_a, data_b)
    if np.dtype(a) == np.float16 or np.dtype(b) == np.float16:
        res.assert_within(0.0, rtol=1e-3)
    else:
        res.assert_exact()


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint16, np.uint32])
def test_integer_division_remainder_and_power(dtype):
    a = [np.array([7, 100, 9, 0, 1, 3], dtype), np.array([5, 6, 7, 8, 9, 10], dtype)]
    b = [np.array([2, 7, 4, 3, 5, 2], dtype), np.array([1, 2, 3, 4, 5, 6], dtype)]
    if np.dtype(dtype).kind == "i":
        a[0] = -a[0]
    for build in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x ** y,
                  lambda x, y: x / y, lambda x, y: x & y, lambda x, y: ~x, lambda x, y: -x):
        both(build, a, b).assert_exact()


def test_negative_integer_exponent_gives_zero_and_zero_divisor_is_refused():
    a = [np.array([1, 2, -3], np.int32)]
    b = [np.array([-1, 3, -2], np.int32)]
    both(lambda x, y: x ** y, a, b).assert_exact()
    with pytest.raises(Exception, match="by zero"):
        both(lambda x, y: x // y, a, [np.array([1, 0, 1], np.int32)])


@pytest.mark.parametrize("dense", [True, False])
def test_arithmetic_with_scalars_and_broadcast(dense):
    data = U8 if dense else RAGGED
    both(lambda x: x * 2.5 + 1, data, dense=dense).assert_exact()
    both(lambda x: (x - 3) * types.Constant(2, dtype=types.INT16), data,
         dense=dense).assert_exact()
    both(lambda x: math.clamp(x, 10, 200), data, dense=dense).assert_exact()
    both(lambda x: 300 - x, data, dense=dense).assert_exact()
    vec = [np.array([1.0, 2.0, 3.0], np.float32)] * len(data)
    both(lambda x, v: x / v, data, vec, dense=dense).assert_exact()


@pytest.mark.parametrize("name", ["sqrt", "rsqrt", "exp", "log", "log2", "log10", "sin",
                                  "cos", "tan", "tanh", "atan", "floor", "ceil", "abs",
                                  "cbrt", "sinh", "asinh"])
def test_unary_math_within_float_rounding(name):
    data = [np.abs(_values(np.float32, 40, seed=8)) / 10 + 0.01,
            np.abs(_values(np.float32, 40, seed=9)) / 10 + 0.01]
    b = both(lambda x: getattr(math, name)(x), data)
    b.assert_within(0.0, rtol=1e-6)


def test_bool_arithmetic():
    a = [np.array([True, False, True, False])]
    b = [np.array([True, True, False, False])]
    for build in (lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: x & y,
                  lambda x, y: x == y, lambda x, y: x < y):
        both(build, a, b).assert_exact()
