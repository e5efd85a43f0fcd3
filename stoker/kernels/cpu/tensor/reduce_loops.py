"""Min and max over the reduced axes of a 4-D view, compiled with numba (GIL released).

The views are those of ``stats.four_axes``: (K0, R0, K1, R1), or (R0, K0, R1, K1) when
the innermost axis is kept; the loops walk memory in order, so an HWC image's min over
H and W (or over C) streams through it once.
"""

from __future__ import annotations

from stoker.kernels.cpu.jit import njit


@njit(nogil=True, cache=True)
def group_extreme(x, largest, inner_kept, acc):  # pragma: no cover - compiled
    """acc[k0, k1] = min (or max when ``largest``) of acc and the view's reduced values."""
    n0, n1, n2, n3 = x.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                if inner_kept:
                    for f in range(n3):
                        v = x[a, b, c, f]
                        if largest:
                            if v > acc[b, f]:
                                acc[b, f] = v
                        elif v < acc[b, f]:
                            acc[b, f] = v
                else:
                    t = acc[a, c]
                    for f in range(n3):
                        v = x[a, b, c, f]
                        if largest:
                            t = max(t, v)
                        else:
                            t = min(t, v)
                    acc[a, c] = t
