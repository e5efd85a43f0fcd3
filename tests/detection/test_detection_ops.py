"""Detection operators: rules not covered by the DALI replays, bad input, and the promises
stoker makes beyond DALI (a search that ends, every polygon of a selected mask kept).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from stoker import SampleError, fn, pipeline_def


def run(op, *inputs, batch=None, seed=3, **kw):
    n = batch or len(inputs[0])

    @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=seed)
    def pipe():
        nodes = [fn.external_source(source=(lambda v: (lambda: v))(x)) for x in inputs]
        out = op(*nodes, **kw)
        return tuple(out) if isinstance(out, list | tuple) else out

    p = pipe()
    p.build()
    out = p.run()
    p.close()  # the batch prefetched behind this one must not warn into the next test
    return [[np.array(t) for t in tl] for tl in (out if isinstance(out, tuple) else (out,))]


BOX = [np.array([[0.1, 0.1, 0.4, 0.5]], np.float32)]


# -- random_bbox_crop ---------------------------------------------------------------------------


def test_an_impossible_search_ends_with_the_best_window_and_a_warning():
    # Three disjoint boxes cannot all have IoU >= 0.9 with one window: DALI loops forever.
    boxes = [np.array([[0, 0, 0.2, 0.2], [0.4, 0.4, 0.6, 0.6], [0.8, 0.8, 1, 1]], np.float32)]
    start = time.perf_counter()
    with pytest.warns(RuntimeWarning, match="could not find a valid cropping window .*"
                                            "attempted 10000 times"):
        anchor, shape, out = run(fn.random_bbox_crop, boxes, thresholds=[0.9],
                                 allow_no_crop=False, scaling=[0.3, 1.0],
                                 aspect_ratio=[0.5, 2.0])
    assert time.perf_counter() - start < 30
    assert shape[0].shape == (2,) and 0 < shape[0].max() <= 1


def test_quiet_silences_the_fallback_warning(recwarn):
    boxes = [np.array([[0, 0, 0.2, 0.2], [0.8, 0.8, 1, 1]], np.float32)]
    run(fn.random_bbox_crop, boxes, thresholds=[0.9], allow_no_crop=False,
        total_num_attempts=5, quiet=True)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_sample_without_boxes_takes_its_first_window():
    anchor, shape, out = run(fn.random_bbox_crop, [np.zeros((0, 4), np.float32)] * 4,
                             thresholds=[0.9], allow_no_crop=False, scaling=[0.3, 0.6])
    for s in shape:
        assert 0.3 - 1e-6 <= s.max() <= 0.6 + 1e-6
    assert all(o.shape == (0, 4) for o in out)


def test_windows_are_a_function_of_seed_and_sample():
    boxes = BOX * 6
    kw = dict(scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.0, 0.5],
              num_attempts=10)
    a = run(fn.random_bbox_crop, boxes, seed=1, **kw)
    b = run(fn.random_bbox_crop, boxes, seed=1, **kw)
    c = run(fn.random_bbox_crop, boxes, seed=2, **kw)
    assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a[0], c[0], strict=True))
    assert len({tuple(x) for x in a[0]}) > 1  # samples differ from one another


@pytest.mark.parametrize("boxes, match", [
    (np.array([[0.1, 0.1, 1.2, 0.5]], np.float32), r"box 0 \[0.1.*is out of bounds"),
    (np.array([[-0.1, 0.1, 0.2, 0.5]], np.float32), "out of bounds"),
    (np.array([[0.1, 0.1, 0.2, 0.5]], np.float64), "boxes must be float32"),
    (np.array([0.1, 0.1, 0.2, 0.5], np.float32), r"boxes must be \(N, 4\) or \(N, 6\)"),
])
def test_bad_boxes_name_the_operator_and_the_problem(boxes, match):
    with pytest.raises(SampleError, match=match) as info:
        run(fn.random_bbox_crop, [boxes])
    assert "fn.random_bbox_crop" in str(info.value)


def test_labels_of_another_count_than_the_boxes_are_refused():
    with pytest.raises(SampleError, match=r"labels have shape \(2,\) for 1 boxes"):
        run(fn.random_bbox_crop, BOX, [np.array([1, 2], np.int32)])


def test_labels_rows_and_indices_follow_the_kept_boxes():
    boxes = [np.array([[0.0, 0.0, 0.1, 0.1], [0.45, 0.45, 0.55, 0.55]], np.float32)] * 8
    labels = [np.array([[1, 10], [2, 20]], np.int32)] * 8
    anchor, shape, out, lab, idx = run(fn.random_bbox_crop, boxes, labels,
                                       crop_shape=[50, 50], input_shape=[100, 100],
                                       output_bbox_indices=True, total_num_attempts=20,
                                       quiet=True)
    for j in range(8):
        assert lab[j].shape == (len(idx[j]), 2) and idx[j].dtype == np.int32
        np.testing.assert_array_equal(lab[j], labels[j][idx[j]])


def test_3d_boxes_and_overlap_metric():
    boxes = [np.array([[0.1, 0.2, 0.3, 0.5, 0.6, 0.7]], np.float32)] * 4
    anchor, shape, out = run(fn.random_bbox_crop, boxes, threshold_type="overlap",
                             thresholds=[1.0], scaling=[0.5, 1.0], allow_no_crop=False,
                             num_attempts=100)
    for a, s in zip(anchor, shape, strict=True):
        assert a.shape == s.shape == (3,)
        assert np.all(a <= [0.1, 0.2, 0.3]) and np.all(a + s >= [0.5, 0.6, 0.7])


# -- boxes ------------------------------------------------------------------------------------


def test_bb_flip_and_bbox_paste_reject_bad_boxes():
    with pytest.raises(SampleError, match="multiple of 4 values"):
        run(fn.bb_flip, [np.zeros((1, 5), np.float32)])
    with pytest.raises(SampleError, match="boxes must be float32"):
        run(fn.bbox_paste, [np.zeros((1, 4), np.float64)], ratio=2.0)


def test_bbox_paste_keeps_unit_boxes_inside_the_canvas():
    out = run(fn.bbox_paste, [np.array([[0, 0, 1, 1]], np.float32)], ratio=3.7,
              paste_x=1.0, paste_y=1.0, ltrb=True)[0][0]
    assert out.min() >= 0 and out.max() <= 1
    np.testing.assert_allclose(out, [[1 - 1 / 3.7, 1 - 1 / 3.7, 1, 1]], atol=1e-6)


def test_box_encoder_matches_each_box_to_its_best_anchor_and_outputs_centres():
    anchors = [0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0]
    boxes = [np.array([[0.6, 0.6, 0.9, 1.0]], np.float32)]
    enc, lab = run(fn.box_encoder, boxes, [np.array([5], np.int32)], anchors=anchors)
    np.testing.assert_allclose(enc[0], [[0.25, 0.25, 0.5, 0.5], [0.75, 0.8, 0.3, 0.4]],
                               atol=1e-6)
    assert lab[0].tolist() == [0, 5]
    with pytest.raises(SampleError, match="labels have shape"):
        run(fn.box_encoder, boxes, [np.array([5, 6], np.int32)], anchors=anchors)


def test_bbox_rotate_by_a_right_angle_swaps_the_axes():
    boxes = [np.array([[0.1, 0.2, 0.3, 0.6]], np.float32)]
    out = run(fn.bbox_rotate, boxes, angle=90.0, input_shape=[40, 60])[0][0]
    # Counter-clockwise on screen: x' = y, y' = 1 - x (canvas 40 x 60 becomes 60 x 40).
    np.testing.assert_allclose(out, [[0.2, 0.7, 0.6, 0.9]], atol=1e-5)


# -- segmentation -------------------------------------------------------------------------------


def test_select_masks_keeps_every_polygon_of_a_selected_mask():
    polys = np.array([[0, 0, 3], [1, 3, 6], [0, 6, 9]], np.int32)
    verts = np.arange(18, dtype=np.float32).reshape(9, 2)
    p, v = run(fn.segmentation.select_masks, [np.array([0], np.int32)], [polys], [verts])
    assert p[0].tolist() == [[0, 0, 3], [0, 3, 6]]
    np.testing.assert_array_equal(v[0], np.concatenate([verts[0:3], verts[6:9]]))
    with pytest.raises(SampleError, match="mask_id 4 is not present"):
        run(fn.segmentation.select_masks, [np.array([4], np.int32)], [polys], [verts])


def test_random_object_bbox_joins_pixels_along_axes_only_and_follows_weights():
    m = np.zeros((5, 6), np.int32)
    m[0, 0] = m[1, 1] = 1  # diagonal neighbours: two blobs
    m[3:5, 2:6] = 2
    anchor, shape, cls = run(fn.segmentation.random_object_bbox, [m] * 400,
                             classes=[1, 2], class_weights=[3.0, 1.0], output_class=True)
    boxes = {(tuple(a), tuple(s), int(c)) for a, s, c in zip(anchor, shape, cls, strict=True)}
    assert boxes == {((0, 0), (1, 1), 1), ((1, 1), (1, 1), 1), ((3, 2), (2, 4), 2)}
    share = np.mean([int(c) == 1 for c in cls])
    assert abs(share - 0.75) < 0.08
    with pytest.raises(SampleError, match="unsupported input type float32"):
        run(fn.segmentation.random_object_bbox, [m.astype(np.float32)])


def test_random_mask_pixel_is_uniform_over_the_foreground():
    m = np.zeros((4, 4), np.uint8)
    m[0, 1] = m[2, 3] = m[3, 0] = 1
    pix = run(fn.segmentation.random_mask_pixel, [m] * 600, foreground=1)[0]
    hits = [tuple(p) for p in pix]
    assert set(hits) == {(0, 1), (2, 3), (3, 0)} and pix[0].dtype == np.int64
    counts = np.array([hits.count(k) for k in set(hits)])
    assert counts.min() > 150


def test_roi_random_crop_keeps_the_window_on_the_roi_and_in_the_input():
    @pipeline_def(batch_size=300, num_threads=1, device_id=None, seed=2)
    def pipe():
        return fn.roi_random_crop(crop_shape=[4, 10], roi_start=[2, 5], roi_end=[10, 8],
                                  in_shape=[20, 12])

    p = pipe()
    p.build()
    starts = np.stack([np.array(t) for t in p.run()[0]])
    assert starts.dtype == np.int64
    assert set(starts[:, 0]) == set(range(2, 7))  # ROI longer than the window: inside it
    assert set(starts[:, 1]) == {0, 1, 2}  # shorter: holds it, inside the 12 columns
