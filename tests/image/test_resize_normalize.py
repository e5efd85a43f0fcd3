"""The fused resample-and-normalize kernel equals resize_hwc followed by the
crop_mirror_normalize kernel, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from stoker.kernels.cpu.image import crop as C
from stoker.kernels.cpu.image import resize as R
from stoker.kernels.cpu.image import resize_geometry as G
from stoker.kernels.cpu.image.resize_normalize import normalize_stage, resample_normalized

MEAN = np.array([123.7, 116.3, 103.5])
STD = np.array([58.4, 57.1, 57.4])
RNG = np.random.default_rng(4)


def _image(h: int, w: int, dtype) -> np.ndarray:
    img = RNG.integers(0, 256, (h, w, 3)).astype(np.uint8)
    return img if dtype == np.uint8 else (img / 255.0).astype(np.float32)


@pytest.mark.parametrize("shape,out", [((300, 280), (224, 224)), ((90, 70), (224, 300)),
                                       ((333, 500), (256, 384))])
@pytest.mark.parametrize("mirror", [False, True])
def test_window_taps_resample_that_window_of_the_whole_output(shape, out, mirror):
    img = _image(*shape, np.uint8)
    geom = G.ResizeGeometry(*out, 0.0, 0.0, float(shape[0]), float(shape[1]))
    whole = R.resize_hwc(img, geom)
    y, x, h, w = 17, 9, out[0] // 2, out[1] // 3
    taps = R.resize_taps(img.shape, geom).window(y, x, h, w, mirror)
    want = whole[y:y + h, x:x + w][:, ::-1] if mirror else whole[y:y + h, x:x + w]
    np.testing.assert_array_equal(R.resample_taps(img, taps, np.dtype(np.uint8)), want)
    sy, sx, rh, rw = taps.source_region()  # on the region alone, shifted: the same
    region = np.ascontiguousarray(img[sy:sy + rh, sx:sx + rw])
    np.testing.assert_array_equal(
        R.resample_taps(region, taps.shifted(sy, sx), np.dtype(np.uint8)), want)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("channels_first", [True, False])
@pytest.mark.parametrize("out_dtype", [np.float32, np.float16, np.int8])
@pytest.mark.parametrize("interp", [G.LINEAR, G.CUBIC, G.NN])
def test_fused_kernel_equals_resize_then_crop_mirror_normalize(dtype, channels_first,
                                                               out_dtype, interp):
    for k, (shape, out) in enumerate([((300, 280), (224, 224)), ((120, 170), (150, 200))]):
        img = _image(*shape, dtype)
        geom = G.ResizeGeometry(*out, 0.0, 0.0, float(shape[0]), float(shape[1]))
        y, x, h, w = 3, 5, out[0] - 20, out[1] - 30
        mirror = bool(k % 2)
        scale, shift = (1.0, 0.0) if dtype == np.uint8 else (64.0, 128.0)
        resized = R.resize_hwc(img, geom, interp, interp)
        want = C.crop_mirror_normalize(resized[None], np.array([y]), np.array([x]), h, w,
                                       np.array([mirror]), MEAN, STD, scale, shift,
                                       np.zeros(3), False, channels_first, out_dtype)[0]
        norm = normalize_stage(MEAN, STD, scale, shift, channels_first, out_dtype,
                               dtype == np.uint8)
        taps = R.resize_taps(img.shape, geom, interp, interp).window(y, x, h, w, mirror)
        got = resample_normalized(img, taps, norm)
        got = got if got.dtype == out_dtype else (
            got.astype(out_dtype) if norm.table is not None else C.convert(got, out_dtype))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_remembered_taps_keep_a_share_of_a_cycle_larger_than_the_budget():
    # A validation epoch visits the same sizes in the same order. Least-recently-used
    # eviction would drop each entry just before its next use and never hit; the memory
    # must keep hitting (19% here for a memory half the cycle), and stay in budget.
    made = []

    def entry(n: int) -> R.AxisTaps:
        made.append(n)
        return R.AxisTaps(np.zeros((n, 1), np.intp), np.zeros((n, 1), np.float32), 0, 1, None)

    memory = R._Remembered(budget=50 * 12 * 100)  # 50 entries of 100 taps (12 bytes each)
    for _ in range(20):
        for key in range(100):  # twice the budget, in a cycle
            got = memory.get(("axis", key), lambda: entry(100))
            assert got.idx.shape == (100, 1)
            assert memory.used <= memory.budget
    hits = 20 * 100 - len(made)
    assert hits >= 0.1 * 20 * 100
    assert len(memory.items) == len(memory.keys) == memory.used // 1200


@pytest.mark.parametrize("shape", [(3, 5, 13), (2, 17, 9), (1, 8, 8), (3, 224, 300),
                                   (3, 0, 4)])
def test_vector_plane_transpose_equals_numpy(shape):
    from stoker.kernels.cpu.image.transpose_loops import transpose_planes

    src = RNG.random(shape, dtype=np.float32)
    dst = np.full(shape[:1] + shape[:0:-1], np.nan, np.float32)
    transpose_planes(src, dst)
    np.testing.assert_array_equal(dst, src.transpose(0, 2, 1))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_one_call_chw_path_on_views_and_both_pass_orders(dtype):
    # The float32 CHW output is made by one native call reading the source in place:
    # windows of a larger image, a flipped view (copied first) and both pass orders give
    # the unfused chain's values.
    big = _image(400, 420, dtype)
    orders = set()
    for k, (view, out) in enumerate([(big[13:313, 21:301], (224, 224)),
                                     (big[5:125, 3:173], (150, 200)),
                                     (big[::-1, 7:331], (201, 97)),
                                     (big[40:97, 50:69], (230, 61))]):
        geom = G.ResizeGeometry(*out, 0.0, 0.0, float(view.shape[0]), float(view.shape[1]))
        y, x, h, w = 2, 3, out[0] - 9, out[1] - 7
        mirror = bool(k % 2)
        want = C.crop_mirror_normalize(R.resize_hwc(view, geom)[None], np.array([y]),
                                       np.array([x]), h, w, np.array([mirror]), MEAN, STD,
                                       1.0, 0.0, np.zeros(3), False, True, np.float32)[0]
        taps = R.resize_taps(view.shape, geom).window(y, x, h, w, mirror)
        orders.add(taps.rows_first)
        norm = normalize_stage(MEAN, STD, 1.0, 0.0, True, np.float32, dtype == np.uint8)
        np.testing.assert_array_equal(resample_normalized(view, taps, norm), want)
    assert orders == {True, False}


def test_last_pass_of_every_filter_width_equals_the_unfused_chain():
    # The train pipeline's last pass (uint8 resize, normalized with no shift, CHW float32)
    # has a loop per filter width; each gives the unfused chain's values, and so do the
    # widths the general loop takes (above 4), and the general loop with a shift.
    widths = set()
    for k, ((ih, iw), (oh, ow)) in enumerate([((224, 224), (224, 224)), ((300, 280), (224, 224)),
                                              ((620, 400), (224, 224)), ((400, 620), (224, 224)),
                                              ((420, 470), (224, 224)), ((900, 980), (200, 224)),
                                              ((80, 90), (224, 224))]):
        img = _image(ih, iw, np.uint8)
        geom = G.ResizeGeometry(oh, ow, 0.0, 0.0, float(ih), float(iw))
        taps = R.resize_taps(img.shape, geom).window(1, 2, oh - 3, ow - 5, bool(k % 2))
        widths.add((taps.x if taps.rows_first else taps.y).idx.shape[1])  # the last pass's
        resized = R.resize_hwc(img, geom)
        for shift in (0.0, 3.0):
            want = C.crop_mirror_normalize(resized[None], np.array([1]), np.array([2]), oh - 3,
                                           ow - 5, np.array([bool(k % 2)]), MEAN, STD, 1.0,
                                           shift, np.zeros(3), False, True, np.float32)[0]
            norm = normalize_stage(MEAN, STD, 1.0, shift, True, np.float32, True)
            np.testing.assert_array_equal(resample_normalized(img, taps, norm), want)
    assert {2, 3, 4, 5, 9} <= widths


@pytest.mark.parametrize("interp", [G.LINEAR, G.CUBIC, G.LANCZOS3, G.GAUSSIAN, G.NN])
@pytest.mark.parametrize("antialias", [True, False])
def test_window_taps_equal_the_windowed_whole_taps(interp, antialias):
    # Computed for the window alone (random crops' geometries do not repeat), the taps,
    # their spans and the pass order are those of the whole axis's taps cut to the window.
    rng = np.random.default_rng(7)
    for _ in range(60):
        ih, iw = (int(v) for v in rng.integers(20, 500, 2))
        oh, ow = (int(v) for v in rng.integers(8, 300, 2))
        y0, x0 = rng.uniform(-3, 0.4 * ih), rng.uniform(-3, 0.4 * iw)
        geom = G.ResizeGeometry(oh, ow, y0, x0, y0 + rng.uniform(4, ih), x0 + rng.uniform(4, iw))
        h, w = (int(v) for v in rng.integers(1, (oh + 1, ow + 1)))
        y, x = int(rng.integers(0, oh - h + 1)), int(rng.integers(0, ow - w + 1))
        mirror = bool(rng.integers(2))
        want = R.resize_taps((ih, iw), geom, interp, interp, antialias).window(y, x, h, w, mirror)
        got = R.window_taps((ih, iw), geom, interp, interp, antialias, y, x, h, w, mirror)
        assert got.rows_first == want.rows_first and got.nearest == want.nearest
        for g, e in ((got.y, want.y), (got.x, want.x)):
            assert (g.start, g.extent) == (e.start, e.extent)
            np.testing.assert_array_equal(g.idx, e.idx)
            np.testing.assert_array_equal(g.weights, e.weights)
