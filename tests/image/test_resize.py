"""resize, resize_crop_mirror and random_resized_crop against DALI's size rules (tables
measured on DALI 2.4), independent numpy/OpenCV resampling references and each other."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import resize_geometry as G


def _smooth(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    """A smooth natural-ish image: low-frequency waves plus a little texture."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    chans = [127 + 60 * np.sin(x / (7 + 3 * k) + y / (11 + k)) + 40 * np.cos(y / (5 + 2 * k))
             + rng.normal(0, 4, (h, w)) for k in range(c)]
    return np.clip(np.stack(chans, -1), 0, 255).astype(np.uint8)


def run_op(op, samples: list, layout: str = "HWC", **kwargs) -> list:
    @pipeline_def(batch_size=len(samples), num_threads=2, device_id=None, seed=7)
    def pipe():
        x = fn.external_source(source=lambda: samples, layout=layout)
        out = op(x, **kwargs)
        return tuple(out) if isinstance(out, list) else out  # several outputs: unpacked

    p = pipe()
    p.build()
    out = p.run()
    outs = out if isinstance(out, tuple | list) else (out,)
    return [[np.array(s) for s in tl] for tl in outs] if len(outs) > 1 else \
        [np.array(s) for s in outs[0]]


# -- output sizes (measured with DALI 2.4 CPU) ------------------------------------------------

SHAPES = [(375, 500), (500, 375), (333, 500), (100, 101), (1, 7), (1000, 17)]
SIZE_CASES = [
    (dict(resize_shorter=256), [(256, 341), (341, 256), (256, 384), (256, 259), (256, 1792),
                                (15059, 256)]),
    (dict(resize_shorter=224.6), [(225, 299), (299, 225), (225, 337), (225, 227), (225, 1572),
                                  (13212, 225)]),
    (dict(resize_longer=256), [(192, 256), (256, 192), (170, 256), (253, 256), (37, 256),
                               (256, 4)]),
    (dict(resize_shorter=256, max_size=[300.0]), [(225, 300), (300, 225), (200, 300),
                                                  (256, 259), (43, 300), (300, 5)]),
    (dict(resize_x=224), [(168, 224), (299, 224), (149, 224), (222, 224), (32, 224),
                          (13176, 224)]),
    (dict(size=[100, 0]), [(100, 133), (100, 75), (100, 150), (100, 101), (100, 700),
                           (100, 2)]),
    (dict(size=[224, 300], mode="not_larger"), [(224, 299), (224, 168), (200, 300),
                                                (224, 226), (43, 300), (224, 4)]),
    (dict(size=[224, 300], mode="not_smaller"), [(225, 300), (400, 300), (224, 336),
                                                 (297, 300), (224, 1568), (17647, 300)]),
    (dict(size=[224, 300], mode="not_smaller", max_size=[250, 1000]),
     [(225, 300), (250, 188), (224, 336), (250, 253), (143, 1000), (250, 4)]),
    (dict(resize_x=224, mode="stretch"), [(375, 224), (500, 224), (333, 224), (100, 224),
                                          (1, 224), (1000, 224)]),
    (dict(resize_x=300, max_size=[200.0]), [(200, 200), (200, 200), (200, 200), (200, 200),
                                            (43, 200), (200, 200)]),
    (dict(resize_y=-100), [(100, 133), (100, 75), (100, 150), (100, 101), (100, 700),
                           (100, 2)]),
    (dict(size=[224.5, 100.4]), [(225, 100)] * 6),
    (dict(resize_shorter=0.3), [(1, 1), (1, 1), (1, 1), (1, 1), (1, 2), (18, 1)]),
]


@pytest.mark.parametrize("kwargs,expected", SIZE_CASES, ids=[str(c[0]) for c in SIZE_CASES])
def test_output_size_matches_dali(kwargs, expected):
    for shape, want in zip(SHAPES, expected, strict=True):
        g = G.resize_output_size(shape, **kwargs)
        assert (g.out_h, g.out_w) == want, (shape, kwargs)


def test_roi_sizes_follow_the_roi_extent():
    g = G.resize_output_size((375, 500), size=[0, 50], roi_start=[10, 20], roi_end=[110, 70])
    assert (g.out_h, g.out_w) == (100, 50)
    g = G.resize_output_size((375, 500), resize_shorter=64, roi_start=[0.1, 0.2],
                             roi_end=[0.6, 0.3], roi_relative=True)
    assert (g.out_h, g.out_w) == (240, 64)


def test_subpixel_scale_widens_the_source_window_about_its_center():
    g = G.resize_output_size((100, 100), size=[10.5, 10.5])
    assert (g.out_h, g.out_w) == (11, 11)
    # The scale stays 100 / 10.5: the window grows to 11 * 100 / 10.5, centered.
    assert g.hi_x - g.lo_x == pytest.approx(11 * 100 / 10.5, rel=1e-6)
    assert (g.lo_x + g.hi_x) / 2 == pytest.approx(50.0)
    g = G.resize_output_size((100, 100), size=[10.5, 10.5], subpixel_scale=False)
    assert (g.lo_x, g.hi_x) == (0.0, 100.0)


# -- resampling against independent references ------------------------------------------------


def _reference_resize(img: np.ndarray, out_hw: tuple[int, int]) -> np.ndarray:
    """Separable triangle-filter resize (radius max(1, in/out)), pixel centers, float64."""
    def axis(n_in: int, n_out: int) -> np.ndarray:
        scale = n_in / n_out
        radius = max(1.0, scale)
        weights = np.zeros((n_out, n_in))
        for i in range(n_out):
            center = (i + 0.5) * scale - 0.5
            for j in range(math.floor(center - radius), math.ceil(center + radius) + 1):
                wgt = max(0.0, 1 - abs(j - center) / radius)
                weights[i, min(max(j, 0), n_in - 1)] += wgt
            weights[i] /= weights[i].sum()
        return weights

    wy, wx = axis(img.shape[0], out_hw[0]), axis(img.shape[1], out_hw[1])
    return np.einsum("oh,hwc,pw->opc", wy, img.astype(np.float64), wx)


@pytest.mark.parametrize("out_hw", [(60, 80), (37, 113), (150, 170), (240, 33)])
def test_linear_resize_matches_triangle_filter_reference(out_hw):
    img = _smooth(97, 131)
    got = run_op(fn.resize, [img], size=list(out_hw))[0]
    want = _reference_resize(img, out_hw)
    assert got.shape == (*out_hw, 3) and got.dtype == np.uint8
    assert np.abs(got - want).max() <= 1.0  # rounding only


def test_upscale_linear_matches_opencv_bilinear():
    cv2 = pytest.importorskip("cv2")
    img = _smooth(40, 50)
    got = run_op(fn.resize, [img], size=[97, 123])[0]
    want = cv2.resize(img, (123, 97), interpolation=cv2.INTER_LINEAR)
    assert np.abs(got.astype(int) - want).max() <= 1  # OpenCV's fixed-point weights


def test_nearest_picks_the_pixel_under_each_output_center():
    img = np.arange(6 * 9, dtype=np.uint8).reshape(6, 9, 1)
    got = run_op(fn.resize, [img], size=[4, 4], interp_type=types.INTERP_NN)[0]
    rows = np.floor((np.arange(4) + 0.5) * 6 / 4).astype(int)
    cols = np.floor((np.arange(4) + 0.5) * 9 / 4).astype(int)
    np.testing.assert_array_equal(got, img[rows][:, cols])


def test_antialias_off_samples_without_widening():
    img = _smooth(64, 64)
    sharp = run_op(fn.resize, [img], size=[16, 16], antialias=False)[0]
    # Factor 4 without antialiasing: bilinear between the two pixels around 4i + 1.5.
    want = img[1::4, 1::4].astype(float) * 0.25 + img[2::4, 1::4] * 0.25 + \
        img[1::4, 2::4] * 0.25 + img[2::4, 2::4] * 0.25
    assert np.abs(sharp - want).max() <= 1.0


def test_float_output_keeps_fractions():
    img = _smooth(30, 30)
    f = run_op(fn.resize, [img], size=[20, 20], dtype=types.FLOAT)[0]
    u = run_op(fn.resize, [img], size=[20, 20])[0]
    assert f.dtype == np.float32
    np.testing.assert_array_equal(np.floor(f + 0.5).astype(np.uint8), u)


def test_negative_size_and_reversed_roi_flip():
    img = _smooth(30, 40)
    plain = run_op(fn.resize, [img], size=[20, 25])[0]
    flipped = run_op(fn.resize, [img], resize_x=-25.0, resize_y=20.0)[0]
    np.testing.assert_array_equal(flipped, plain[:, ::-1])
    roi = run_op(fn.resize, [img], size=[20, 25], roi_start=[30.0, 0.0], roi_end=[0.0, 40.0])[0]
    np.testing.assert_array_equal(roi, plain[::-1])


def test_roi_at_scale_one_is_a_crop():
    img = _smooth(50, 60)
    got = run_op(fn.resize, [img], size=[20, 30], roi_start=[10.0, 5.0], roi_end=[30.0, 35.0])[0]
    np.testing.assert_array_equal(got, img[10:30, 5:35])


@pytest.mark.parametrize("layout,make", [
    ("CHW", lambda a: a.transpose(2, 0, 1)),
    ("FHWC", lambda a: np.stack([a, a[::-1]])),
    ("FCHW", lambda a: np.stack([a, a[::-1]]).transpose(0, 3, 1, 2)),
    ("CFHW", lambda a: np.stack([a, a[::-1]]).transpose(3, 0, 1, 2)),
    ("HW", lambda a: a[..., 0]),
])
def test_layouts_and_sequences_resize_like_hwc(layout, make):
    img = _smooth(33, 47)
    want = run_op(fn.resize, [img], resize_shorter=20.0)[0]
    want2 = run_op(fn.resize, [np.ascontiguousarray(img[::-1])], resize_shorter=20.0)[0]
    got = run_op(fn.resize, [np.ascontiguousarray(make(img))], layout=layout,
                 resize_shorter=20.0)[0]
    expected = {"CHW": want.transpose(2, 0, 1), "FHWC": np.stack([want, want2]),
                "FCHW": np.stack([want, want2]).transpose(0, 3, 1, 2),
                "CFHW": np.stack([want, want2]).transpose(3, 0, 1, 2),
                "HW": run_op(fn.resize, [np.ascontiguousarray(img[..., :1])],
                             resize_shorter=20.0)[0][..., 0]}[layout]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.float32])
def test_other_input_types_keep_their_type(dtype):
    img = (_smooth(20, 30).astype(np.float64) * 3 - 100).astype(dtype)
    got = run_op(fn.resize, [img], size=[10, 15], interp_type=types.INTERP_CUBIC)[0]
    assert got.dtype == dtype and got.shape == (10, 15, 3)


def test_per_sample_sizes_make_ragged_batches():
    imgs = [_smooth(30, 40), _smooth(50, 20, seed=1)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        sizes = fn.external_source(source=lambda: [np.array([10, 12], np.float32),
                                                   np.array([7, 0], np.float32)])
        return fn.resize(x, size=sizes)

    p = pipe()
    p.build()
    out = p.run()[0]
    assert [np.array(s).shape for s in out] == [(10, 12, 3), (7, 3, 3)]


def test_save_attrs_outputs_input_size():
    out, attrs = run_op(fn.resize, [_smooth(30, 40), _smooth(12, 9)], size=[5, 5],
                        save_attrs=True)
    assert [a.tolist() for a in attrs] == [[30, 40], [12, 9]]
    assert attrs[0].dtype == np.int32


@pytest.mark.parametrize("kwargs,match", [
    (dict(), "give exactly one of"),
    (dict(size=[4, 4], resize_x=3.0), "give exactly one of"),
    (dict(resize_shorter=3.0, mode="not_larger"), "'mode' cannot be combined"),
    (dict(size=[4, 4], roi_start=[1.0, 1.0]), "'roi_start' and 'roi_end' go together"),
    (dict(size=[4, 4, 4]), "'size' must have 1 or 2 values"),
    (dict(size=[4, 4], mode="fit"), "'mode' must be one of"),
])
def test_bad_size_arguments_are_rejected_at_the_call(kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        run_op(fn.resize, [_smooth(8, 8)], **kwargs)


def test_dtype_other_than_input_or_float_is_rejected():
    with pytest.raises(Exception, match="'dtype' must be the input type"):
        run_op(fn.resize, [_smooth(8, 8)], size=[4, 4], dtype=types.INT16)


# -- resize_crop_mirror and random_resized_crop -----------------------------------------------


@pytest.mark.parametrize("kwargs", [
    dict(resize_shorter=40.0, crop=[30.0, 30.0]),
    dict(size=[50.0, 70.0], crop=[20.0, 40.0], crop_pos_x=0.1, crop_pos_y=0.9, mirror=1),
    dict(resize_x=45.0, crop_h=10.0, crop_w=44.0, rounding="truncate", crop_pos_x=0.3),
])
def test_resize_crop_mirror_equals_resize_then_crop_then_flip(kwargs):
    img = _smooth(60, 80)
    got = run_op(fn.resize_crop_mirror, [img], **kwargs)[0]
    size_kw = {k: v for k, v in kwargs.items() if k in ("resize_shorter", "size", "resize_x")}
    full = run_op(fn.resize, [img], **size_kw)[0]
    crop = kwargs.get("crop") or [kwargs["crop_h"], kwargs["crop_w"]]
    ch, cw = int(crop[0]), int(crop[1])
    rnd = np.trunc if kwargs.get("rounding") == "truncate" else lambda v: np.floor(v + 0.5)
    y = int(rnd(kwargs.get("crop_pos_y", 0.5) * (full.shape[0] - ch)))
    x = int(rnd(kwargs.get("crop_pos_x", 0.5) * (full.shape[1] - cw)))
    want = full[y:y + ch, x:x + cw]
    if kwargs.get("mirror"):
        want = want[:, ::-1]
    assert got.shape == want.shape
    assert np.abs(got.astype(int) - want).max() <= 1  # one resampling instead of two steps


def test_random_resized_crop_makes_the_requested_size_and_depends_on_the_seed():
    imgs = [_smooth(60, 80), _smooth(90, 50, seed=2)]
    out = run_op(fn.random_resized_crop, imgs, size=[24, 32])
    assert [o.shape for o in out] == [(24, 32, 3)] * 2
    again = run_op(fn.random_resized_crop, imgs, size=[24, 32])
    assert all(np.array_equal(a, b) for a, b in zip(out, again, strict=True))


def test_random_resized_crop_of_the_whole_image_is_a_resize():
    img = _smooth(40, 60)
    got = run_op(fn.random_resized_crop, [img], size=[20, 20], random_area=[1.0, 1.0],
                 random_aspect_ratio=[1.5, 1.5])[0]
    np.testing.assert_array_equal(got, run_op(fn.resize, [img], size=[20, 20])[0])


def test_random_resized_crop_rejects_reversed_ranges():
    with pytest.raises(ArgumentError, match="'random_aspect_ratio' must be \\[lo, hi\\]"):
        run_op(fn.random_resized_crop, [_smooth(8, 8)], size=[4, 4],
               random_aspect_ratio=[2.0, 1.0])


def test_image_and_mask_share_a_random_crop_window_through_roi_nodes():
    """Segmentation: one random window (ROI nodes) resizes an image (LINEAR) and its mask
    (NN) onto the same grid."""
    mask = np.zeros((60, 80, 1), np.uint8)
    mask[10:40, 20:70] = 3
    image = np.repeat(mask * 50, 3, axis=2)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=21)
    def pipe():
        img = fn.external_source(source=lambda: [image] * 4, layout="HWC")
        msk = fn.external_source(source=lambda: [mask] * 4, layout="HWC")
        start = fn.random.uniform(range=(0.0, 0.4), shape=[2])
        end = start + 0.6
        kw = dict(size=[32, 32], roi_start=start, roi_end=end, roi_relative=True)
        return fn.resize(img, **kw), fn.resize(msk, interp_type=types.INTERP_NN, **kw)

    p = pipe()
    p.build()
    imgs, masks = (list(map(np.array, tl)) for tl in p.run())
    assert len({m.tobytes() for m in masks}) > 1  # the windows differ per sample
    for im, m in zip(imgs, masks, strict=True):
        assert set(np.unique(m)) <= {0, 3}
        flat = (im[..., 0] == 0) | (im[..., 0] == 150)  # pixels away from label edges
        np.testing.assert_array_equal(im[..., 0][flat], m[..., 0][flat] * 50)
