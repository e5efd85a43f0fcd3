"""The search behind ``fn.random_bbox_crop``: a random window that keeps the boxes.

Boxes are relative (0..1), 2-D or 3-D, handled as ``lo``/``hi`` corner arrays. The search
follows DALI 2.4: each round draws an option (one of the ``thresholds``, or "no crop"),
then ``num_attempts`` candidate windows; a candidate's metric is the smallest (or, without
``all_boxes_above_threshold``, the largest) IoU or overlap with the boxes. Within a round
a candidate replaces the current one when it meets the threshold or beats the best metric
so far, and the round's last replacement decides whether the search is over: it must meet
the threshold and keep at least one box (a sample without boxes takes its first window).
Rounds repeat until success or until ``total_num_attempts``; then the best window so far
is used. Where DALI would search forever (no ``total_num_attempts``), the search stops at
``DEFAULT_MAX_ATTEMPTS`` and falls back the same way, with the same warning.

All coordinates are float32, as DALI computes them; the random draws are stoker's
(``rng`` is the sample's generator), so windows differ from DALI's but follow the same
distributions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Attempts before an endless search (total_num_attempts=-1) gives up on a sample.
DEFAULT_MAX_ATTEMPTS = 10_000
_F = np.float32


@dataclass(frozen=True)
class CropConfig:
    ndim: int
    thresholds: tuple[float, ...]
    allow_no_crop: bool
    num_attempts: int
    total_num_attempts: int  # <= 0: until found (bounded by DEFAULT_MAX_ATTEMPTS)
    scaling: tuple[float, float]
    aspect_ratios: tuple[tuple[float, float], ...]  # per dimension pair, cycled
    overlap: bool  # threshold_type="overlap" instead of IoU
    all_boxes: bool  # all_boxes_above_threshold
    prune_threshold: float | None  # None: keep boxes whose centre is in the window


@dataclass
class CropResult:
    lo: np.ndarray  # the window, relative or (with crop_shape) absolute
    hi: np.ndarray
    boxes_lo: np.ndarray  # kept boxes, in the window's coordinates
    boxes_hi: np.ndarray
    indices: np.ndarray  # int32, which input boxes were kept
    found: bool  # False: the best window after the attempts ran out
    attempts: int
    best_metric: float


def read_boxes(coords: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) corners of boxes given in ``layout`` (a permutation of xyXY or xyWH, or
    their 3-D forms)."""
    ndim = len(layout) // 2
    starts, ends, sizes = "xyz"[:ndim], "XYZ"[:ndim], "WHD"[:ndim]
    lo = np.stack([coords[:, layout.index(c)] for c in starts], axis=1).astype(_F)
    if all(c in layout for c in ends):
        hi = np.stack([coords[:, layout.index(c)] for c in ends], axis=1).astype(_F)
    else:
        hi = lo + np.stack([coords[:, layout.index(c)] for c in sizes], axis=1).astype(_F)
    return lo, hi


def write_boxes(lo: np.ndarray, hi: np.ndarray, layout: str) -> np.ndarray:
    ndim = lo.shape[1]
    out = np.empty((lo.shape[0], 2 * ndim), _F)
    for d in range(ndim):
        out[:, layout.index("xyz"[d])] = lo[:, d]
        if "XYZ"[d] in layout:
            out[:, layout.index("XYZ"[d])] = hi[:, d]
        else:
            out[:, layout.index("WHD"[d])] = hi[:, d] - lo[:, d]
    return out


def _volume(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    ext = hi - lo
    vol = ext[..., 0]
    for d in range(1, ext.shape[-1]):
        vol = vol * ext[..., d]
    return vol


def _intersection(clo, chi, blo, bhi) -> np.ndarray:
    """Volumes of the intersections of windows (K, 1, d) and boxes (1, N, d); an empty
    intersection (any side <= 0) has volume 0."""
    lo, hi = np.maximum(clo, blo), np.minimum(chi, bhi)
    vol = _volume(lo, hi)
    return np.where(np.all(hi > lo, axis=-1), vol, _F(0))


def window_metrics(clo, chi, blo, bhi, overlap: bool) -> np.ndarray:
    """(K, N) IoU (or overlap: intersection / box volume) of K windows with N boxes."""
    inter = _intersection(clo[:, None], chi[:, None], blo[None], bhi[None])
    box_vol = _volume(blo, bhi)[None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if overlap:
            return inter / box_vol
        union = _volume(clo, chi)[:, None] + box_vol - inter
        return np.where(inter == 0, _F(0), inter / union)


def kept_boxes(clo, chi, blo, bhi, prune: float | None) -> np.ndarray:
    """(K, N) whether each box stays with each window: its centre inside the window
    (lower edge included, upper excluded), or at least ``prune`` of its volume inside."""
    if prune is None:
        centre = (blo + bhi) * _F(0.5)
        return np.all((centre[None] >= clo[:, None]) & (centre[None] < chi[:, None]), axis=-1)
    inter = _intersection(clo[:, None], chi[:, None], blo[None], bhi[None])
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = inter / _volume(blo, bhi)[None]
    return (inter != 0) & (frac >= _F(prune))


def _fix_aspect(ext: np.ndarray, ranges, rng: np.random.Generator) -> np.ndarray:
    """Where a pair's ratio range is a single value, sets the sides to that ratio, the
    dimensions taken in a random order per window, then rescales so that the longest side
    is what it was."""
    k_count, ndim = ext.shape
    fixed = np.zeros((ndim, ndim), _F)
    k, need = 0, False
    for d0 in range(ndim):
        for d1 in range(d0 + 1, ndim):
            lo, hi = ranges[k]
            if lo == hi:
                fixed[d0, d1], fixed[d1, d0] = _F(lo), _F(1.0 / lo) if lo else _F(0)
                need = True
            k = (k + 1) % len(ranges)
    if not need:
        return ext
    out = ext.copy()
    max_before = ext.max(axis=1)
    for row in range(k_count):
        order = rng.permutation(ndim)
        for i0 in range(ndim):
            for i1 in range(i0 + 1, ndim):
                d0, d1 = order[i0], order[i1]
                if fixed[d1, d0] > 0:
                    out[row, d1] = out[row, d0] * fixed[d1, d0]
    return (max_before[:, None] * out / out.max(axis=1)[:, None]).astype(_F)


def _aspect_ok(ext: np.ndarray, ranges) -> np.ndarray:
    ok = np.ones(len(ext), bool)
    k = 0
    ndim = ext.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(ndim):
            for j in range(i + 1, ndim):
                ratio = ext[:, i] / ext[:, j]
                lo, hi = ranges[k]
                ok &= (ratio >= _F(lo)) & (ratio <= _F(hi))
                k = (k + 1) % len(ranges)
    return ok


def _candidates(cfg: CropConfig, rng: np.random.Generator, count: int,
                crop_shape, input_shape) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, np.ndarray]:
    """``count`` windows: relative (lo, hi), output (lo, hi), and whether each is usable
    (its aspect ratio in range)."""
    nd = cfg.ndim
    if crop_shape is not None:
        crop = np.asarray(crop_shape, np.int64)
        full = np.asarray(input_shape, np.int64)
        span = np.maximum(full - crop, 0)
        anchor = (rng.integers(0, span + 1, size=(count, nd))).astype(_F)
        shape = crop.astype(_F)
        rel_lo = anchor / full.astype(_F)
        rel_hi = rel_lo + shape / full.astype(_F)
        return rel_lo, rel_hi, anchor, anchor + shape, np.ones(count, bool)
    units = np.ones(nd, _F) if input_shape is None else np.asarray(input_shape, _F)
    smin, smax = cfg.scaling
    ext = (_F(smin) + (_F(smax) - _F(smin)) * rng.random((count, nd), dtype=np.float32))
    # The ratio constraints are on the window's sides in pixels when the input's shape is
    # known, else relative to the image.
    ext = _fix_aspect(ext * units, cfg.aspect_ratios, rng)
    ok = _aspect_ok(ext, cfg.aspect_ratios)
    ext = (ext / units).astype(_F)
    # As DALI's uniform(0, 1 - side): a side over 1 puts the anchor below 0.
    lo = ((_F(1) - ext) * rng.random((count, nd), dtype=np.float32)).astype(_F)
    hi = lo + ext
    return lo, hi, lo, hi, ok


def remap(blo, bhi, clo, chi) -> tuple[np.ndarray, np.ndarray]:
    """Boxes in the coordinates of window (clo, chi), clipped to it."""
    ext = chi - clo
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = (np.maximum(clo, blo) - clo) / ext
        hi = (np.minimum(chi, bhi) - clo) / ext
    return np.clip(lo, 0, 1).astype(_F), np.clip(hi, 0, 1).astype(_F)


def find_crop(cfg: CropConfig, blo: np.ndarray, bhi: np.ndarray, rng: np.random.Generator,
              crop_shape=None, input_shape=None) -> CropResult:
    """The window for one sample (see the module's docstring)."""
    nd = cfg.ndim
    options = [(False, t) for t in cfg.thresholds] + [(True, 0.0)] * cfg.allow_no_crop
    budget = cfg.total_num_attempts if cfg.total_num_attempts > 0 else DEFAULT_MAX_ATTEMPTS
    n = len(blo)
    every = np.arange(n, dtype=np.int32)
    count, best = 0, -1.0
    chosen: tuple | None = None
    found = False
    while not found and count < budget:
        no_crop, threshold = options[int(rng.integers(len(options)))]
        if no_crop:
            hi = np.ones(nd, _F) if crop_shape is None else np.asarray(input_shape, _F)
            return CropResult(np.zeros(nd, _F), hi, blo.copy(), bhi.copy(), every, True,
                              count, best)
        k = cfg.num_attempts
        rlo, rhi, olo, ohi, ok = _candidates(cfg, rng, k, crop_shape, input_shape)
        count += k
        if n:
            metrics = window_metrics(rlo, rhi, blo, bhi, cfg.overlap)
            metric = metrics.min(axis=1) if cfg.all_boxes else metrics.max(axis=1)
            keep = kept_boxes(rlo, rhi, blo, bhi, cfg.prune_threshold)
        else:
            metric, keep = np.zeros(k, _F), np.zeros((k, 0), bool)
        for j in np.flatnonzero(ok).tolist():
            m = float(metric[j])
            valid = m >= np.float32(threshold)
            if m <= best and not valid:
                continue
            best = m
            chosen = (rlo[j], rhi[j], olo[j], ohi[j], keep[j])
            found = (valid and bool(keep[j].any())) or n == 0
            if n == 0:
                break
    if chosen is None:  # every attempt had a ratio out of range: no window at all
        hi = np.ones(nd, _F) if crop_shape is None else np.asarray(input_shape, _F)
        return CropResult(np.zeros(nd, _F), hi, blo.copy(), bhi.copy(), every, False,
                          count, best)
    rlo, rhi, olo, ohi, keep = chosen
    idx = np.flatnonzero(keep).astype(np.int32)
    lo, hi = remap(blo[idx], bhi[idx], rlo, rhi)
    return CropResult(olo.astype(_F), ohi.astype(_F), lo, hi, idx, found, count, best)
