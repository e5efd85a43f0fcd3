"""``paste``: an image placed on a larger canvas filled with a color (DALI's size rules)."""

from __future__ import annotations

import numpy as np


def paste_geometry(in_hw: tuple[int, int], ratio: float, paste_x: float, paste_y: float,
                   min_canvas_size: float) -> tuple[int, int, int, int]:
    """(canvas height, canvas width, top, left): the canvas is int(ratio * extent), at least
    int(min_canvas_size); the image sits at int(paste * free space), truncated as DALI."""
    h, w = int(in_hw[0]), int(in_hw[1])
    r = np.float32(ratio)
    new_h = max(int(r * np.float32(h)), int(min_canvas_size))
    new_w = max(int(r * np.float32(w)), int(min_canvas_size))
    top = int(np.float32(paste_y) * np.float32(new_h - h))
    left = int(np.float32(paste_x) * np.float32(new_w - w))
    return new_h, new_w, top, left


def paste_hwc(image: np.ndarray, canvas_hw: tuple[int, int], top: int, left: int,
              fill: np.ndarray) -> np.ndarray:
    """The (H, W, C) image copied into a canvas of ``fill`` (one value per channel)."""
    h, w, c = image.shape
    out = np.empty((canvas_hw[0], canvas_hw[1], c), image.dtype)
    out[...] = np.broadcast_to(fill, (c,)).astype(image.dtype)
    out[top:top + h, left:left + w] = image
    return out
