"""Connected blobs of a boolean N-d mask (neighbours along each axis), as one compiled loop."""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True)
def _find(parent, i):  # pragma: no cover - compiled
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:  # path compression
        nxt = parent[i]
        parent[i] = root
        i = nxt
    return root


@njit(nogil=True, cache=True)
def blob_boxes(mask, shape, strides):  # pragma: no cover - compiled
    """For the flat C-order ``mask`` of ``shape`` (element ``strides``): per blob, in the
    order of its first pixel, the (lo, hi) corners of its bounding box (hi one past the
    end) and its pixel count."""
    n = mask.size
    ndim = shape.size
    parent = np.arange(n)
    coord = np.zeros(ndim, np.int64)
    for i in range(n):
        if mask[i]:
            for d in range(ndim):
                if coord[d] > 0 and mask[i - strides[d]]:
                    a, b = _find(parent, i), _find(parent, i - strides[d])
                    if a != b:
                        if a < b:
                            parent[b] = a
                        else:
                            parent[a] = b
        d = ndim - 1  # advance the coordinate
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                break
            coord[d] = 0
            d -= 1
    label = np.full(n, -1, np.int64)
    count = 0
    for i in range(n):
        if mask[i]:
            root = _find(parent, i)
            if label[root] < 0:
                label[root] = count
                count += 1
            label[i] = label[root]
    lo = np.empty((count, ndim), np.int64)
    hi = np.empty((count, ndim), np.int64)
    volume = np.zeros(count, np.int64)
    for k in range(count):
        for d in range(ndim):
            lo[k, d] = shape[d]
            hi[k, d] = 0
    coord[:] = 0
    for i in range(n):
        k = label[i]
        if k >= 0:
            volume[k] += 1
            for d in range(ndim):
                if coord[d] < lo[k, d]:
                    lo[k, d] = coord[d]
                if coord[d] + 1 > hi[k, d]:
                    hi[k, d] = coord[d] + 1
        d = ndim - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                break
            coord[d] = 0
            d -= 1
    return lo, hi, volume
