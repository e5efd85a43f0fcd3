"""rotate and warp_affine: DALI's canvas rules (measured on DALI 2.4), exact cases (90-degree
turns, integer shifts), the forward/inverse map, and shared parameters for image + mask."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError
from stoker.kernels.cpu.image import warp as K


def _img(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def run_op(op, samples: list, layout: str = "HWC", **kwargs) -> list:
    @pipeline_def(batch_size=len(samples), num_threads=2, device_id=None, seed=5)
    def pipe():
        x = fn.external_source(source=lambda: samples, layout=layout)
        return op(x, **kwargs)

    p = pipe()
    p.build()
    return [np.array(s) for s in p.run()[0]]


# (angle, (h, w)) -> output (h, w), measured with DALI 2.4's fn.rotate.
ROTATED = [
    (10, (40, 60), (50, 68)), (10, (41, 60), (51, 68)), (10, (1, 5), (3, 7)),
    (10, (100, 3), (100, 21)), (30, (40, 60), (66, 72)), (30, (41, 61), (67, 75)),
    (30, (100, 3), (90, 53)), (45, (41, 60), (72, 73)), (45, (41, 61), (73, 73)),
    (90, (41, 60), (60, 41)), (135, (41, 60), (73, 72)), (180, (41, 61), (41, 61)),
    (-30, (41, 60), (67, 74)), (200, (40, 60), (60, 72)), (200, (100, 3), (96, 39)),
    (1, (40, 60), (42, 62)), (0, (1, 5), (1, 5)),
]


@pytest.mark.parametrize("angle,in_hw,out_hw", ROTATED)
def test_rotated_canvas_matches_dali(angle, in_hw, out_hw):
    assert K.rotated_size(in_hw, angle) == out_hw


def test_rotate_by_90_is_a_counter_clockwise_quarter_turn():
    img = _img(5, 8)
    np.testing.assert_array_equal(run_op(fn.rotate, [img], angle=90.0)[0], np.rot90(img))
    np.testing.assert_array_equal(run_op(fn.rotate, [img], angle=180.0)[0], img[::-1, ::-1])


def test_rotate_keep_size_and_explicit_size():
    img = _img(20, 30)
    assert run_op(fn.rotate, [img], angle=30.0, keep_size=True)[0].shape == (20, 30, 3)
    assert run_op(fn.rotate, [img], angle=30.0, size=[11.0, 17.0])[0].shape == (11, 17, 3)


def test_rotate_fill_value_fills_the_corners_and_default_repeats_edges():
    img = np.full((20, 20, 1), 100, np.uint8)
    filled = run_op(fn.rotate, [img], angle=45.0, fill_value=7.0)[0]
    assert filled[0, 0, 0] == 7 and filled[filled.shape[0] // 2, filled.shape[1] // 2, 0] == 100
    edged = run_op(fn.rotate, [img], angle=45.0)[0]
    assert (edged == 100).all()


def test_warp_identity_and_integer_shift():
    img = _img(9, 11)
    ident = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    np.testing.assert_array_equal(run_op(fn.warp_affine, [img], matrix=ident)[0], img)
    # Output (x, y) reads input (x + 2, y - 1): a shift left by 2 and down by 1.
    shifted = run_op(fn.warp_affine, [img], matrix=[1.0, 0.0, 2.0, 0.0, 1.0, -1.0],
                     fill_value=0.0)[0]
    want = np.zeros_like(img)
    want[1:, :-2] = img[:-1, 2:]
    np.testing.assert_array_equal(shifted, want)


def test_warp_forward_map_equals_inverse_of_the_inverse():
    img = _img(30, 40)
    m = np.array([[0.9, 0.2, 3.0], [-0.1, 1.1, -2.0]])
    inv = np.linalg.inv(np.vstack([m, [0, 0, 1]]))[:2]
    a = run_op(fn.warp_affine, [img], matrix=m.ravel().tolist(), inverse_map=False,
               fill_value=0.0)[0]
    b = run_op(fn.warp_affine, [img], matrix=inv.ravel().tolist(), fill_value=0.0)[0]
    assert np.abs(a.astype(int) - b).max() <= 1


def test_warp_bilinear_matches_opencv_on_pixel_centers():
    cv2 = pytest.importorskip("cv2")
    img = _img(30, 40)
    m = np.array([[0.9, 0.2, 3.0], [-0.1, 1.1, -2.0]])
    got = run_op(fn.warp_affine, [img], matrix=m.ravel().tolist(), fill_value=0.0)[0]
    # OpenCV samples at M @ (x, y); the same map on pixel centers shifts t by M @ 0.5 - 0.5.
    t = m[:, :2] @ [0.5, 0.5] + m[:, 2] - 0.5
    cvm = np.concatenate([m[:, :2], t[:, None]], axis=1)
    want = cv2.warpAffine(img, cvm, (40, 30), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    assert np.abs(got.astype(int) - want).max() <= 2  # OpenCV quantizes to 1/32 pixel
    assert np.abs(got.astype(int) - want).mean() < 0.2


def test_warp_matrix_as_second_input_and_per_frame_angles():
    imgs = [_img(6, 7), _img(6, 7, seed=1)]
    mats = [np.array([[1, 0, 1], [0, 1, 0]], np.float32), np.eye(2, 3, dtype=np.float32)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        m = fn.external_source(source=lambda: mats)
        return fn.warp_affine(x, m)

    p = pipe()
    p.build()
    out = [np.array(s) for s in p.run()[0]]
    np.testing.assert_array_equal(out[1], imgs[1])
    np.testing.assert_array_equal(out[0][:, :-1], imgs[0][:, 1:])
    seq = np.stack([_img(8, 8), _img(8, 8, seed=3)])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def frames_pipe():
        x = fn.external_source(source=lambda: [seq], layout="FHWC")
        angles = fn.external_source(source=lambda: [np.array([0.0, 90.0], np.float32)])
        return fn.rotate(x, angle=angles)

    p = frames_pipe()
    p.build()
    frames = np.array(p.run()[0][0])
    np.testing.assert_array_equal(frames[0], seq[0])
    np.testing.assert_array_equal(frames[1], np.rot90(seq[1]))


def test_image_and_mask_share_a_random_angle():
    """Segmentation: one angle node drives the image (LINEAR) and its mask (NN) alike."""
    mask = np.zeros((40, 50, 1), np.uint8)
    mask[5:20, 10:35] = 1
    mask[25:38, 30:45] = 2
    image = (mask * 100).astype(np.uint8)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=11)
    def pipe():
        img = fn.external_source(source=lambda: [image] * 4, layout="HWC")
        msk = fn.external_source(source=lambda: [mask] * 4, layout="HWC")
        angle = fn.random.uniform(range=(-45.0, 45.0))
        return (fn.rotate(img, angle=angle, fill_value=0.0),
                fn.rotate(msk, angle=angle, interp_type=types.INTERP_NN, fill_value=0.0))

    p = pipe()
    p.build()
    imgs, masks = (list(map(np.array, tl)) for tl in p.run())
    shapes = {m.shape for m in masks}
    assert len(shapes) > 1  # different angles, different canvases
    for im, m in zip(imgs, masks, strict=True):
        assert im.shape == m.shape
        assert set(np.unique(m)) <= {0, 1, 2}  # NN never invents labels
        # Away from label edges the image is the mask scaled by 100.
        inner = (im % 100 == 0) & (im > 0)
        np.testing.assert_array_equal(im[inner], m[inner] * 100)
        assert inner.sum() > 0.5 * (m > 0).sum()


@pytest.mark.parametrize("op,kwargs,match", [
    (fn.rotate, dict(angle=1.0, interp_type=types.INTERP_CUBIC), "'interp_type' must be one of"),
    (fn.rotate, dict(angle=1.0, size=[3.0]), "'size' must be (height, width)"),
    (fn.warp_affine, dict(matrix=[1.0, 2.0]), "'matrix' must have 6 values"),
])
def test_bad_arguments_are_rejected(op, kwargs, match):
    with pytest.raises(ArgumentError, match=match.replace("(", r"\(").replace(")", r"\)")):
        run_op(op, [_img(4, 4)], **kwargs)


def test_warp_without_matrix_fails_at_run_time():
    with pytest.raises(Exception, match="give the transform as the 'matrix' argument"):
        run_op(fn.warp_affine, [_img(4, 4)])


def test_float_loops_match_opencv_path_for_other_channel_counts():
    """Five channels take the numba loops, three take OpenCV: same pixels either way."""
    img = _img(25, 31, c=5)
    m = K.rotation_matrix((25, 31), (33, 37), 23.0)
    for interp, fill in ((K.LINEAR, None), (K.LINEAR, 9.0), (K.NN, 9.0)):
        five = K.warp_hwc(img, m, (33, 37), interp, fill)
        three = K.warp_hwc(np.ascontiguousarray(img[..., :3]), m, (33, 37), interp, fill)
        diff = np.abs(five[..., :3].astype(int) - three)
        assert diff.max() <= 1 and (diff > 0).mean() < 0.01
