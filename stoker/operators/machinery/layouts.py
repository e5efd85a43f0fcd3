"""Layouts that only the samples can tell: DALI's image operators name unnamed axes.

stoker decides layouts when the graph is built. DALI decides them at run time, and its
color operators (brightness ... color_space_conversion) give an input without a layout
the layout of an image of its number of dimensions: HWC for 3-D samples, FHWC for 4-D
(measured on DALI 2.4). ``NdimLayout`` carries that rule on the output node: while the
graph is built it is the empty layout (every rule that reads layouts then sees ""), and
the layout a batch is delivered with is read from its samples (``run_layout``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class NdimLayout(str):
    """The empty layout, with the layout to report for each number of dimensions."""

    by_ndim: dict[int, str]

    def __new__(cls, by_ndim: dict[int, str]) -> NdimLayout:
        layout = super().__new__(cls, "")
        layout.by_ndim = dict(by_ndim)
        return layout

    def __getnewargs__(self) -> tuple:  # pickles (checkpoints, workers) keep the rule
        return (self.by_ndim,)

    def __repr__(self) -> str:
        return f"NdimLayout({self.by_ndim!r})"


# DALI's color operators on an input without a layout.
IMAGE_LAYOUTS = NdimLayout({3: "HWC", 4: "FHWC"})


def sample_ndim(batch: Any) -> int | None:
    """The number of dimensions of a batch's samples (a dense array or tensor with the
    sample axis first, or a list of samples); None for an empty list."""
    if isinstance(batch, list | tuple):
        return np.ndim(batch[0]) if batch else None
    return batch.ndim - 1


def run_layout(layout: str | None, batch: Any) -> str:
    """The layout a batch is delivered with: ``layout``, or what its rule says for the
    batch's samples."""
    if isinstance(layout, NdimLayout):
        ndim = sample_ndim(batch)
        return layout.by_ndim.get(ndim, "") if ndim is not None else ""
    return layout or ""


def image_layout(layouts: list, args: dict) -> str:
    """The layout rule of DALI's color operators: the input's, or HWC/FHWC by rank."""
    return layouts[0] or IMAGE_LAYOUTS
