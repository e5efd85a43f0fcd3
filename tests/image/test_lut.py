"""equalize against OpenCV's equalizeHist, lookup_table against hand-computed tables.

DALI 2.4's equalize agrees with equalizeHist bit for bit (per channel, per frame);
lookup_table converts its values with rounding half away from zero and saturation.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(4)


def _apply(op, images, layout="HWC", **kwargs):
    @pipeline_def(batch_size=len(images), num_threads=2, device_id=None, seed=3,
                  exec_pipelined=False)
    def pipe():
        return op(fn.external_source(source=lambda: images, layout=layout), **kwargs)

    p = pipe()
    try:
        return [np.array(s) for s in p.run()[0]]
    finally:
        p.close()


def _low_contrast(*shape):
    return (RNG.random(shape) * 80 + 60).astype(np.uint8)


def _eq_channels(img):
    return np.stack([cv2.equalizeHist(np.ascontiguousarray(img[..., c]))
                     for c in range(img.shape[-1])], axis=-1)


def test_equalize_matches_opencv_per_channel():
    imgs = [_low_contrast(30, 40, 3), _low_contrast(17, 23, 3)]
    for img, out in zip(imgs, _apply(fn.equalize, imgs), strict=True):
        np.testing.assert_array_equal(out, _eq_channels(img))
        assert out.min() == 0 and out.max() == 255


def test_equalize_layouts():
    img = _low_contrast(20, 30, 3)
    (hw,) = _apply(fn.equalize, [img[..., 0].copy()], layout="HW")
    np.testing.assert_array_equal(hw, cv2.equalizeHist(np.ascontiguousarray(img[..., 0])))
    (chw,) = _apply(fn.equalize, [img.transpose(2, 0, 1).copy()], layout="CHW")
    np.testing.assert_array_equal(chw, _eq_channels(img).transpose(2, 0, 1))
    frames = np.stack([img, img // 2 + 10])
    (seq,) = _apply(fn.equalize, [frames], layout="FHWC")
    np.testing.assert_array_equal(seq, np.stack([_eq_channels(f) for f in frames]))
    wide = _low_contrast(6, 7, 5)  # more channels than OpenCV's LUT handles at once
    (out,) = _apply(fn.equalize, [wide])
    np.testing.assert_array_equal(out, _eq_channels(wide))


def test_equalize_hand_cases():
    (two,) = _apply(fn.equalize, [np.array([[[3], [3], [9], [9], [9]]], np.uint8)])
    assert two.reshape(-1).tolist() == [0, 0, 255, 255, 255]
    (const,) = _apply(fn.equalize, [np.full((4, 4, 3), 7, np.uint8)])
    assert (const == 7).all()  # a single level keeps its value


def test_equalize_needs_uint8():
    with pytest.raises(SampleError, match="input type float32 is not supported"):
        _apply(fn.equalize, [np.zeros((4, 4, 3), np.float32)])
    with pytest.raises(SampleError, match="expects HW, HWC, CHW"):
        _apply(fn.equalize, [np.zeros((2, 4, 4, 3), np.uint8)], layout="DHWC")


# -- lookup_table -----------------------------------------------------------------------------


def test_lookup_table_maps_keys_and_defaults_the_rest():
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    (out,) = _apply(fn.lookup_table, [x], layout="", keys=[0, 1, 7], values=[10.0, 20.0, 0.5],
                    default_value=-1.0)
    assert out.dtype == np.float32
    ref = np.full(12, -1.0)
    ref[[0, 1, 7]] = [10.0, 20.0, 0.5]
    np.testing.assert_array_equal(out.reshape(-1), ref)


@pytest.mark.parametrize("in_type", [np.int8, np.int16, np.int32, np.int64, np.uint16,
                                     np.uint32])
def test_lookup_table_on_integer_types(in_type):
    x = np.array([-1, 0, 3, 5, 120, 100], np.int64)
    x = x.astype(in_type) if np.dtype(in_type).kind == "i" else np.abs(x).astype(in_type)
    (out,) = _apply(fn.lookup_table, [x], layout="", keys=[3, 100, 120],
                    values=[1.5, 2.5, -7.0], default_value=9.0)
    table = {3: 1.5, 100: 2.5, 120: -7.0}
    np.testing.assert_array_equal(out, [table.get(int(v), 9.0) for v in x])


def test_lookup_table_converts_like_dali():
    x = np.array([0, 1, 2, 3, 4], np.uint8)
    (u8,) = _apply(fn.lookup_table, [x], layout="", keys=[1, 2, 3], values=[0.5, 300.0, 2.5],
                   default_value=-1.0, dtype=types.UINT8)
    assert u8.tolist() == [0, 1, 255, 3, 0]  # 0.5 -> 1, saturate 300, default -1 -> 0
    (i16,) = _apply(fn.lookup_table, [x], layout="", keys=[1, 2], values=[-2.5, 1.7],
                    output_dtype=types.INT16)  # DALI's deprecated name still works
    assert i16.dtype == np.int16 and i16.tolist() == [0, -3, 2, 0, 0]


def test_lookup_table_keys_above_the_input_range_and_large_keys():
    x = np.array([300, 65535, 7], np.int32)
    (out,) = _apply(fn.lookup_table, [x], layout="", keys=[300, 65535], values=[1.0, 2.0])
    assert out.tolist() == [1.0, 2.0, 0.0]
    (u8,) = _apply(fn.lookup_table, [np.array([44], np.uint8)], layout="", keys=[300],
                   values=[1.0])
    assert u8.tolist() == [0.0]


def test_lookup_table_errors():
    x = [np.zeros(3, np.uint8)]
    with pytest.raises(ArgumentError, match="must have the same length"):
        _apply(fn.lookup_table, x, layout="", keys=[0, 1], values=[1.0])
    with pytest.raises(ArgumentError, match=r"'keys' must be in \[0, 65535\]"):
        _apply(fn.lookup_table, x, layout="", keys=[-1], values=[1.0])
    with pytest.raises(SampleError, match="input type float32 is not supported"):
        _apply(fn.lookup_table, [np.zeros(3, np.float32)], layout="", keys=[1], values=[1.0])
