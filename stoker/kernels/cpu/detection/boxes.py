"""Box arithmetic for ``bb_flip``, ``bbox_paste``, ``bbox_rotate`` and ``box_encoder``.

Boxes are float32 rows of 4 values, ``ltrb`` (left, top, right, bottom) or ``xywh``; every
step is float32 in DALI 2.4's order of operations, so results are bit-identical to DALI's
(checked against recorded outputs; the sines, cosines and logarithms of ``bbox_rotate``
and ``box_encoder``'s offsets may differ in the last bit between math libraries).
"""

from __future__ import annotations

import math

import numpy as np

_F = np.float32


def as_rows(boxes: np.ndarray) -> np.ndarray:
    """The boxes as an (N, 4) float32 view (any shape whose size is a multiple of 4)."""
    if boxes.dtype != np.float32:
        raise TypeError(f"boxes must be float32, got {boxes.dtype}")
    if boxes.size % 4:
        raise ValueError(f"boxes must hold a multiple of 4 values, got shape {boxes.shape}")
    return boxes.reshape(-1, 4)


def flip_boxes(boxes: np.ndarray, ltrb: bool, horizontal: bool, vertical: bool) -> np.ndarray:
    """Mirrors relative boxes: [l, r] -> [1 - r, 1 - l] on the flipped axes. xywh boxes go
    through ltrb and back (so widths are recomputed as r - l, as in DALI)."""
    rows = as_rows(boxes)
    lo, hi = rows[:, :2].copy(), rows[:, 2:].copy()
    if not ltrb:
        hi = lo + hi
    for axis, flip in ((0, horizontal), (1, vertical)):
        if flip:
            lo[:, axis], hi[:, axis] = _F(1) - hi[:, axis], _F(1) - lo[:, axis]
    out = np.concatenate([lo, hi if ltrb else hi - lo], axis=1)
    return out.reshape(boxes.shape)


def paste_boxes(boxes: np.ndarray, ltrb: bool, ratio: float, paste_x: float,
                paste_y: float) -> np.ndarray:
    """Boxes of an image pasted on a canvas ``ratio`` times its size at (paste_x,
    paste_y): corners scale by 1 / ratio and shift by paste * (ratio - 1) / ratio, the
    shift nudged down so that a box in [0, 1] stays in [0, 1]."""
    rows = as_rows(boxes)
    r = _F(ratio)
    scale = _F(1) / r
    mul = (r - _F(1)) / r
    shifts = []
    for p in (_F(paste_x), _F(paste_y)):
        ofs = _F(p * mul)
        if scale + ofs > _F(1):
            ofs = _F(1) - scale
            while scale + ofs > _F(1):
                ofs = np.nextafter(ofs, _F(-1))
        shifts.append(ofs)
    out = rows * scale
    out[:, 0] += shifts[0]
    out[:, 1] += shifts[1]
    if ltrb:
        out[:, 2] += shifts[0]
        out[:, 3] += shifts[1]
    return out.astype(_F).reshape(boxes.shape)


def rotated_canvas(in_wh: tuple[float, float], angle_deg: float) -> tuple[float, float]:
    """(width, height) of the canvas ``fn.rotate`` makes for an image of ``in_wh``."""
    from stoker.kernels.cpu.image.warp import rotated_size

    h, w = rotated_size((int(in_wh[1]), int(in_wh[0])), angle_deg)
    return float(w), float(h)


def rotate_boxes(rows: np.ndarray, ltrb: bool, angle_deg: float, in_wh: tuple[float, float],
                 out_wh: tuple[float, float], normalized: bool, mode: str,
                 remove_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Boxes of an image rotated by ``angle_deg`` (counter-clockwise on screen) about its
    centre onto a canvas of ``out_wh``: each box's corners are rotated, the enclosing box
    taken (``expand``), optionally shrunk back towards the original size (``fixed``,
    ``halfway``), clipped to the canvas, and dropped when less than ``remove_threshold``
    of it remains. Returns the boxes and the indices of those kept."""
    rows = rows.astype(_F)
    x0, y0, x1, y1 = (rows[:, k].copy() for k in range(4))
    if not ltrb:
        x1, y1 = x0 + x1, y0 + y1
    xs = np.stack([x0, x1, x0, x1], axis=1)
    ys = np.stack([y0, y0, y1, y1], axis=1)
    w_in, h_in = _F(in_wh[0]), _F(in_wh[1])
    if normalized:
        xs, ys = (xs - _F(0.5)) * w_in, (ys - _F(0.5)) * h_in
    else:
        xs, ys = xs - w_in / _F(2), ys - h_in / _F(2)
    old_w, old_h = xs[:, 1] - xs[:, 0], ys[:, 2] - ys[:, 0]
    angle = _F(_F(angle_deg) * _F(math.pi / 180))
    c, s = _F(math.cos(angle)), _F(math.sin(angle))
    xs, ys = xs * c + ys * s, -xs * s + ys * c
    w_out, h_out = _F(out_wh[0]), _F(out_wh[1])
    xs, ys = xs + w_out / _F(2), ys + h_out / _F(2)
    box = np.stack([xs.min(axis=1), ys.min(axis=1), xs.max(axis=1), ys.max(axis=1)], axis=1)
    if mode != "expand":
        new_w, new_h = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
        swapped = (old_w < old_h) ^ (new_w < new_h)
        dw = np.where(swapped, new_w - old_h, new_w - old_w) * _F(0.5)
        dh = np.where(swapped, new_h - old_w, new_h - old_h) * _F(0.5)
        if mode == "halfway":
            dw, dh = dw * _F(0.5), dh * _F(0.5)
        box = np.stack([box[:, 0] + dw, box[:, 1] + dh, box[:, 2] - dw, box[:, 3] - dh], 1)
    area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
    clipped = np.stack([np.clip(box[:, 0], 0, w_out), np.clip(box[:, 1], 0, h_out),
                        np.clip(box[:, 2], 0, w_out), np.clip(box[:, 3], 0, h_out)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        remain = ((clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])) / area
    keep = np.flatnonzero(remain >= _F(remove_threshold)).astype(np.int32)
    out = clipped[keep].astype(_F)
    if not ltrb:
        out[:, 2:] -= out[:, :2]
    if normalized:
        out *= np.array([_F(1) / w_out, _F(1) / h_out] * 2, _F)
    return out, keep


def encode_boxes(boxes: np.ndarray, labels: np.ndarray, anchors: np.ndarray, criteria: float,
                 offset: bool, scale: float, means: np.ndarray, stds: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """SSD's matching of ltrb ``boxes`` to ``anchors`` (M, 4): every box claims its best
    anchor (the last on ties), then every anchor takes its best box (the last on ties) if
    their IoU is above ``criteria``. Output (M, 4) in centre/size form ``(cx, cy, w, h)``
    (an unmatched anchor gives itself), or with ``offset`` the normalized offsets of the
    matched box from its anchor (zeros where unmatched); and (M,) labels, 0 unmatched."""
    m = len(anchors)
    if offset:  # only the matched anchors' centres and sizes are needed (EfficientDet: 49,104)
        out = np.zeros((m, 4), _F)
    else:
        out = np.empty((m, 4), _F)
        np.multiply(anchors[:, :2] + anchors[:, 2:], _F(0.5), out=out[:, :2])
        np.subtract(anchors[:, 2:], anchors[:, :2], out=out[:, 2:])
    out_labels = np.zeros(m, np.int32)
    if len(boxes) == 0:
        return out, out_labels
    from stoker.kernels.cpu.compiled import loops

    best_box, is_matched = loops("detection.box_encoder_loop").match_anchors(
        np.ascontiguousarray(boxes, _F), np.ascontiguousarray(anchors, _F), _F(criteria))
    matched = np.flatnonzero(is_matched)
    src = boxes[best_box[matched]]
    b_ctr = (src[:, :2] + src[:, 2:]) * _F(0.5)
    b_ext = src[:, 2:] - src[:, :2]
    if offset:
        sc = _F(scale)
        mine = anchors[matched]
        bc, be = b_ctr * sc, b_ext * sc
        ac = (mine[:, :2] + mine[:, 2:]) * _F(0.5) * sc
        ae = (mine[:, 2:] - mine[:, :2]) * sc
        ctr = ((bc - ac) / ae - means[:2]) / stds[:2]
        ext = (np.log(be / ae) - means[2:]) / stds[2:]
        out[matched] = np.concatenate([ctr, ext], axis=1)
    else:
        out[matched] = np.concatenate([b_ctr, b_ext], axis=1)
    out_labels[matched] = labels[best_box[matched]]
    return out, out_labels
