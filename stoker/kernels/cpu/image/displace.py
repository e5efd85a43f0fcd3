"""Per-pixel displacements: the source points of fn.water and fn.sphere, and the sampling.

Both compute in float32, as DALI does (the points decide which pixel a nearest-neighbour
lookup takes, so the precision shows). fn.water displaces pixel (x, y) to
(x + ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y)) at integer
coordinates; fn.sphere works on pixel centers c = (x + 0.5, y + 0.5): with the image's
middle m = (W / 2, H / 2) and d = max(W, H) // 2 (an integer), the
source is m + (c - m) * |c - m| / d
(DALI 2.4's behaviour, fitted to its outputs pixel for pixel).

The points depend only on the image size and the arguments, so the last few sets are
kept (``points``): a batch of same-sized images computes them once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.saturate import type_range

F32 = np.float32
_CACHE: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


def points(key: tuple, make: Callable[[], tuple[np.ndarray, np.ndarray]]
           ) -> tuple[np.ndarray, np.ndarray]:
    """``make()``'s (read-only) points, remembered under ``key`` for the next samples."""
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    made = make()
    for arr in made:
        arr.setflags(write=False)
    with _CACHE_LOCK:
        _CACHE[key] = made
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return made


def water_points(h: int, w: int, ampl_x: float, ampl_y: float, freq_x: float, freq_y: float,
                 phase_x: float, phase_y: float) -> tuple[np.ndarray, np.ndarray]:
    ys = np.arange(h, dtype=F32)[:, None]
    xs = np.arange(w, dtype=F32)[None, :]
    sx = xs + F32(ampl_x) * np.sin(F32(freq_x) * ys + F32(phase_x))
    sy = ys + F32(ampl_y) * np.cos(F32(freq_y) * xs + F32(phase_y))
    return (np.ascontiguousarray(np.broadcast_to(sx, (h, w))),
            np.ascontiguousarray(np.broadcast_to(sy, (h, w))))


def sphere_points(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    cy = np.arange(h, dtype=F32)[:, None] + F32(0.5)
    cx = np.arange(w, dtype=F32)[None, :] + F32(0.5)
    mx, my = F32(w / 2), F32(h / 2)
    d = F32(max(w, h) // 2)
    tx, ty = cx - mx, cy - my
    r = np.sqrt(tx * tx + ty * ty) / d
    return (np.ascontiguousarray(mx + r * tx), np.ascontiguousarray(my + r * ty))


def remap(src: np.ndarray, sx: np.ndarray, sy: np.ndarray, linear: bool, fill: np.ndarray,
          clamp: bool = False, out_shape: tuple[int, int] | None = None) -> np.ndarray:
    """``src`` (H, W, C) sampled at the points (sx, sy), shaped (oh, ow); one fill value
    per channel for points outside."""
    oh, ow = out_shape or sx.shape
    dst = np.empty((oh, ow, src.shape[2]), src.dtype)
    lo, hi = type_range(src.dtype)
    fn = loops("image.remap_loops")
    run = fn.remap_linear if linear else fn.remap_nearest
    run(np.ascontiguousarray(src), np.asarray(sx, F32), np.asarray(sy, F32),
        np.asarray(fill, F32), clamp, dst, src.dtype.kind in "iu", lo, hi)
    return dst
