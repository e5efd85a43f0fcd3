"""random_bbox_crop's float windows feed decoders.image_slice and slice as in DALI's SSD and
EfficientDet pipelines: relative windows (normalized anchor and shape, x/y order) and
absolute ones (crop_shape, normalized_*=False, out_of_bounds_policy="pad").

References: the decoded image cut with numpy at the window DALI's slice rule gives
(start = round(anchor * extent), end = round(start_f + shape * extent), halves away from
zero), and the kept boxes mapped into that window.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from stoker import fn, pipeline_def, types


def _jpegs(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h, w = 60 + 7 * i, 80 + 5 * i
        img = cv2.GaussianBlur(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), (7, 7), 0)
        out.append(np.frombuffer(cv2.imencode(".jpg", img)[1].tobytes(), np.uint8))
    return out


def _boxes(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    out = []
    for _ in range(n):
        lo = rng.uniform(0, 0.6, (3, 2))
        out.append(np.concatenate([lo, lo + rng.uniform(0.1, 0.4, (3, 2))], 1)
                   .astype(np.float32))
    return out


def _round(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def test_relative_windows_cut_the_decoded_image_as_slice_does():
    n = 6
    jpegs, boxes = _jpegs(n), _boxes(n)

    @pipeline_def(batch_size=n, num_threads=2, device_id=None, seed=7)
    def pipe():
        data = fn.external_source(source=lambda: jpegs)
        b = fn.external_source(source=lambda: boxes)
        anchor, shape, out_boxes = fn.random_bbox_crop(
            b, aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5], scaling=[0.3, 1.0],
            bbox_layout="xyXY", allow_no_crop=False, num_attempts=50)
        fused = fn.decoders.image_slice(data, anchor, shape, output_type=types.RGB)
        plain = fn.slice(fn.decoders.image(data, output_type=types.RGB), anchor, shape)
        return fn.decoders.image(data, output_type=types.RGB), fused, plain, anchor, shape

    p = pipe()
    p.build()
    for _ in range(3):
        full, fused, plain, anchor, shape = (list(t) for t in p.run())
        for j in range(n):
            img = np.array(full[j])
            h, w = img.shape[:2]
            (ax, ay), (sx, sy) = np.array(anchor[j], np.float64), np.array(shape[j], np.float64)
            x0, y0 = _round(ax * w), _round(ay * h)
            x1, y1 = _round(ax * w + sx * w), _round(ay * h + sy * h)
            want = img[y0:y1, x0:x1]
            np.testing.assert_array_equal(np.array(plain[j]), want)
            got = np.array(fused[j])
            assert got.shape == want.shape
            # Region-of-interest decoding may differ from the full decode by a level at the
            # cut (libjpeg-turbo's block smoothing), as fn.decoders.image_slice in DALI.
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 2


def test_absolute_windows_feed_slice_with_padding_as_efficientdet_does():
    n = 4
    jpegs, boxes = _jpegs(n, seed=3), _boxes(n)

    @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=11)
    def pipe():
        data = fn.external_source(source=lambda: jpegs)
        b = fn.external_source(source=lambda: boxes)
        images = fn.decoders.image(data, output_type=types.RGB)
        shape = fn.cast(images.shape()[1::-1], dtype=types.INT32)  # (W, H)
        anchor, window, out_boxes = fn.random_bbox_crop(
            b, crop_shape=[64, 48], input_shape=shape, bbox_layout="xyXY",
            allow_no_crop=False, total_num_attempts=64)
        cut = fn.slice(images, anchor, window, normalized_anchor=False,
                       normalized_shape=False, out_of_bounds_policy="pad")
        return images, cut, anchor, window

    p = pipe()
    p.build()
    images, cut, anchor, window = (list(t) for t in p.run())
    for j in range(n):
        img = np.array(images[j])
        a = np.array(anchor[j])
        assert np.array_equal(np.array(window[j]), [64, 48])
        assert np.all(a == np.round(a))
        x0, y0 = int(a[0]), int(a[1])
        got = np.array(cut[j])
        assert got.shape == (48, 64, 3)
        want = np.zeros((48, 64, 3), np.uint8)
        part = img[y0:y0 + 48, x0:x0 + 64]
        want[:part.shape[0], :part.shape[1]] = part
        np.testing.assert_array_equal(got, want)
