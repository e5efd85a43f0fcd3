"""Crop windows of images, sequences and volumes, cut as 2-D windows of planes.

DALI's crop and crop_mirror_normalize take HWC/CHW images, FHWC/FCHW/CFHW sequences,
DHWC/CDHW volumes and FDHWC/FCDHW/CFDHW sequences of volumes (stoker also takes HW grey
images). The window always spans H and W; it spans the depth too when one is asked for
(``crop_d``, or a 3-value ``crop``): the D axis, or on a sequence without D the frames (DALI
treats the frames of a sequence as its depth then). A depth asked of an image is ignored,
as is ``crop_pos_z``.

Every layout is seen as (n, lead..., H, W, C) - lead being the F and D axes in the input's
order - and cut as planes: the depth window picks planes (a view when the chunk's depth
windows agree and stay inside), the 2-D kernels cut the H x W windows of all planes in one
call, and planes of a depth window that leaves the volume come out as the fill value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from stoker.kernels.cpu.image import crop as K
from stoker.kernels.cpu.tensor.tensor import c_cast

LAYOUTS = ("HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW")
# Data without a layout, by sample dimensions (DALI reads 3-D as HWC and 4-D as DHWC).
DEFAULT_LAYOUT = {2: "HW", 3: "HWC", 4: "DHWC"}


def sample_layout(layout: str, ndim: int) -> str:
    """The layout of ``ndim``-D samples (guessed when empty), checked against LAYOUTS."""
    layout = layout or DEFAULT_LAYOUT.get(ndim, "")
    if (layout not in LAYOUTS and layout != "HW") or len(layout) != ndim:
        raise ValueError(bad_layout(layout or "?" * ndim))
    return layout


def bad_layout(layout: str) -> str:
    # DALI's wording (programs and its tests match it), plus stoker's extra HW.
    return (f'The layout "{layout}" does not match any of the allowed layouts for input 0. '
            f"Valid layouts are: {', '.join(LAYOUTS)} (and HW)")


def out_letters(layout: str, requested: str | None) -> str:
    """crop_mirror_normalize's output layout: ``requested`` must order the input's axes
    (DALI's rule); a sequence may leave out its leading F (stoker keeps it in front)."""
    if layout == "HW":
        return layout  # stoker's grey images stay grey (DALI takes none)
    out = requested or layout
    if "F" in layout and "F" not in out:
        out = "F" + out
    if sorted(out) != sorted(layout):
        raise ValueError(f"'output_layout' {out!r} must be a permutation of the input "
                         f"layout {layout!r}")
    return out


def _common_size(value: Any, what: str) -> int:
    """One window extent for the chunk (per-sample values must agree here: the executor
    then runs the samples one by one); 0 or less keeps the whole extent. DALI truncates a
    fractional size (crop=20.9 gives 20 rows)."""
    if isinstance(value, int | float):  # the usual constant: no numpy on the way
        return int(value) if value > 0 else 0
    arr = np.asarray(value, np.float64).reshape(-1)
    if arr.size == 0:
        return 0
    if (arr != arr[0]).any():
        raise ValueError(f"per-sample {what} differs within the chunk")
    return int(arr[0]) if arr[0] > 0 else 0


def requested_sizes(args: dict) -> tuple[int, int, int]:
    """(depth, height, width) asked for; 0 keeps the axis whole (no depth: 0)."""
    crop = args.get("crop")
    if isinstance(crop, list) and len(crop) in (2, 3):  # constant: no numpy on the way
        return (_common_size(crop[0], "crop") if len(crop) == 3 else 0,
                _common_size(crop[-2], "crop"), _common_size(crop[-1], "crop"))
    if crop is not None:
        arr = np.asarray(crop, np.float64)
        rows = arr.reshape(arr.shape[0], -1) if isinstance(crop, np.ndarray) and \
            arr.ndim == 2 else arr.reshape(1, -1)
        k = rows.shape[1]
        d = _common_size(rows[:, 0], "crop") if k == 3 else 0
        return d, _common_size(rows[:, -2], "crop"), _common_size(rows[:, -1], "crop")
    return (_common_size(args.get("crop_d", 0.0), "crop_d"),
            _common_size(args.get("crop_h", 0.0), "crop_h"),
            _common_size(args.get("crop_w", 0.0), "crop_w"))


def _anchors(pos: Any, n: int, extent: int, size: int, rounding: str) -> np.ndarray:
    """(n,) anchors of windows at relative positions ``pos`` (one, or one per sample)."""
    if isinstance(pos, int | float):  # the usual constant: one anchor, no numpy math
        return np.full(n, K.anchor_of(pos, extent, size, rounding), np.int64)
    arr = np.asarray(pos, np.float64).reshape(-1)
    return K.window_anchor(arr if arr.size == n else np.full(n, arr[0]), extent, size,
                           rounding)


@dataclass
class Cut:
    """The planes of a chunk and their 2-D windows, and how to put the results back."""

    planes: np.ndarray  # (m, H, W, C): the kernels' input (strided views are fine)
    ay: np.ndarray  # (m,) per-plane anchors
    ax: np.ndarray
    ch: int
    cw: int
    n: int
    lead: str  # letters of the axes before H, W (F, D) in the input's order
    lead_shape: tuple[int, ...]  # their extents in the output
    outside: np.ndarray | None  # (n, *lead_shape) planes of a depth window outside
    per_sample: int  # planes per sample: the product of lead_shape

    def repeat(self, value: Any) -> Any:
        """A per-sample argument (stacked on axis 0) repeated for each sample's planes."""
        k = self.per_sample
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == self.n \
                and k != 1:
            return np.repeat(value, k, axis=0)
        return value

    def finish(self, out: np.ndarray, letters: str, target: str, fill: np.ndarray) -> np.ndarray:
        """Kernel results (m, ...) laid out as ``letters`` (the planes' axes after the lead
        ones: 'HWC' or 'CHW') -> the chunk in the ``target`` layout (without 'C' for HW);
        planes outside the depth window become ``fill`` (one value per channel)."""
        arr = out.reshape(self.n, *self.lead_shape, *out.shape[1:])
        if self.outside is not None and self.outside.any():
            arr[self.outside] = fill if letters.endswith("C") else fill[:, None, None]
        have = self.lead + letters
        if "C" not in target:
            arr = arr[..., 0] if letters.endswith("C") else arr[..., 0, :, :]
            have = have.replace("C", "")
        if have != target:
            arr = arr.transpose(0, *[1 + have.index(c) for c in target])
        return np.ascontiguousarray(arr)


def cut(chunk: np.ndarray, layout: str, args: dict, extents: tuple[int, int] | None = None,
        offsets: tuple[np.ndarray, np.ndarray] | None = None) -> Cut:
    """The planes and windows of a dense chunk (n, *sample) of ``layout``.

    ``extents``/``offsets``: the window is placed in an (h, w) region at per-sample
    offsets of the planes rather than in the whole plane (a crop folded into this one).
    Raises ``K.OutOfBoundsError`` for a window leaving the sample under policy "error".
    """
    n = chunk.shape[0]
    lead = "".join(c for c in layout if c not in "HWC")
    order = lead + "HW" + ("C" if "C" in layout else "")
    view = chunk.transpose(0, *[1 + layout.index(c) for c in order])
    if "C" not in layout:
        view = view[..., None]
    h, w = view.shape[-3:-1]
    rh, rw = extents if extents is not None else (h, w)
    want_d, want_h, want_w = requested_sizes(args)
    depth = ("D" if "D" in lead else "F" if "F" in lead else None) if want_d > 0 else None
    policy = args.get("out_of_bounds_policy", "error")
    rounding = args.get("rounding", "round")
    axes = [("H", rh, want_h, "crop_pos_y"), ("W", rw, want_w, "crop_pos_x")]
    if depth is not None:
        axes.insert(0, (depth, view.shape[1 + lead.index(depth)], want_d, "crop_pos_z"))
    windows = {}
    for letter, extent, want, pos in axes:
        size = want if want > 0 else extent
        anchor = _anchors(args.get(pos, 0.5), n, extent, size, rounding)
        if policy == "trim_to_shape":
            anchor, size = K.trim_window(anchor, size, extent)
        windows[letter] = (anchor, size)
    if policy == "error":
        _check_inside(view, layout, lead, depth, windows, (rh, rw))
    lead_shape = list(view.shape[1:1 + len(lead)])
    outside = None
    if depth is not None:
        view, outside = _depth_window(view, 1 + lead.index(depth), *windows[depth])
        lead_shape[lead.index(depth)] = windows[depth][1]
        if outside is not None:
            outside = np.broadcast_to(
                outside.reshape(n, *[lead_shape[i] if c == depth else 1
                                     for i, c in enumerate(lead)]), (n, *lead_shape)).copy()
    k = math.prod(lead_shape)
    ay, ax = windows["H"][0], windows["W"][0]
    if offsets is not None:
        ay, ax = ay + offsets[0], ax + offsets[1]
    planes = view.reshape(n * k, *view.shape[-3:])
    if k != 1:
        ay, ax = np.repeat(ay, k), np.repeat(ax, k)
    return Cut(planes, ay, ax, windows["H"][1], windows["W"][1], n, lead,
               tuple(int(e) for e in lead_shape), outside, int(k))


def _depth_window(view: np.ndarray, axis: int, anchor: np.ndarray, size: int
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """The planes of each sample's depth window, and which are outside (None: none)."""
    extent = view.shape[axis]
    if len(anchor) and (anchor == anchor[0]).all() and 0 <= anchor[0] and \
            anchor[0] + size <= extent:
        index = [slice(None)] * view.ndim
        index[axis] = slice(int(anchor[0]), int(anchor[0]) + size)
        return view[tuple(index)], None
    idx = anchor[:, None] + np.arange(size)
    outside = (idx < 0) | (idx >= extent)
    take = np.clip(idx, 0, max(extent - 1, 0)).reshape(
        len(anchor), *[size if a == axis else 1 for a in range(1, view.ndim)])
    if extent == 0:  # nothing to take from: every plane is fill
        shape = list(view.shape)
        shape[axis] = size
        return np.zeros(shape, view.dtype), outside
    return np.take_along_axis(view, take, axis=axis), (outside if outside.any() else None)


def _check_inside(view: np.ndarray, layout: str, lead: str, depth: str | None,
                  windows: dict, region: tuple[int, int]) -> None:
    extents = {"H": region[0], "W": region[1]}
    if depth is not None:
        extents[depth] = view.shape[1 + lead.index(depth)]
    bad = np.zeros(view.shape[0], bool)
    for letter, (anchor, size) in windows.items():
        bad |= (anchor < 0) | (anchor + size > extents[letter])
    if bad.any():
        j = int(np.argmax(bad))
        shape = view.shape[1:] if "C" in layout else view.shape[1:-1]
        dims = dict(zip(lead + "HW" + ("C" if "C" in layout else ""), shape, strict=True))
        dims.update(extents)
        anchor = [int(windows[c][0][j]) if c in windows else 0 for c in layout]
        size = [windows[c][1] if c in windows else dims[c] for c in layout]
        raise K.out_of_bounds([dims[c] for c in layout], anchor, size)


def fill_or_zero(fill: Any, c: int, needed: bool) -> np.ndarray:
    """(c,) float64 fill values: one value for all channels or one per channel. DALI only
    minds a wrong count under out_of_bounds_policy "pad" (``needed``)."""
    arr = np.asarray(fill, np.float64).reshape(-1)
    if arr.size == c:
        return arr.copy()
    if arr.size == 1:
        return np.full(c, arr[0])
    if needed:
        raise ValueError(f"argument 'fill_values' has {arr.size} values for {c} channels; "
                         "give one, or one per channel (the number of per-channel arguments "
                         "should match the number of channels in the output)")
    return np.zeros(c)


def fill_cast(fill: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Fill values in the output type as DALI converts them (C++'s static_cast: toward
    zero, then wrapped: -3.5 -> -3, and 300 -> 44 as uint8), unlike the saturating,
    rounding conversion of pixel values."""
    return c_cast(fill, dtype)
