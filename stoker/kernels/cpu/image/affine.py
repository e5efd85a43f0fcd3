"""Affine transform matrices as DALI's ``fn.transforms.*`` make them, and their use on points.

A transform of ``ndim``-D points is an (ndim, ndim + 1) float32 matrix ``[M | t]``: a
point p maps to ``M @ p + t``. Composition works on the homogeneous (ndim + 1)-square
form. Angles are in degrees; a ``center`` makes the transform keep that point fixed.
"""

from __future__ import annotations

import math

import numpy as np


def _vec(value: object) -> np.ndarray:
    return np.asarray(value, np.float64).reshape(-1)


def homogeneous(mt: np.ndarray) -> np.ndarray:
    """(n, n + 1) -> (n + 1, n + 1) with the last row [0 ... 0 1]."""
    n = mt.shape[0]
    out = np.eye(n + 1)
    out[:n] = mt
    return out


def about_center(linear: np.ndarray, center: object | None) -> np.ndarray:
    """[M | t] with t = c - M c, so ``center`` stays where it is."""
    n = linear.shape[0]
    c = np.zeros(n) if center is None else _vec(center)
    if c.size != n:
        raise ValueError(f"'center' has {c.size} values for a {n}-D transform")
    return np.concatenate([linear, (c - linear @ c)[:, None]], axis=1)


def translation(offset: object) -> np.ndarray:
    off = _vec(offset)
    return np.concatenate([np.eye(off.size), off[:, None]], axis=1)


def scale(factors: object, center: object | None = None, ndim: int | None = None) -> np.ndarray:
    """Scaling; one factor is repeated for ``ndim`` axes (else ndim is its length)."""
    s = _vec(factors)
    if ndim is not None and s.size == 1:
        s = np.repeat(s, ndim)
    if ndim is not None and s.size != ndim:
        raise ValueError(f"'scale' has {s.size} values for ndim={ndim}")
    return about_center(np.diag(s), center)


def rotation(angle: float, axis: object | None = None, center: object | None = None) -> np.ndarray:
    """Counter-clockwise (in x-right, y-down images: clockwise on screen) by ``angle``
    degrees; 3-D rotations turn about ``axis``."""
    a = math.radians(float(angle))
    cos, sin = math.cos(a), math.sin(a)
    if axis is None:
        linear = np.array([[cos, -sin], [sin, cos]])
    else:
        u = _vec(axis)
        if u.size != 3:
            raise ValueError(f"'axis' must have 3 values, got {u.size}")
        norm = float(np.linalg.norm(u))
        if norm == 0:
            raise ValueError("'axis' must not be the zero vector")
        u = u / norm
        cross = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        linear = cos * np.eye(3) + sin * cross + (1 - cos) * np.outer(u, u)
    return about_center(linear, center)


def shear(factors: object | None = None, angles: object | None = None,
          center: object | None = None) -> np.ndarray:
    """2-D: [[1, sx], [sy, 1]] from (sx, sy); 3-D from (sxy, sxz, syx, syz, szx, szy).
    ``angles`` (degrees) give the factors as their tangents."""
    if (factors is None) == (angles is None):
        raise ValueError("give exactly one of 'shear' or 'angles'")
    s = _vec(factors) if factors is not None else np.tan(np.radians(_vec(angles)))
    if s.size == 2:
        linear = np.array([[1.0, s[0]], [s[1], 1.0]])
    elif s.size == 6:
        linear = np.array([[1.0, s[0], s[1]], [s[2], 1.0, s[3]], [s[4], s[5], 1.0]])
    else:
        raise ValueError(f"shear needs 2 (2-D) or 6 (3-D) values, got {s.size}")
    return about_center(linear, center)


def crop(from_start: object, from_end: object, to_start: object, to_end: object,
         absolute: bool = False) -> np.ndarray:
    """Maps the box [from_start, from_end] onto [to_start, to_end]; one value is repeated
    for every axis. ``absolute`` reorders each start/end pair so start <= end."""
    parts = [_vec(v) for v in (from_start, from_end, to_start, to_end)]
    n = max(p.size for p in parts)
    for p in parts:
        if p.size not in (1, n):
            raise ValueError(f"crop coordinates must have 1 or {n} values, got {p.size}")
    fs, fe, ts, te = (np.broadcast_to(p, (n,)).copy() for p in parts)
    if absolute:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    extent = fe - fs
    if (extent == 0).any():
        raise ValueError("the source box of a crop transform has zero extent")
    s = (te - ts) / extent
    return np.concatenate([np.diag(s), (ts - fs * s)[:, None]], axis=1)


def compose(first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """The transform that applies ``first``, then ``then``."""
    if first.shape != then.shape:
        raise ValueError(f"cannot combine transforms of shapes {first.shape} and "
                         f"{then.shape}")
    return (homogeneous(then) @ homogeneous(first))[: first.shape[0]]


def transform_points(points: np.ndarray, matrix: np.ndarray | None,
                     offset: np.ndarray | None) -> np.ndarray:
    """``points @ matrix.T + offset`` in float64 (points are the rows). Not by ``@``:
    matmul hands a tall (N, D) product to OpenBLAS's threads, which on two busy cores
    took 62-130 ms for EfficientDet's 49,104 anchors; the compiled loop takes about 1 ms
    (``points_loop.py``)."""
    if matrix is not None and points.dtype.kind == "f":
        from stoker.kernels.cpu.compiled import loops

        t = np.zeros(matrix.shape[0]) if offset is None else np.broadcast_to(
            np.asarray(offset, np.float64), (matrix.shape[0],))
        return loops("image.points_loop").transform_points(
            np.ascontiguousarray(points), np.ascontiguousarray(matrix, np.float64),
            np.ascontiguousarray(t))
    p = points.astype(np.float64)
    out = p @ matrix.T if matrix is not None else p
    return out + offset if offset is not None else out
