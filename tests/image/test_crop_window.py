"""random_crop_window: DALI 2.4's random crop rules (accepted windows, fallbacks, anchors)."""

from __future__ import annotations

import math

import pytest

from stoker.kernels.cpu.image.crop_window import STREAM_SALT, random_crop_window
from stoker.kernels.cpu.random.rng import uniform01_reference

AREA, RATIO = [0.08, 1.0], [3 / 4, 4 / 3]


@pytest.mark.parametrize("h,w", [(375, 500), (500, 375), (224, 224), (17, 900), (3, 2)])
def test_windows_fit_and_keep_ratio_and_area_in_range(h, w):
    for index in range(300):
        y, x, ch, cw = random_crop_window(0, index, h, w, AREA, RATIO, 10)
        assert 0 <= y <= h - ch and 0 <= x <= w - cw and ch >= 1 and cw >= 1
        if (h, w) in ((375, 500), (500, 375), (224, 224)):
            assert RATIO[0] <= cw / ch <= RATIO[1]
            assert ch * cw <= h * w


def _half_away(v: float) -> int:
    return math.floor(v + 0.5)


def test_draws_come_from_the_salted_counter_stream():
    # Worked by hand from rng's numpy reference of the stream: the first attempt's area
    # and log-ratio draws, then the anchors' draws. Samples whose first attempt does not
    # fit are skipped; enough of them do.
    h, w, checked = 375, 500, 0
    for seed, index in ((1, 0), (1, 7), (99, 3), (2**40 + 5, 123456)):
        u = uniform01_reference(seed ^ STREAM_SALT, [index], 4)[0]
        target = h * w * (AREA[0] + (AREA[1] - AREA[0]) * u[0])
        aspect = math.exp(math.log(RATIO[0]) + (math.log(RATIO[1]) - math.log(RATIO[0])) * u[1])
        cw, ch = _half_away(math.sqrt(target * aspect)), _half_away(math.sqrt(target / aspect))
        if not (cw <= w and ch <= h and RATIO[0] <= cw / ch <= RATIO[1]):
            continue
        want = (int(u[2] * (h - ch + 1)), int(u[3] * (w - cw + 1)), ch, cw)
        assert random_crop_window(seed, index, h, w, AREA, RATIO, 10) == want
        checked += 1
    assert checked >= 2


def test_image_too_wide_for_any_valid_window_gets_full_height_at_max_ratio():
    # 10 x 1000: every window of >= 8% area would be wider than 4:3 allows.
    y, x, ch, cw = random_crop_window(1, 0, 10, 1000, AREA, RATIO, 10)
    assert (ch, cw) == (10, int(10 * RATIO[1])) and y == 0 and 0 <= x <= 1000 - cw
    # No attempt is drawn: the anchors are the stream's first two draws.
    u = uniform01_reference(1 ^ STREAM_SALT, [0], 2)[0]
    assert x == int(u[1] * (1000 - cw + 1))


def test_image_too_tall_gets_full_width_at_min_ratio():
    y, x, ch, cw = random_crop_window(1, 0, 1000, 10, AREA, RATIO, 10)
    assert (ch, cw) == (int(10 / RATIO[0]), 10) and x == 0


def test_fallback_after_failed_attempts_is_the_ratio_clamped_whole_image():
    # No attempt can succeed with zero attempts: the fallback decides, capped by area[1].
    assert random_crop_window(3, 0, 100, 100, AREA, RATIO, 0)[2:] == (100, 100)
    assert random_crop_window(3, 1, 100, 100, [0.1, 0.25], RATIO, 0)[2:] == (50, 50)
    # 100 x 200 is wider than 4:3: full height, width 133, then shrunk to half the area.
    _, _, ch, cw = random_crop_window(3, 2, 100, 200, [0.1, 0.5], RATIO, 0)
    assert (ch, cw) == (int(100 * (0.5 * 200 * 100 / (100 * 133)) ** 0.5),
                        int(133 * (0.5 * 200 * 100 / (100 * 133)) ** 0.5))


def test_fallback_window_is_placed_at_random_like_any_other():
    anchors = {random_crop_window(0, s, 100, 100, [0.1, 0.25], RATIO, 0)[:2] for s in range(20)}
    assert len(anchors) > 1


def test_same_sample_same_window_other_samples_differ_and_empty_image():
    a = random_crop_window(9, 4, 300, 400, AREA, RATIO, 10)
    assert a == random_crop_window(9, 4, 300, 400, AREA, RATIO, 10)
    others = {random_crop_window(s, i, 300, 400, AREA, RATIO, 10) for s, i in
              ((9, 5), (10, 4), (9, 2**63 + 4))}
    assert a not in others and len(others) == 3
    assert random_crop_window(9, 4, 0, 400, AREA, RATIO, 10) == (0, 0, 0, 0)
