"""erase and grid_mask against hand-computed boxes and a numpy GridMask reference.

erase's rules, measured on DALI 2.4: a box covers floor(anchor) <= i < floor(anchor +
shape), clipped; 'axis_names' (default "HW") decides the axes unless only 'axes' is
given; fill values are cast as C casts (truncated, wrapped). GridMask keeps a pixel when
the fractional part of either of its rotated, shifted grid coordinates is >= ratio.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import apply_op, run_samples

from stoker import fn
from stoker.errors import ArgumentError, SampleError

RNG = np.random.default_rng(2)
IMG = np.full((8, 10, 3), 7, np.uint8)




def _box(out, background=7):
    """Rows and columns touched, for an HWC image on a constant background."""
    changed = (out != background).any(axis=-1)
    rows, cols = np.nonzero(changed)
    return sorted(set(rows.tolist())), sorted(set(cols.tolist()))


@pytest.mark.parametrize("kwargs,rows,cols", [
    ({"anchor": [2, 3], "shape": [3, 4]}, [2, 3, 4], [3, 4, 5, 6]),
    ({"anchor": [2, 3], "shape": [3, 4], "axis_names": "WH"}, [3, 4, 5, 6], [2, 3, 4]),
    ({"anchor": [2, 3], "shape": [3, 4], "axes": [0, 1]}, [2, 3, 4], [3, 4, 5, 6]),
    # only 'axes' given: it counts, so [1, 0] puts the anchor's first value on W
    ({"anchor": [2, 3], "shape": [3, 4], "axes": [1, 0]}, [3, 4, 5, 6], [2, 3, 4]),
    ({"anchor": [2, 3], "shape": [3, 4], "axes": [1, 0], "axis_names": "HW"},
     [2, 3, 4], [3, 4, 5, 6]),
    ({"anchor": [2.6, 3.5], "shape": [3.4, 4.5]}, [2, 3, 4, 5], [3, 4, 5, 6, 7]),
    ({"anchor": [2.4, 3.4], "shape": [3.5, 4.5]}, [2, 3, 4], [3, 4, 5, 6]),
    ({"anchor": [-2, 8], "shape": [4, 4]}, [0, 1], [8, 9]),
    ({"anchor": [0.25, 0.3], "shape": [0.375, 0.4], "normalized": True}, [2, 3, 4],
     [3, 4, 5, 6]),
    ({"anchor": [0.25, 0.3], "shape": [3, 4], "normalized_anchor": True}, [2, 3, 4],
     [3, 4, 5, 6]),
    ({"anchor": [2, 3], "shape": [0.375, 0.4], "normalized_shape": True}, [2, 3, 4],
     [3, 4, 5, 6]),
    ({"anchor": [4, 5], "shape": [2, 4], "centered_anchor": True}, [3, 4], [3, 4, 5, 6]),
    ({"shape": [3, 4]}, [0, 1, 2], [0, 1, 2, 3]),
    ({"anchor": [2], "shape": [3], "axis_names": "W"}, list(range(8)), [2, 3, 4]),
    ({}, [], []),
])
def test_erase_box_rules(kwargs, rows, cols):
    (out,) = apply_op(fn.erase, [IMG], **kwargs)
    assert _box(out) == (rows, cols)
    assert (out[out != 7] == 0).all()


def test_erase_several_boxes_and_fill_values():
    (out,) = apply_op(fn.erase, [IMG], anchor=[1, 1, 5, 6], shape=[2, 2, 2, 3],
                    fill_value=[10.0, 20.0, 30.0])
    assert (out[1:3, 1:3] == [10, 20, 30]).all() and (out[5:7, 6:9] == [10, 20, 30]).all()
    assert (out == 7).all(axis=-1).sum() == 80 - 4 - 6
    (wrap,) = apply_op(fn.erase, [IMG], anchor=[0, 0], shape=[1, 1], fill_value=[300.0])
    assert wrap[0, 0, 0] == 44  # C cast: 300 wraps to 44 in uint8, as in DALI
    (trunc,) = apply_op(fn.erase, [IMG.astype(np.int16)], anchor=[0, 0], shape=[1, 1],
                      fill_value=[-2.7])
    assert trunc[0, 0, 0] == -2


def test_erase_along_channels_and_other_layouts():
    (c,) = apply_op(fn.erase, [IMG], anchor=[2, 3, 1], shape=[3, 4, 1], axis_names="HWC")
    assert (c[2:5, 3:7, 1] == 0).all() and (c[..., 0] == 7).all() and (c[..., 2] == 7).all()
    chw = IMG.transpose(2, 0, 1).copy()
    (out,) = apply_op(fn.erase, [chw], layout="CHW", anchor=[1, 2], shape=[3, 4],
                    fill_value=[1.0, 2.0, 3.0])
    assert (out[:, 1:4, 2:6] == np.array([1, 2, 3])[:, None, None]).all()
    (seq,) = apply_op(fn.erase, [np.stack([IMG, IMG])], layout="FHWC", anchor=[1, 2],
                    shape=[3, 4])
    assert (seq[:, 1:4, 2:6] == 0).all() and (seq == 0).sum() == 2 * 12 * 3


def test_per_sample_boxes_are_shared_by_image_and_mask():
    imgs = [RNG.integers(1, 255, (16, 16, 3), dtype=np.uint8) for _ in range(3)]
    masks = [np.ones((16, 16), np.uint8) for _ in range(3)]

    def build():
        img = fn.external_source(source=lambda: imgs, layout="HWC")
        mask = fn.external_source(source=lambda: masks, layout="HW")
        anchor = fn.random.uniform(range=[0, 10], shape=[2])
        return fn.erase(img, anchor=anchor, shape=[4, 5]), \
            fn.erase(mask, anchor=anchor, shape=[4, 5]), anchor

    out_img, out_mask, anchors = run_samples(build, 3)
    for oi, om, a in zip(out_img, out_mask, anchors, strict=True):
        y, x = int(np.floor(a[0])), int(np.floor(a[1]))
        y1, x1 = int(np.floor(a[0] + 4)), int(np.floor(a[1] + 5))
        assert (om[y:y1, x:x1] == 0).all() and om.sum() == 256 - (y1 - y) * (x1 - x)
        np.testing.assert_array_equal((oi == 0).all(axis=-1), om == 0)


def test_erase_errors():
    with pytest.raises(ArgumentError, match="'anchor' is given but 'shape' is not"):
        apply_op(fn.erase, [IMG], anchor=[1, 2])
    with pytest.raises(SampleError, match="'fill_value' has 2 values but the data has 3"):
        apply_op(fn.erase, [IMG], anchor=[1, 2], shape=[2, 2], fill_value=[1.0, 2.0])
    with pytest.raises(SampleError, match="must both hold k \\* 2 values"):
        apply_op(fn.erase, [IMG], anchor=[1, 2, 3], shape=[2, 2, 2])
    with pytest.raises(SampleError, match="names axes that layout 'CHW' lacks"):
        apply_op(fn.erase, [IMG.transpose(2, 0, 1).copy()], layout="CHW", anchor=[1],
               shape=[1], axis_names="D")


# -- grid_mask --------------------------------------------------------------------------------


def _grid_ref(img, tile=100, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0):
    f = np.float32
    h, w = img.shape[:2]
    ca, sa = f(np.cos(f(angle))) / f(tile), f(np.sin(f(angle))) / f(tile)
    y = np.arange(h, dtype=f)[:, None]
    x = np.arange(w, dtype=f)[None, :]
    fx = (-f(shift_x) / f(tile) + y * -sa) + x * ca
    fy = (-f(shift_y) / f(tile) + y * ca) + x * sa
    keep = (fx - np.floor(fx) >= f(ratio)) | (fy - np.floor(fy) >= f(ratio))
    return img * keep[..., None].astype(img.dtype)


@pytest.mark.parametrize("kwargs", [{}, {"tile": 37, "ratio": 0.3},
                                    {"tile": 50, "ratio": 0.6, "angle": 0.7, "shift_x": 13.2,
                                     "shift_y": -7.5},
                                    {"tile": 23, "ratio": 0.2, "angle": 2.5}])
def test_grid_mask_matches_reference(kwargs):
    for imgs in ([RNG.integers(1, 256, (120, 150, 3), dtype=np.uint8),
                  RNG.integers(1, 256, (60, 80, 3), dtype=np.uint8)],
                 [RNG.random((90, 70, 2)).astype(np.float32) + 1]):
        for img, out in zip(imgs, apply_op(fn.grid_mask, imgs, **kwargs), strict=True):
            np.testing.assert_array_equal(out, _grid_ref(img, **kwargs))


def test_grid_mask_masks_ratio_squared_of_the_area():
    img = np.ones((400, 400, 1), np.uint8)
    for ratio in (0.3, 0.5, 0.8):
        (out,) = apply_op(fn.grid_mask, [img], tile=40, ratio=ratio)
        assert (out == 0).mean() == pytest.approx(ratio ** 2, abs=0.01)


def test_grid_mask_errors():
    with pytest.raises(ArgumentError, match=r"'tile' must be in \[1, inf\]"):
        apply_op(fn.grid_mask, [IMG], tile=0)
    with pytest.raises(SampleError, match="expects HWC images"):
        apply_op(fn.grid_mask, [IMG.transpose(2, 0, 1).copy()], layout="CHW")
