"""fn.transforms.*, coord_transform and coord_flip against hand-computed matrices (values
checked against DALI 2.4's outputs) and numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError


def _returning(batch: list):
    return lambda: batch


def run(make, inputs: tuple = (), batch: int = 1) -> list:
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=3)
    def pipe():
        nodes = [fn.external_source(source=_returning(v)) for v in inputs]
        return make(*nodes)

    p = pipe()
    p.build()
    out = p.run()
    return [np.array(s) for s in (out[0] if isinstance(out, tuple | list) else out)]


def one(make, *inputs) -> np.ndarray:
    return run(make, tuple([x] for x in inputs))[0]


def test_translation_scale_rotation_shear_crop_matrices():
    np.testing.assert_allclose(one(lambda: fn.transforms.translation(offset=[3.0, 4.0])),
                               [[1, 0, 3], [0, 1, 4]])
    np.testing.assert_allclose(
        one(lambda: fn.transforms.scale(scale=[2.0, 3.0], center=[10.0, 20.0])),
        [[2, 0, -10], [0, 3, -40]])
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    np.testing.assert_allclose(
        one(lambda: fn.transforms.rotation(angle=30.0, center=[10.0, 20.0])),
        [[c, -s, 10 - (c * 10 - s * 20)], [s, c, 20 - (s * 10 + c * 20)]], atol=1e-5)
    np.testing.assert_allclose(
        one(lambda: fn.transforms.shear(shear=[0.5, 0.25], center=[10.0, 20.0])),
        [[1, 0.5, -10], [0.25, 1, -2.5]])
    np.testing.assert_allclose(one(lambda: fn.transforms.shear(angles=[30.0, 10.0])),
                               [[1, math.tan(math.radians(30)), 0],
                                [math.tan(math.radians(10)), 1, 0]], atol=1e-6)
    np.testing.assert_allclose(
        one(lambda: fn.transforms.crop(from_start=[10.0, 20.0], from_end=[110.0, 70.0])),
        [[0.01, 0, -0.1], [0, 0.02, -0.4]], atol=1e-7)


def test_matrix_shapes_follow_the_arguments():
    assert one(lambda: fn.transforms.translation(offset=[1.0, 2.0, 3.0])).shape == (3, 4)
    assert one(lambda: fn.transforms.scale(scale=[2.0])).shape == (1, 2)
    assert one(lambda: fn.transforms.scale(scale=[2.0], ndim=2)).tolist() == \
        [[2, 0, 0], [0, 2, 0]]
    assert one(lambda: fn.transforms.crop()).tolist() == [[1, 0]]
    r3 = one(lambda: fn.transforms.rotation(angle=30.0, axis=[0.0, 0.0, 1.0]))
    np.testing.assert_allclose(r3[:2, :2], one(lambda: fn.transforms.rotation(angle=30.0))[:, :2],
                               atol=1e-6)
    assert one(lambda: fn.transforms.translation(offset=[1.0])).dtype == np.float32


def test_crop_absolute_orders_start_and_end():
    a = one(lambda: fn.transforms.crop(from_start=[110.0, 20.0], from_end=[10.0, 70.0],
                                       absolute=True))
    b = one(lambda: fn.transforms.crop(from_start=[10.0, 20.0], from_end=[110.0, 70.0]))
    np.testing.assert_allclose(a, b)


def test_chaining_and_combine_apply_in_listed_order():
    t = lambda: fn.transforms.translation(offset=[3.0, 4.0])  # noqa: E731
    after = one(lambda: fn.transforms.scale(t(), scale=[2.0, 3.0]))
    before = one(lambda: fn.transforms.scale(t(), scale=[2.0, 3.0], reverse_order=True))
    np.testing.assert_allclose(after, [[2, 0, 6], [0, 3, 12]])  # translate, then scale
    np.testing.assert_allclose(before, [[2, 0, 3], [0, 3, 4]])  # scale, then translate
    combined = one(lambda: fn.transforms.combine(
        t(), fn.transforms.scale(scale=[2.0, 3.0]), fn.transforms.rotation(angle=90.0)))
    # translate (3, 4) -> scale -> (6, 12) -> rotate 90: (x, y) -> (-y, x)
    np.testing.assert_allclose(combined, [[0, -3, -12], [2, 0, 6]], atol=1e-5)
    rev = one(lambda: fn.transforms.combine(t(), fn.transforms.scale(scale=[2.0, 3.0]),
                                            reverse_order=True))
    np.testing.assert_allclose(rev, before)


def test_per_sample_angles():
    out = run(lambda a: fn.transforms.rotation(angle=a),
              ([np.float32(90), np.float32(0)],), batch=2)
    np.testing.assert_allclose(out[0], [[0, -1, 0], [1, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(out[1], [[1, 0, 0], [0, 1, 0]])


PTS = np.array([[1, 2], [3, 4], [0.5, 0.25]], np.float32)


def test_coord_transform_forms_of_m_t_and_mt():
    np.testing.assert_allclose(one(lambda p: fn.coord_transform(p, M=[1.0, 2.0, 3.0, 4.0],
                                                                 T=[1.0, 2.0]), PTS),
                               PTS @ np.array([[1, 2], [3, 4]]).T + [1, 2])
    np.testing.assert_allclose(one(lambda p: fn.coord_transform(p, M=[2.0]), PTS), PTS * 2)
    rect = one(lambda p: fn.coord_transform(p, M=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), PTS)
    np.testing.assert_allclose(rect, PTS @ np.arange(1, 7).reshape(3, 2).T)
    np.testing.assert_allclose(one(lambda p: fn.coord_transform(p, T=[10.0]), PTS), PTS + 10)
    mt = np.array([[1, 0, 5], [0, 2, 6]], np.float32)
    np.testing.assert_allclose(one(lambda p, m: fn.coord_transform(p, MT=m), PTS, mt),
                               PTS @ mt[:, :2].T + mt[:, 2])
    np.testing.assert_allclose(one(lambda p: fn.coord_transform(p, MT=[2.0]), PTS), PTS * 2)


def test_coord_transform_with_a_transforms_matrix_maps_points_like_the_matrix():
    mt = one(lambda: fn.transforms.rotation(angle=90.0, center=[1.0, 1.0]))
    got = one(lambda p: fn.coord_transform(p, MT=fn.transforms.rotation(
        angle=90.0, center=[1.0, 1.0])), PTS)
    np.testing.assert_allclose(got, PTS @ mt[:, :2].T + mt[:, 2], atol=1e-5)


def test_coord_transform_types():
    ints = (PTS * 100 + 1).astype(np.int32)
    out = one(lambda p: fn.coord_transform(p, M=[1.5]), ints)
    assert out.dtype == np.float32
    same = one(lambda p: fn.coord_transform(p, M=[1.5], dtype=types.INT32), ints)
    # Half away from zero: 51 * 1.5 = 76.5 -> 77.
    assert same.dtype == np.int32 and same[2].tolist() == [77, 39]
    with pytest.raises(Exception, match="'dtype' must be FLOAT or the input type"):
        one(lambda p: fn.coord_transform(p, M=[1.5], dtype=types.UINT8), PTS)
    with pytest.raises(ArgumentError, match="'MT' cannot be combined with 'M' or 'T'"):
        one(lambda p: fn.coord_transform(p, MT=[1.0], M=[1.0]), PTS)


def test_coord_flip_mirrors_about_the_center():
    box = np.array([[0.1, 0.2], [0.7, 0.9]], np.float32)
    np.testing.assert_allclose(one(lambda p: fn.coord_flip(p), box), [[0.9, 0.2], [0.3, 0.9]])
    np.testing.assert_allclose(one(lambda p: fn.coord_flip(p, flip_x=1, flip_y=1, layout="yx"),
                                   box), [[0.9, 0.8], [0.3, 0.1]], atol=1e-6)
    np.testing.assert_allclose(one(lambda p: fn.coord_flip(p, center_x=0.3), box),
                               [[0.5, 0.2], [-0.1, 0.9]], atol=1e-6)
    xyz = np.array([[0.1, 0.2, 0.3]], np.float32)
    np.testing.assert_allclose(one(lambda p: fn.coord_flip(p, flip_z=1, center_z=0.2), xyz),
                               [[0.9, 0.2, 0.1]], atol=1e-6)
    with pytest.raises(Exception, match="coordinates must be float32"):
        one(lambda p: fn.coord_flip(p), np.array([[1, 2]], np.int32))


def test_matrices_carry_dalis_layout():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.transforms.combine(fn.transforms.translation(offset=[1.0, 2.0]),
                                     fn.transforms.rotation(angle=5.0))

    p = pipe()
    p.build()
    assert p.run()[0].layout() == "**"
