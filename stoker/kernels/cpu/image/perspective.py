"""Perspective warps with OpenCV's ``warpPerspective`` (which DALI 2.4's CPU operator
matches pixel for pixel: its bilinear and bicubic weights, its rounding).

Matrices come in DALI's convention: with pixel_origin "corner" a pixel's center is at
(x + 0.5, y + 0.5), OpenCV puts it at (x, y); the matrix is conjugated by that half-pixel
shift. Channels beyond OpenCV's four border values are warped four at a time.
"""

from __future__ import annotations

import cv2
import numpy as np

INTERP = {0: cv2.INTER_NEAREST, 1: cv2.INTER_LINEAR, 2: cv2.INTER_CUBIC}
BORDERS = {"constant": cv2.BORDER_CONSTANT, "replicate": cv2.BORDER_REPLICATE,
           "reflect": cv2.BORDER_REFLECT, "reflect_101": cv2.BORDER_REFLECT_101,
           "wrap": cv2.BORDER_WRAP}
_SHIFT = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
_UNSHIFT = np.array([[1.0, 0.0, -0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]])


def opencv_matrix(matrix: np.ndarray, corner_origin: bool) -> np.ndarray:
    m = np.asarray(matrix, np.float64).reshape(3, 3)
    return _UNSHIFT @ m @ _SHIFT if corner_origin else m


def warp_perspective_hwc(img: np.ndarray, matrix: np.ndarray, out_hw: tuple[int, int],
                         inverse_map: bool, interp: int, border: str,
                         fill: np.ndarray) -> np.ndarray:
    """``img`` (H, W, C) warped by ``matrix`` (OpenCV's convention) to ``out_hw``; with
    ``inverse_map`` the matrix maps output points to input points."""
    flags = INTERP[interp] | (cv2.WARP_INVERSE_MAP if inverse_map else 0)
    c = img.shape[2]
    out = np.empty((out_hw[0], out_hw[1], c), img.dtype)
    for c0 in range(0, c, 4):
        part = np.ascontiguousarray(img[:, :, c0:c0 + 4])
        value = [float(v) for v in fill[c0:c0 + 4]] + [0.0] * (4 - min(4, c - c0))
        got = cv2.warpPerspective(part, matrix, (out_hw[1], out_hw[0]), flags=flags,
                                  borderMode=BORDERS[border], borderValue=value)
        out[:, :, c0:c0 + 4] = got.reshape(out_hw[0], out_hw[1], -1)
    return out
