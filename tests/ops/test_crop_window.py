"""random_crop_window: DALI 2.4's random crop rules (accepted windows, fallbacks, anchors)."""

from __future__ import annotations

import numpy as np
import pytest

from stoker.kernels.cpu.crop_window import random_crop_window

AREA, RATIO = [0.08, 1.0], [3 / 4, 4 / 3]


@pytest.mark.parametrize("h,w", [(375, 500), (500, 375), (224, 224), (17, 900), (3, 2)])
def test_windows_fit_and_keep_ratio_and_area_in_range(h, w):
    gen = np.random.default_rng(0)
    for _ in range(300):
        y, x, ch, cw = random_crop_window(gen, h, w, AREA, RATIO, 10)
        assert 0 <= y <= h - ch and 0 <= x <= w - cw and ch >= 1 and cw >= 1
        if (h, w) in ((375, 500), (500, 375), (224, 224)):
            assert RATIO[0] <= cw / ch <= RATIO[1]
            assert ch * cw <= h * w


def test_image_too_wide_for_any_valid_window_gets_full_height_at_max_ratio():
    # 10 x 1000: every window of >= 8% area would be wider than 4:3 allows.
    y, x, ch, cw = random_crop_window(np.random.default_rng(1), 10, 1000, AREA, RATIO, 10)
    assert (ch, cw) == (10, int(10 * RATIO[1])) and y == 0 and 0 <= x <= 1000 - cw


def test_image_too_tall_gets_full_width_at_min_ratio():
    y, x, ch, cw = random_crop_window(np.random.default_rng(1), 1000, 10, AREA, RATIO, 10)
    assert (ch, cw) == (int(10 / RATIO[0]), 10) and x == 0


def test_fallback_after_failed_attempts_is_the_ratio_clamped_whole_image():
    # No attempt can succeed with zero attempts: the fallback decides, capped by area[1].
    gen = np.random.default_rng(3)
    assert random_crop_window(gen, 100, 100, AREA, RATIO, 0)[2:] == (100, 100)
    assert random_crop_window(gen, 100, 100, [0.1, 0.25], RATIO, 0)[2:] == (50, 50)
    # 100 x 200 is wider than 4:3: full height, width 133, then shrunk to half the area.
    _, _, ch, cw = random_crop_window(gen, 100, 200, [0.1, 0.5], RATIO, 0)
    assert (ch, cw) == (int(100 * (0.5 * 200 * 100 / (100 * 133)) ** 0.5),
                        int(133 * (0.5 * 200 * 100 / (100 * 133)) ** 0.5))


def test_fallback_window_is_placed_at_random_like_any_other():
    anchors = {random_crop_window(np.random.default_rng(s), 100, 100, [0.1, 0.25], RATIO, 0)[:2]
               for s in range(20)}
    assert len(anchors) > 1


def test_same_generator_state_same_window_and_empty_image():
    a = random_crop_window(np.random.default_rng(9), 300, 400, AREA, RATIO, 10)
    b = random_crop_window(np.random.default_rng(9), 300, 400, AREA, RATIO, 10)
    assert a == b
    assert random_crop_window(np.random.default_rng(9), 0, 400, AREA, RATIO, 10) == (0, 0, 0, 0)
