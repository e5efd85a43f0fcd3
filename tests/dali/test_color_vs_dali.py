"""Color and pixel operators against DALI 2.4's CPU operators on natural images.

Skipped unless nvidia.dali (and scikit-image, for the photographs) import. Run with
``/work/bench-venv/bin/python -m pytest tests/dali/test_color_vs_dali.py``.

Each case runs the same pipeline in both libraries on scikit-image's astronaut, chelsea
and coffee photographs and compares element-wise. CASES holds the tolerance of each case
as (mean |diff|, max |diff|, share of differing elements); what was measured when these
were set is in the comment beside it. "exact" means bit-identical output. Random
operators are compared by the statistics of (output - input) instead (NOISE_CASES).
"""

from __future__ import annotations

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")
data = pytest.importorskip("skimage.data")

import stoker  # noqa: E402

EXACT = (0.0, 0.0, 0.0)


def _photos():
    return [data.astronaut(), data.chelsea(), data.coffee()]


def _run(lib, build, batch, layout):
    @lib.pipeline_def(batch_size=len(batch), num_threads=2, device_id=None, seed=5)
    def pipe():
        return build(lib, lib.fn.external_source(source=lambda: batch, layout=layout))

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.array(out[i]) for i in range(len(batch))]


def _u8(batch):
    return batch


def _f32(batch):
    return [x.astype(np.float32) / 255 for x in batch]


def _i16(batch):
    return [x.astype(np.int16) * 100 - 10000 for x in batch]


def _gray(batch):
    return [x[..., :1].copy() for x in batch]


def _chw(batch):
    return [x.transpose(2, 0, 1).copy() for x in batch]


def _seq(batch):
    return [np.stack([batch[1], batch[1][::-1].copy()])]


def _csc(src, dst):
    return lambda lib, x: lib.fn.color_space_conversion(
        x, image_type=getattr(lib.types, src), output_type=getattr(lib.types, dst))


# name: (build, input maker, layout, (mean, max, share) tolerance)   # measured
CASES = {
    "brightness": (lambda l, x: l.fn.brightness(x, brightness=1.3), _u8, "HWC", EXACT),
    "brightness_shift": (lambda l, x: l.fn.brightness(x, brightness=0.9,
                                                      brightness_shift=-0.13),
                         _u8, "HWC", EXACT),
    "contrast": (lambda l, x: l.fn.contrast(x, contrast=1.7), _u8, "HWC", EXACT),
    "contrast_center": (lambda l, x: l.fn.contrast(x, contrast=0.6, contrast_center=100.0),
                        _u8, "HWC", EXACT),
    "brightness_contrast_float": (
        lambda l, x: l.fn.brightness_contrast(x, brightness=1.3, contrast=0.7,
                                              brightness_shift=0.1, dtype=l.types.FLOAT),
        _u8, "HWC", EXACT),
    "brightness_contrast_int16": (
        lambda l, x: l.fn.brightness_contrast(x, brightness=1.3, contrast=0.7,
                                              brightness_shift=0.1, dtype=l.types.INT16),
        _u8, "HWC", EXACT),
    "brightness_contrast_f32_in": (
        lambda l, x: l.fn.brightness_contrast(x, brightness=1.3, contrast=1.4,
                                              brightness_shift=0.05), _f32, "HWC", EXACT),
    "contrast_int16_in": (lambda l, x: l.fn.contrast(x, contrast=1.4), _i16, "HWC", EXACT),
    # 3x3 matrices: float32 rounding of the composed matrix flips rare .5 ties
    "hue": (lambda l, x: l.fn.hue(x, hue=37.0), _u8, "HWC", (1e-4, 1, 1e-4)),  # 2.0e-5 share
    "saturation": (lambda l, x: l.fn.saturation(x, saturation=0.4), _u8, "HWC",
                   (1e-4, 1, 1e-4)),  # 2.6e-6
    "hsv": (lambda l, x: l.fn.hsv(x, hue=-120.0, saturation=1.3, value=0.8), _u8, "HWC",
            (1e-4, 1, 1e-4)),  # 1.1e-5
    "color_twist": (lambda l, x: l.fn.color_twist(x, hue=25.0, saturation=0.7, brightness=1.2,
                                                  contrast=0.8), _u8, "HWC",
                    (1e-4, 1, 1e-4)),  # 1.6e-6
    "color_twist_float": (lambda l, x: l.fn.color_twist(x, hue=25.0, saturation=0.7,
                                                        dtype=l.types.FLOAT),
                          _u8, "HWC", (1e-5, 1e-4, 1.0)),  # max 3.1e-5
    "hue_f32_in": (lambda l, x: l.fn.hue(x, hue=37.0), _f32, "HWC", (1e-6, 1e-6, 1.0)),
    "color_twist_int16_in": (lambda l, x: l.fn.color_twist(x, contrast=1.4, hue=20.0), _i16,
                             "HWC", (1e-3, 1, 1e-3)),  # 3.6e-4
    "hue_sequence": (lambda l, x: l.fn.hue(x, hue=37.0), _seq, "FHWC", (1e-4, 1, 1e-4)),
    "csc_rgb_bgr": (_csc("RGB", "BGR"), _u8, "HWC", EXACT),
    "csc_rgb_gray": (_csc("RGB", "GRAY"), _u8, "HWC", EXACT),
    "csc_bgr_gray": (_csc("BGR", "GRAY"), _u8, "HWC", EXACT),
    "csc_gray_rgb": (_csc("GRAY", "RGB"), _gray, "HWC", EXACT),
    "csc_rgb_ycbcr": (_csc("RGB", "YCbCr"), _u8, "HWC", (1e-4, 1, 1e-4)),  # 3.0e-5
    "csc_bgr_ycbcr": (_csc("BGR", "YCbCr"), _u8, "HWC", (1e-4, 1, 1e-4)),  # exact here
    "csc_ycbcr_rgb": (_csc("YCbCr", "RGB"), _u8, "HWC", (1e-4, 1, 1e-4)),  # 1.6e-6
    "csc_ycbcr_gray": (_csc("YCbCr", "GRAY"), _u8, "HWC", EXACT),
    "csc_gray_ycbcr": (_csc("GRAY", "YCbCr"), _gray, "HWC", EXACT),
    # blur: OpenCV's separable filter vs DALI's, float sums in another order
    "gaussian_blur": (lambda l, x: l.fn.gaussian_blur(x, sigma=1.0), _u8, "HWC",
                      (1e-4, 1, 1e-4)),  # 5.8e-6
    "gaussian_blur_wide": (lambda l, x: l.fn.gaussian_blur(x, sigma=3.3), _u8, "HWC",
                           (1e-4, 1, 1e-4)),  # 2.6e-5
    "gaussian_blur_window": (lambda l, x: l.fn.gaussian_blur(x, window_size=[3, 9],
                                                             sigma=[2.0, 0.5]),
                             _u8, "HWC", (1e-4, 1, 1e-4)),  # 4.7e-6
    "gaussian_blur_float": (lambda l, x: l.fn.gaussian_blur(x, sigma=1.5, dtype=l.types.FLOAT),
                            _u8, "HWC", (1e-4, 5e-4, 1.0)),  # max 9.2e-5
    "gaussian_blur_int16": (lambda l, x: l.fn.gaussian_blur(x, sigma=1.5), _i16, "HWC",
                            (1e-3, 1, 1e-3)),  # 4.9e-4
    "gaussian_blur_chw": (lambda l, x: l.fn.gaussian_blur(x, sigma=1.5), _chw, "CHW",
                          (1e-4, 1, 1e-4)),  # 1.4e-5
    "gaussian_blur_sequence": (lambda l, x: l.fn.gaussian_blur(x, sigma=1.2), _seq, "FHWC",
                               (1e-4, 1, 1e-4)),  # 2.8e-5
    "jpeg_q10": (lambda l, x: l.fn.jpeg_compression_distortion(x, quality=10), _u8, "HWC",
                 EXACT),
    "jpeg_q50": (lambda l, x: l.fn.jpeg_compression_distortion(x, quality=50), _u8, "HWC",
                 EXACT),
    "jpeg_q95": (lambda l, x: l.fn.jpeg_compression_distortion(x, quality=95), _u8, "HWC",
                 EXACT),
    "jpeg_sequence": (lambda l, x: l.fn.jpeg_compression_distortion(x, quality=30), _seq,
                      "FHWC", EXACT),
    # normalize: float64 sums here, DALI's own order: float32-level differences
    "normalize": (lambda l, x: l.fn.normalize(x), _u8, "HWC", (1e-6, 1e-5, 1.0)),  # 2.4e-7
    "normalize_hw": (lambda l, x: l.fn.normalize(x, axis_names="HW"), _u8, "HWC",
                     (1e-6, 1e-5, 1.0)),  # 7.2e-7
    "normalize_c": (lambda l, x: l.fn.normalize(x, axis_names="C"), _u8, "HWC",
                    (1e-5, 1e-4, 1.0)),  # 3.2e-5
    "normalize_batch": (lambda l, x: l.fn.normalize(x, batch=True, axes=[0, 1], ddof=1), _u8,
                        "HWC", (1e-6, 1e-5, 1.0)),  # 4.8e-7
    "normalize_given": (lambda l, x: l.fn.normalize(x, mean=110.0, stddev=60.0, epsilon=3.0),
                        _u8, "HWC", (1e-6, 1e-5, 1.0)),  # 7.2e-7
    "normalize_uint8": (lambda l, x: l.fn.normalize(x, scale=64.0, shift=128.0,
                                                    dtype=l.types.UINT8), _u8, "HWC", EXACT),
    "erase": (lambda l, x: l.fn.erase(x, anchor=[20, 30, 200.5, 10.3],
                                      shape=[100, 50, 33.3, 70.7], fill_value=[10, 20, 30]),
              _u8, "HWC", EXACT),
    "erase_normalized": (lambda l, x: l.fn.erase(x, anchor=[0.5, 0.5], shape=[0.3, 0.2],
                                                 normalized=True, centered_anchor=True),
                         _u8, "HWC", EXACT),
    "erase_axes": (lambda l, x: l.fn.erase(x, anchor=[20, 30], shape=[100, 50], axes=[1, 0]),
                   _u8, "HWC", EXACT),
    "erase_chw": (lambda l, x: l.fn.erase(x, anchor=[20, 30], shape=[100, 50],
                                          fill_value=[1, 2, 3]), _chw, "CHW", EXACT),
    "grid_mask": (lambda l, x: l.fn.grid_mask(x), _u8, "HWC", EXACT),
    "grid_mask_rotated": (lambda l, x: l.fn.grid_mask(x, tile=50, ratio=0.6, angle=0.7,
                                                      shift_x=13.2, shift_y=-7.5),
                          _u8, "HWC", EXACT),
    "equalize": (lambda l, x: l.fn.equalize(x), _u8, "HWC", EXACT),
    "equalize_chw": (lambda l, x: l.fn.equalize(x), _chw, "CHW", EXACT),
    "lookup_table": (lambda l, x: l.fn.lookup_table(x, keys=list(range(0, 256, 3)),
                                                    values=[v * 1.7 for v in range(0, 256, 3)],
                                                    default_value=-4.0, dtype=l.types.UINT8),
                     _u8, "HWC", EXACT),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_dali(name):
    build, make, layout, (tol_mean, tol_max, tol_share) = CASES[name]
    batch = make(_photos())
    theirs = _run(dali, build, batch, layout)
    ours = _run(stoker, build, batch, layout)
    for a, b in zip(theirs, ours, strict=True):
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
    diff = np.concatenate([np.abs(a.astype(np.float64) - b.astype(np.float64)).reshape(-1)
                           for a, b in zip(theirs, ours, strict=True)])
    assert diff.mean() <= tol_mean, f"mean |diff| {diff.mean():.3g}"
    assert diff.max() <= tol_max, f"max |diff| {diff.max():.3g}"
    assert np.mean(diff > 0) <= tol_share, f"share differing {np.mean(diff > 0):.3g}"


FLAT = [np.full((256, 256, 3), 100, np.uint8)] * 4

# name: (build, batch); the statistics of (output - input) must agree within 2%
NOISE_CASES = {
    "gaussian": (lambda l, x: l.fn.noise.gaussian(x, mean=5.0, stddev=30.0), FLAT),
    "gaussian_float": (lambda l, x: l.fn.noise.gaussian(x, stddev=0.1),
                       [f.astype(np.float32) / 255 for f in FLAT]),
    "salt_and_pepper": (lambda l, x: l.fn.noise.salt_and_pepper(x, prob=0.3,
                                                                salt_vs_pepper=0.8), FLAT),
    "salt_and_pepper_per_channel": (lambda l, x: l.fn.noise.salt_and_pepper(
        x, prob=0.3, per_channel=True), FLAT),
    "shot_default": (lambda l, x: l.fn.noise.shot(x), FLAT),
    "shot": (lambda l, x: l.fn.noise.shot(x, factor=0.5), FLAT),
}


@pytest.mark.parametrize("name", sorted(NOISE_CASES))
def test_noise_statistics_match_dali(name):
    build, batch = NOISE_CASES[name]
    stats = []
    for lib in (dali, stoker):
        outs = _run(lib, build, batch, "HWC")
        d = np.concatenate([(o.astype(np.float64) - x).reshape(-1)
                            for o, x in zip(outs, batch, strict=True)])
        shared = np.mean([((o[..., 0] == o[..., 1]) & (o[..., 1] == o[..., 2])).mean()
                          for o in outs])
        stats.append((d.mean(), d.std(), np.mean(d != 0), shared, outs[0].dtype))
    (m0, s0, c0, sh0, t0), (m1, s1, c1, sh1, t1) = stats
    assert t0 == t1
    assert abs(m0 - m1) <= 0.02 * s0 + 1e-3
    assert s1 == pytest.approx(s0, rel=0.02)
    assert c1 == pytest.approx(c0, abs=0.01)
    assert sh1 == pytest.approx(sh0, abs=0.01)
