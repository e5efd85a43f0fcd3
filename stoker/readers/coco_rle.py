"""COCO run-length masks: the compressed string form, decoding, and polygon rasterising.

A COCO mask of ``h x w`` pixels is stored column by column (Fortran order) as run lengths
that alternate between background and object, starting with background. The JSON holds
the runs either as a list of integers (``"counts": [3, 5, ...]``, crowd annotations in
the uncompressed form) or as a string in which each run is written as 5-bit groups, the
low group first, each group as one character ``48 + bits`` with bit 0x20 saying "another
group follows" and bit 0x10 of the last group giving the sign; from the fourth run on
(index > 2) a run is stored as its difference from the run two places earlier.

Polygons are turned into masks as the COCO tools do (and DALI with them): the outline is
walked on a grid five times finer than the pixels, and a pixel belongs to the polygon
when its centre lies between two crossings of its column by the outline. The exact
rules (rounding of the fine-grid points, which crossings count) matter, because masks are
compared pixel for pixel with DALI's, so each step below says what it keeps exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_SCALE = 5.0  # the outline's grid is five times finer than the pixels


def decode_counts_string(text: str | bytes) -> np.ndarray:
    """The run lengths of a compressed COCO ``counts`` string, as int64."""
    data = np.frombuffer(text.encode("ascii") if isinstance(text, str) else bytes(text),
                         np.uint8)
    if data.size and (data.min() < 48 or data.max() > 48 + 63):
        raise ValueError("RLE counts string holds characters outside '0'..'o'")
    groups = data.astype(np.int64) - 48
    ends = np.flatnonzero((groups & 0x20) == 0)  # the last group of each value
    if data.size and (ends.size == 0 or ends[-1] != data.size - 1):
        raise ValueError("RLE counts string ends in the middle of a value")
    out = np.empty(ends.size, np.int64)
    start = 0
    for m, end in enumerate(ends.tolist()):
        x = 0
        for k, c in enumerate(groups[start:end + 1].tolist()):
            x |= (c & 0x1F) << (5 * k)
        if groups[end] & 0x10:  # negative: sign-extend from the bits read
            x -= 1 << (5 * (end - start + 1))
        if m > 2:
            x += int(out[m - 2])
        out[m] = x
        start = end + 1
    return out


def encode_counts_string(counts: Sequence[int]) -> str:
    """The compressed COCO string of run lengths ``counts`` (inverse of the above)."""
    values = [int(c) for c in counts]
    chars: list[str] = []
    for i, count in enumerate(values):
        x = count - values[i - 2] if i > 2 else count
        while True:
            c = x & 0x1F
            x >>= 5  # arithmetic shift: negative values end at -1
            more = x != -1 if c & 0x10 else x != 0
            if more:
                c |= 0x20
            chars.append(chr(c + 48))
            if not more:
                break
    return "".join(chars)


def counts_to_mask(counts: np.ndarray, h: int, w: int) -> np.ndarray:
    """The (h, w) bool mask of run lengths ``counts`` (column-major runs)."""
    counts = np.asarray(counts, np.int64)
    if counts.size and counts.min() < 0:
        raise ValueError("RLE has a negative run length")
    total = int(counts.sum())
    if total != h * w:
        raise ValueError(f"RLE runs cover {total} pixels, the mask has {h} x {w} = {h * w}")
    values = np.zeros(counts.size, bool)
    values[1::2] = True
    flat = np.repeat(values, counts)
    return flat.reshape(w, h).T


def mask_to_counts(mask: np.ndarray) -> np.ndarray:
    """Run lengths of an (h, w) mask, column-major, starting with background."""
    flat = np.asarray(mask, bool).T.reshape(-1)
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    runs = np.diff(bounds)
    if flat.size and flat[0]:
        runs = np.concatenate([[0], runs])
    return runs.astype(np.int64)


def _outline(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The closed outline's points on the fine grid: every edge drawn as a line of grid
    points, one per step along its longer axis, endpoints included (so corners repeat),
    all edges at once."""
    # C's (int)(v + .5): truncation toward zero, also for negative coordinates.
    x = np.trunc(_SCALE * xy[:, 0] + 0.5).astype(np.int64)
    y = np.trunc(_SCALE * xy[:, 1] + 0.5).astype(np.int64)
    xs, ys = x, y
    xe, ye = np.roll(x, -1), np.roll(y, -1)
    dx, dy = np.abs(xe - xs), np.abs(ye - ys)
    along_x = dx >= dy
    # Each edge is drawn from its lower end along the axis it steps on, and its points are
    # listed from the edge's real start: the rounding is that of the lower-end drawing.
    flip = np.where(along_x, xs > xe, ys > ye)
    x0, x1 = np.where(flip, xe, xs), np.where(flip, xs, xe)
    y0, y1 = np.where(flip, ye, ys), np.where(flip, ys, ye)
    n = np.where(along_x, dx, dy)
    steps = n + 1
    edge = np.repeat(np.arange(len(xy)), steps)
    first = np.cumsum(steps) - steps
    d = np.arange(int(steps.sum()), dtype=np.int64) - first[edge]
    t = np.where(flip[edge], n[edge] - d, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        # An edge of one point (dx = dy = 0) has no slope; its point is its start.
        s = np.where(along_x, (y1 - y0) / np.maximum(dx, 1), (x1 - x0) / np.maximum(dy, 1))
    se, ax = s[edge], along_x[edge]
    base = np.where(along_x, y0, x0)[edge]
    slope = np.trunc(base + se * t + 0.5).astype(np.int64)
    u = np.where(ax, t + x0[edge], slope)
    v = np.where(ax, slope, t + y0[edge])
    return u, v


def polygon_to_counts(xy: np.ndarray, h: int, w: int) -> np.ndarray:
    """Run lengths of polygon ``xy`` ((k, 2) pixel coordinates x, y) rasterised on an
    (h, w) mask as the COCO tools do."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    if len(xy) == 0:
        return np.array([h * w], np.int64)
    u, v = _outline(xy)
    # Where the outline moves to another fine column, it may cross the centre line of a
    # pixel column: keep those crossings, at the first pixel centre at or below them.
    j = np.flatnonzero(u[1:] != u[:-1]) + 1
    xd = np.where(u[j] < u[j - 1], u[j], u[j] - 1).astype(np.float64)
    xd = (xd + 0.5) / _SCALE - 0.5
    yd = np.minimum(v[j], v[j - 1]).astype(np.float64)
    yd = (yd + 0.5) / _SCALE - 0.5
    keep = (np.floor(xd) == xd) & (xd >= 0) & (xd <= w - 1)
    xd, yd = xd[keep], yd[keep]
    yd = np.ceil(np.clip(yd, 0, h))
    starts = xd.astype(np.int64) * h + yd.astype(np.int64)
    # Crossings sorted down the columns are where the mask switches on and off; two
    # crossings at one place cancel out (the COCO tools drop them in pairs).
    places, times = np.unique(starts, return_counts=True)
    toggles = places[(times % 2 == 1) & (places < h * w)]
    return np.diff(np.concatenate([[0], toggles, [h * w]])).astype(np.int64)


def polygon_mask(xy: np.ndarray, h: int, w: int) -> np.ndarray:
    """(h, w) bool mask of one polygon."""
    return counts_to_mask(polygon_to_counts(xy, h, w), h, w)


def pixelwise_mask(h: int, w: int, labels: np.ndarray, polygons: np.ndarray,
                   vertices: np.ndarray, rle_objects: np.ndarray,
                   rle_counts: Sequence[np.ndarray]) -> np.ndarray:
    """An (h, w, 1) int32 map of the label of the object covering each pixel (0: none).

    ``polygons`` rows are (object, first vertex, end vertex) into ``vertices`` (pixel
    coordinates); ``rle_objects[k]`` is the object of run lengths ``rle_counts[k]``. Every
    polygon and RLE of an object counts, and where objects overlap the higher label wins
    (DALI 2.4 paints labels in ascending order too, but keeps only the polygons of a label
    that also has an RLE mask and only its last RLE mask).
    """
    out = np.zeros(w * h, np.int32)  # column-major, as the runs are
    labels = np.asarray(labels)
    masks: list[tuple[int, np.ndarray]] = []
    for obj, start, end in np.asarray(polygons).reshape(-1, 3).tolist():
        masks.append((int(labels[obj]), polygon_to_counts(vertices[start:end], h, w)))
    for obj, counts in zip(np.asarray(rle_objects).tolist(), rle_counts, strict=True):
        masks.append((int(labels[obj]), np.asarray(counts, np.int64)))
    on = np.zeros(0, bool)
    for label, counts in sorted(masks, key=lambda m: m[0]):
        if on.size != counts.size:
            on = np.zeros(counts.size, bool)
            on[1::2] = True
        out[np.repeat(on, counts)] = label
    return out.reshape(w, h).T.reshape(h, w, 1).copy()
