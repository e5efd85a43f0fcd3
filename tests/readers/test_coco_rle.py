"""COCO run-length masks: the counts string, decoding, polygon rasterising, label maps.

References: a decoder of the counts string written here from the COCO format's
description (5-bit groups, continuation bit 0x20, sign bit 0x10 of the last group,
differences from the run two back from the fourth run on), masks made pixel by pixel, and
pycocotools where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from stoker.readers import coco_rle as R

pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")


def spec_decode(text: str) -> list[int]:
    """The counts string decoded one character at a time, as the format describes it."""
    values: list[int] = []
    pos = 0
    while pos < len(text):
        value, shift = 0, 0
        while True:
            group = ord(text[pos]) - 48
            pos += 1
            value |= (group & 0x1F) << shift
            shift += 5
            if not group & 0x20:
                if group & 0x10:
                    value -= 1 << shift
                break
        if len(values) > 2:
            value += values[-2]
        values.append(value)
    return values


def test_counts_string_round_trips_and_matches_the_format_description():
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, 5000, rng.integers(1, 30)).tolist()
        text = R.encode_counts_string(counts)
        assert R.decode_counts_string(text).tolist() == counts == spec_decode(text)


def test_counts_string_known_values():
    # One group per small value; the fourth value on is stored as a difference.
    assert R.encode_counts_string([3, 5, 1]) == "351"
    assert R.encode_counts_string([0, 10, 10, 10]) == "0::0"
    assert R.decode_counts_string("0::0").tolist() == [0, 10, 10, 10]
    # 40 needs two groups: 8 | 0x20 -> 'X', then 1 -> '1'.
    assert R.encode_counts_string([40]) == "X1"


@pytest.mark.parametrize("text, match", [("0:\x7f", "outside"), ("X", "middle of a value")])
def test_bad_counts_strings_are_refused(text, match):
    with pytest.raises(ValueError, match=match):
        R.decode_counts_string(text)


def test_masks_and_runs_are_column_major_and_start_with_background():
    mask = np.array([[0, 1, 1], [1, 1, 0]], bool)
    runs = R.mask_to_counts(mask)
    assert runs.tolist() == [1, 4, 1]  # down column 0 (0, 1), then 1 (1, 1), then 2 (1, 0)
    np.testing.assert_array_equal(R.counts_to_mask(runs, 2, 3), mask)
    assert R.mask_to_counts(np.ones((2, 2), bool)).tolist() == [0, 4]
    with pytest.raises(ValueError, match="cover 5 pixels"):
        R.counts_to_mask(np.array([2, 3]), 2, 3)


def test_polygon_rectangle_covers_the_pixel_centres_inside_it():
    # A rectangle from (1, 1) to (4, 3): the pixels whose centres (c + 0.5, r + 0.5) fall
    # inside, the COCO tools' rule for axis-aligned edges on whole pixels.
    mask = R.polygon_mask(np.array([[1, 1], [4, 1], [4, 3], [1, 3]], float), 5, 6)
    want = np.zeros((5, 6), bool)
    want[1:3, 1:4] = True
    np.testing.assert_array_equal(mask, want)


def test_polygon_masks_equal_pycocotools():
    mask_api = pytest.importorskip("pycocotools.mask")
    rng = np.random.default_rng(1)
    for trial in range(400):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        xy = rng.uniform(-5, max(h, w) + 5, (int(rng.integers(3, 12)), 2))
        if trial % 3 == 0:
            xy = np.round(xy * 2) / 2  # points on half pixels: ties in the rounding
        if trial % 7 == 0:
            xy[1] = xy[0]  # a repeated point: an edge of length 0
        rle = mask_api.frPyObjects([xy.reshape(-1).tolist()], h, w)[0]
        np.testing.assert_array_equal(R.polygon_mask(xy, h, w),
                                      mask_api.decode(rle).astype(bool), err_msg=str(trial))
        assert R.polygon_to_counts(xy, h, w).tolist() == R.decode_counts_string(
            rle["counts"].decode()).tolist()


def test_pixelwise_mask_counts_every_mask_and_the_higher_label_wins():
    h, w = 6, 8
    verts = np.array([[0, 0], [5, 0], [5, 5], [0, 5],  # object 0: a square, label 3
                      [3, 1], [8, 1], [8, 4], [3, 4]], np.float32)  # object 1: label 1
    polys = np.array([[0, 0, 4], [1, 4, 8]], np.int32)
    crowd = np.zeros((h, w), bool)
    crowd[5, :] = True  # object 2 (label 1) is an RLE mask along the last row
    mask = R.pixelwise_mask(h, w, np.array([3, 1, 1]), polys, verts, np.array([2]),
                            [R.mask_to_counts(crowd)])
    assert mask.shape == (h, w, 1) and mask.dtype == np.int32
    square, other = np.zeros((h, w), bool), np.zeros((h, w), bool)
    square[0:5, 0:5] = True
    other[1:4, 3:8] = True
    want = np.zeros((h, w), np.int32)
    want[other | crowd] = 1
    want[square] = 3  # label 3 over label 1 where they overlap
    np.testing.assert_array_equal(mask[..., 0], want)
    empty = R.pixelwise_mask(2, 3, np.zeros(0, np.int32), np.zeros((0, 3), np.int32),
                             np.zeros((0, 2), np.float32), np.zeros(0, np.int32), [])
    assert empty.shape == (2, 3, 1) and not empty.any()
