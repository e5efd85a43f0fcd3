"""Table lookups: histogram equalization and key -> value maps of integer data.

equalize follows OpenCV's equalizeHist rule exactly (DALI's CPU operator agrees with it
bit for bit): the lowest present level maps to 0, the others to their cumulative count
scaled to 0..255, rounded half to even; an image of one level keeps it.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.kernels.cpu.saturate import round_sat


def equalize_tables(hist: np.ndarray) -> np.ndarray:
    """(C, 256) uint8 tables from (C, 256) histograms, OpenCV's equalizeHist rule."""
    hist = hist.astype(np.int64)
    total = hist.sum(axis=1, keepdims=True)
    first = np.argmax(hist > 0, axis=1)[:, None]  # lowest present level
    cum = np.cumsum(hist, axis=1)
    at_first = np.take_along_axis(cum, first, axis=1)  # == hist[first]: nothing below it
    with np.errstate(divide="ignore", invalid="ignore"):  # single-level rows: fixed below
        scale = np.float32(255.0) / (total - at_first).astype(np.float32)
        tables = np.rint((cum - at_first).astype(np.float32) * scale)  # float32, half to even
    tables = np.where(np.arange(256)[None, :] <= first, 0, np.clip(tables, 0, 255))
    single = (at_first == total)[:, 0]  # one level only: it maps to itself
    tables[single] = first[single]
    return tables.astype(np.uint8)


def equalize(units: np.ndarray) -> np.ndarray:
    """Equalizes (k, P, C) uint8 data: each of the k units and C channels on its own."""
    import cv2

    L = loops("image.pixel_loops")

    k, npx, c = units.shape
    out = np.empty_like(units)
    hist = np.zeros((c, 256), np.int64)
    for i in range(k):
        img = np.ascontiguousarray(units[i])
        hist[:] = 0
        L.histograms(img.reshape(-1), c, hist)
        tables = equalize_tables(hist)
        if c == 1:  # OpenCV's single-table LUT is the fastest gather
            cv2.LUT(img.reshape(1, npx), tables[0], dst=out[i].reshape(1, npx))
        else:
            L.lut_apply_channels(img.reshape(-1), tables, out[i].reshape(-1))
    return out


def lookup(x: np.ndarray, keys: list[int], values: list[float], default: float,
           out_dtype: np.dtype) -> np.ndarray:
    """``values[i]`` where ``x == keys[i]``, ``default`` elsewhere, converted to ``out_dtype``
    (rounded half away from zero and saturated)."""
    out_dtype = np.dtype(out_dtype)
    fill = round_sat(np.float32(default), out_dtype)
    if x.dtype in (np.uint8, np.uint16):  # every possible value gets a table entry
        size = 1 << (8 * x.dtype.itemsize)
    else:
        size = (max(keys) + 1) if keys else 1
    table = np.full(size, fill, out_dtype)
    keep = [(k, v) for k, v in zip(keys, values, strict=True) if k < size]
    if keep:
        ks, vs = zip(*keep, strict=True)
        table[list(ks)] = round_sat(np.asarray(vs, np.float32), out_dtype)
    if x.dtype == np.uint8:
        from stoker.kernels.cpu.image.color import apply_table

        out = np.empty(x.shape, out_dtype)
        apply_table(x, table, out)
        return out
    if x.dtype == np.uint16:
        return table[x]
    inside = (x >= 0) & (x < size)
    return np.where(inside, table[np.clip(x, 0, size - 1)], fill)
