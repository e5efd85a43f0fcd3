"""What every random_bbox_crop output must satisfy, checked independently of how it was
drawn (DALI's outputs and stoker's go through the same checks).

Written from DALI 2.4's documentation and measured behaviour, in float64 with a small
tolerance where a float32 rounding could tip a comparison.
"""

from __future__ import annotations

import numpy as np

TOL = 1e-5


def _corners(boxes: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    b = np.asarray(boxes, np.float64).reshape(-1, len(layout))
    nd = len(layout) // 2
    lo = np.stack([b[:, layout.index(c)] for c in "xyz"[:nd]], 1)
    if "X" in layout:
        hi = np.stack([b[:, layout.index(c)] for c in "XYZ"[:nd]], 1)
    else:
        hi = lo + np.stack([b[:, layout.index(c)] for c in "WHD"[:nd]], 1)
    return lo, hi


def _overlaps(wlo, whi, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    ilo, ihi = np.maximum(wlo, lo), np.minimum(whi, hi)
    inter = np.where(np.all(ihi > ilo, 1), np.prod(ihi - ilo, 1), 0.0)
    vol = np.prod(hi - lo, 1)
    union = np.prod(whi - wlo) + vol - inter
    iou = np.where(inter > 0, inter / np.where(union > 0, union, 1), 0.0)
    return iou, inter / np.where(vol > 0, vol, 1)


def check_crop(args: dict, boxes: np.ndarray, labels: np.ndarray, outs: list) -> None:
    anchor, shape, out_boxes = (np.asarray(o) for o in outs[:3])
    nd = anchor.size
    layout = args.get("bbox_layout") or ("xyXY" if nd == 2 else "xyzXYZ")
    assert anchor.dtype == shape.dtype == out_boxes.dtype == np.float32
    assert anchor.shape == shape.shape == (nd,)
    a, s = anchor.astype(np.float64), shape.astype(np.float64)
    whole = bool(np.all(a == 0) and np.allclose(s, 1))
    if "crop_shape" in args:
        full = np.asarray(args["input_shape"], np.float64)
        crop = np.asarray(args["crop_shape"], np.float64)
        assert np.array_equal(s, crop), (s, crop)
        assert np.all(a == np.round(a)) and np.all(a >= 0) and np.all(a <= np.maximum(
            full - crop, 0)), a
        wlo, whi = a / full, a / full + crop / full
        whole = False
    else:
        wlo, whi = a, a + s
        if whole:
            assert args.get("allow_no_crop", True), "no crop was not allowed"
        else:
            smin, smax = args.get("scaling", [1.0, 1.0])
            units = np.asarray(args.get("input_shape", np.ones(nd)), np.float64)
            px = s * units
            ratio = px[0] / px[1]
            lo_r, hi_r = args.get("aspect_ratio", [1.0, 1.0])[:2]
            assert lo_r - TOL <= ratio <= hi_r + TOL, f"aspect ratio {ratio}"
            if "input_shape" not in args:
                assert smin - TOL <= s.max() <= smax + TOL, f"sides {s}"
                assert np.all(a >= -TOL) and np.all(a + s <= 1 + TOL), (a, s)
    lo, hi = _corners(boxes, layout)
    prune = args.get("bbox_prune_threshold")
    if whole:
        keep = np.arange(len(lo))
    elif prune is None:
        centre = (lo + hi) / 2
        inside = np.all((centre >= wlo - TOL) & (centre < whi + TOL), 1)
        sure = np.all((centre >= wlo + TOL) & (centre < whi - TOL), 1)
        keep = np.flatnonzero(inside)
        assert len(out_boxes) >= sure.sum()
    else:
        _, frac = _overlaps(wlo, whi, lo, hi)
        keep = np.flatnonzero((frac > 0) & (frac >= prune - TOL))
    got_labels = np.asarray(outs[3]) if len(outs) > 3 else None
    idx = np.asarray(outs[4]) if args.get("output_bbox_indices") else None
    if idx is not None:
        assert set(idx.tolist()) <= set(keep.tolist()), (idx, keep)
        keep = idx
    elif got_labels is not None and len(got_labels) != len(keep):
        # A centre on the window's edge: take the labels' word for which boxes stayed.
        keep = np.array([int(np.flatnonzero(labels == v)[0]) for v in got_labels], np.int64)
    assert len(out_boxes) == len(keep), (len(out_boxes), keep)
    if got_labels is not None:
        np.testing.assert_array_equal(got_labels, labels[keep])
    olo, ohi = _corners(out_boxes, layout)
    ext = whi - wlo
    want_lo = np.clip((np.maximum(wlo, lo[keep]) - wlo) / ext, 0, 1)
    want_hi = np.clip((np.minimum(whi, hi[keep]) - wlo) / ext, 0, 1)
    np.testing.assert_allclose(olo, want_lo, atol=1e-4)
    np.testing.assert_allclose(ohi, want_hi, atol=1e-4)
    if not whole and "total_num_attempts" not in args and len(lo):
        iou, frac = _overlaps(wlo, whi, lo, hi)
        metric = frac if args.get("threshold_type") == "overlap" else iou
        m = metric.min() if args.get("all_boxes_above_threshold", True) else metric.max()
        assert m >= min(args.get("thresholds", [0.0])) - TOL, f"metric {m}"
        assert len(keep) > 0, "a window that keeps no box"
