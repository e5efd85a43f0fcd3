"""Picking objects and pixels in label maps: the work behind ``fn.segmentation.*``.

``object_boxes`` finds the connected blobs of one class (pixels joined along an axis,
not diagonally, as DALI 2.4 joins them) and their bounding boxes; ``pick_object`` makes
``random_object_bbox``'s choice: a class by weight, then one of its blobs, retrying with
other classes when one has no blob over the size threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stoker.kernels.cpu.compiled import loops


def object_boxes(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, volume) of the blobs of boolean ``mask``, hi one past the end, in the order
    of each blob's first pixel (C order)."""
    m = np.ascontiguousarray(mask, dtype=bool)
    if m.ndim == 0 or m.size == 0:
        return np.zeros((0, m.ndim), np.int64), np.zeros((0, m.ndim), np.int64), \
            np.zeros(0, np.int64)
    shape = np.asarray(m.shape, np.int64)
    strides = np.asarray(m.strides, np.int64) // m.itemsize
    return loops("detection.label_loop").blob_boxes(m.reshape(-1), shape, strides)


def _keep(lo, hi, vol, threshold, k_largest):
    """Blobs at least ``threshold`` wide on every axis, the ``k_largest`` by volume (ties
    in first-pixel order)."""
    if threshold is not None:
        ok = np.all(hi - lo >= np.asarray(threshold, np.int64), axis=1)
        lo, hi, vol = lo[ok], hi[ok], vol[ok]
    if k_largest is not None:
        order = np.argsort(-vol, kind="stable")[:k_largest]
        lo, hi, vol = lo[order], hi[order], vol[order]
    return lo, hi


@dataclass(frozen=True)
class ObjectChoice:
    lo: np.ndarray
    hi: np.ndarray
    label: int  # the class, or the background for the whole input


def pick_object(labels: np.ndarray, rng: np.random.Generator, *, background: int,
                classes: Sequence[int] | None, weights: Sequence[float] | None,
                foreground_prob: float, ignore_class: bool, k_largest: int | None,
                threshold: Sequence[int] | None) -> ObjectChoice:
    whole = ObjectChoice(np.zeros(labels.ndim, np.int64), np.asarray(labels.shape, np.int64),
                         background)
    if rng.random() >= foreground_prob:
        return whole
    present = np.unique(labels)
    if classes is None:
        classes = [int(c) for c in present if c != background]
    classes = [int(c) for c in classes]
    if ignore_class:
        found = [_keep(*object_boxes(labels == c), threshold, None) + (c,) for c in classes]
        los = [lo for lo, _, _ in found if len(lo)]
        if not los:
            return whole
        lo = np.concatenate(los)
        hi = np.concatenate([hi for _, hi, _ in found if len(hi)])
        tags = np.concatenate([np.full(len(lo_), c) for lo_, _, c in found if len(lo_)])
        if k_largest is not None:
            vol = np.prod(hi - lo, axis=1)
            order = np.argsort(-vol, kind="stable")[:k_largest]
            lo, hi, tags = lo[order], hi[order], tags[order]
        k = int(rng.integers(len(lo)))
        return ObjectChoice(lo[k], hi[k], int(tags[k]))
    w = np.ones(len(classes)) if weights is None else np.asarray(weights, np.float64).copy()
    w[~np.isin(classes, present)] = 0
    while w.sum() > 0:
        c = int(rng.choice(len(classes), p=w / w.sum()))
        lo, hi = _keep(*object_boxes(labels == classes[c]), threshold, k_largest)
        if len(lo):
            k = int(rng.integers(len(lo)))
            return ObjectChoice(lo[k], hi[k], classes[c])
        w[c] = 0
    return whole


def random_pixel(mask: np.ndarray | None, shape: tuple[int, ...],
                 rng: np.random.Generator) -> np.ndarray:
    """int64 coordinates of a pixel drawn uniformly from ``mask``'s true pixels, or from
    all pixels when there is no mask or it is empty."""
    if mask is not None:
        hits = np.flatnonzero(mask)
        if hits.size:
            return np.array(np.unravel_index(int(hits[rng.integers(hits.size)]), shape),
                            np.int64)
    size = int(np.prod(shape))
    if size == 0:
        return np.zeros(len(shape), np.int64)
    return np.array(np.unravel_index(int(rng.integers(size)), shape), np.int64)
