"""Tile-compressed FITS images: RICE_1 decoding, tiles put back into the image, and the
dequantization of float tiles, compiled (numba, GIL released).

RICE_1 (the FITS tiled image compression convention, Pence et al.): a tile starts with
its first pixel, ``bytepix`` bytes big-endian; the rest is a bit stream, most significant
bit first, of blocks of ``blocksize`` pixel differences. Each block opens with an
``fsbits``-bit code (3, 4, 5 bits for 1, 2, 4 bytes a pixel) holding ``fs + 1``: 0 means
every difference of the block is zero, ``fsmax + 1`` (7, 15, 26) means each difference is
stored whole in ``8 * bytepix`` bits, anything else means each difference is a unary
count of leading zeros ended by a one bit (the high part) followed by ``fs`` low bits.
Differences are folded to unsigned (``2d`` for ``d >= 0``, ``-2d - 1`` below) and each
pixel is the previous one plus its difference, modulo ``2 ** (8 * bytepix)``.

Tiles are numbered with the first FITS axis (numpy's last) fastest; a tile holds its
pixels in the same order.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.jit import njit

N_RANDOM = 10000


@njit(nogil=True, cache=True, inline="always")
def _fill(heap, p, end, buf, nb, need):  # pragma: no cover - compiled
    """Bytes into the bit buffer until it holds ``need`` bits: (buf, p, nb), nb -1 when
    the tile's bytes run out first."""
    while nb < need:
        if p >= end:
            return buf, p, -1
        buf = ((buf << np.uint64(8)) | np.uint64(heap[p])) & np.uint64(0xFFFFFFFFFFFF)
        p += 1
        nb += 8
    return buf, p, nb


@njit(nogil=True, cache=True, inline="always")
def _undiff(last, diff, mask):  # pragma: no cover - compiled
    """The next pixel from the last and a zigzag-coded difference."""
    if diff & np.uint64(1):
        return (last - (diff >> np.uint64(1)) - np.uint64(1)) & mask
    return (last + (diff >> np.uint64(1))) & mask


@njit(nogil=True, cache=True)
def rice_tiles(heap, starts, sizes, lengths, bytepix, blocksize, out):  # pragma: no cover
    """Decodes tile ``t`` (``sizes[t]`` bytes at ``heap[starts[t]:]``, ``lengths[t]``
    pixels) into ``out`` after the tiles before it (``out``: unsigned, ``bytepix`` bytes
    an element). Returns -1, or the first tile whose bytes ran out."""
    if bytepix == 1:
        fsbits, fsmax, bbits = 3, 6, 8
    elif bytepix == 2:
        fsbits, fsmax, bbits = 4, 14, 16
    else:
        fsbits, fsmax, bbits = 5, 25, 32
    mask = (np.uint64(1) << np.uint64(bbits)) - np.uint64(1)
    o = 0
    for t in range(len(starts)):
        p = starts[t]
        end = p + sizes[t]
        n = lengths[t]
        if sizes[t] < bytepix:
            return t
        last = np.uint64(0)
        for _ in range(bytepix):
            last = (last << np.uint64(8)) | np.uint64(heap[p])
            p += 1
        buf = np.uint64(0)  # the bits read and not used yet, the last ``nb`` of them
        nb = 0
        i = 0
        while i < n:
            buf, p, nb = _fill(heap, p, end, buf, nb, fsbits)
            if nb < 0:
                return t
            nb -= fsbits
            fs = int((buf >> np.uint64(nb)) & np.uint64((1 << fsbits) - 1)) - 1
            stop = min(i + blocksize, n)
            if fs < 0:
                for j in range(i, stop):
                    out[o + j] = last
            elif fs == fsmax:
                for j in range(i, stop):
                    buf, p, nb = _fill(heap, p, end, buf, nb, bbits)
                    if nb < 0:
                        return t
                    nb -= bbits
                    last = _undiff(last, (buf >> np.uint64(nb)) & mask, mask)
                    out[o + j] = last
            else:
                for j in range(i, stop):
                    high = 0
                    while True:  # the unary part: zeros up to a one
                        if nb == 0:
                            if p >= end:
                                return t
                            buf = np.uint64(heap[p])
                            p += 1
                            nb = 8
                        nb -= 1
                        if (buf >> np.uint64(nb)) & np.uint64(1):
                            break
                        high += 1
                    buf, p, nb = _fill(heap, p, end, buf, nb, fs)
                    if nb < 0:
                        return t
                    nb -= fs
                    low = (buf >> np.uint64(nb)) & ((np.uint64(1) << np.uint64(fs)) -
                                                    np.uint64(1))
                    last = _undiff(last, ((np.uint64(high) << np.uint64(fs)) | low) & mask,
                                   mask)
                    out[o + j] = last
            i = stop
        o += n
    return -1


@njit(nogil=True, cache=True, inline="always")
def _advance(index, limits, a):  # pragma: no cover - compiled
    """Adds one to the counter ``index`` from axis ``a`` on (axis a fastest, each axis
    wrapping at ``limits``); returns the axis the carry stopped at, ``len(index)`` when
    every axis from ``a`` wrapped."""
    while a < len(index):
        index[a] += 1
        if index[a] < limits[a]:
            break
        index[a] = 0
        a += 1
    return a


@njit(nogil=True, cache=True)
def untile(tiles, image, naxes, ztile):  # pragma: no cover
    """Puts the concatenated tiles back into ``image`` (flat, C order of the image whose
    FITS axis lengths are ``naxes``, first axis fastest)."""
    nd = len(naxes)
    counts = np.empty(nd, np.int64)
    for a in range(nd):
        counts[a] = (naxes[a] + ztile[a] - 1) // ztile[a]
    strides = np.empty(nd, np.int64)
    s = 1
    for a in range(nd):
        strides[a] = s
        s *= naxes[a]
    ntiles = 1
    for a in range(nd):
        ntiles *= counts[a]
    tidx = np.zeros(nd, np.int64)  # which tile, per axis
    first = np.empty(nd, np.int64)
    ext = np.empty(nd, np.int64)
    pos = np.zeros(nd, np.int64)
    src = 0
    for _ in range(ntiles):
        base = 0
        for a in range(nd):
            first[a] = tidx[a] * ztile[a]
            ext[a] = min(ztile[a], naxes[a] - first[a])
            base += first[a] * strides[a]
            pos[a] = 0
        run = ext[0]
        while True:
            off = base
            for a in range(1, nd):
                off += pos[a] * strides[a]
            for k in range(run):
                image[off + k] = tiles[src + k]
            src += run
            if _advance(pos, ext, 1) >= nd:
                break
        _advance(tidx, counts, 0)


@njit(nogil=True, cache=True)
def random_table():  # pragma: no cover
    """The convention's 10000 uniform numbers (Park and Miller's generator, seed 1)."""
    table = np.empty(N_RANDOM, np.float32)
    a, m, seed = 16807.0, 2147483647.0, 1.0
    for i in range(N_RANDOM):
        temp = a * seed
        seed = temp - m * np.floor(temp / m)
        table[i] = seed / m
    return table


@njit(nogil=True, cache=True)
def dequantize(ints, lengths, scales, zeros, method, dither0, blank, has_blank, null,
               table, out):  # pragma: no cover
    """Float tiles from their quantized integers: ``method`` 0 (none: i * scale + zero),
    1 (subtractive dither: (i - r + 0.5) * scale + zero, r from ``table`` at a place set
    by the tile's number and ``dither0``), 2 (as 1, and the integer -2147483646 is an
    exact zero). The integer ``blank`` (when ``has_blank``) becomes ``null``."""
    o = 0
    for t in range(len(lengths)):
        scale, zero = scales[t], zeros[t]
        iseed = (t + dither0 - 1) % N_RANDOM
        nxt = int(table[iseed] * 500.0)
        for j in range(o, o + lengths[t]):
            v = ints[j]
            if has_blank and v == blank:
                out[j] = null
            elif method == 2 and v == -2147483646:
                out[j] = 0.0
            elif method == 0:
                out[j] = v * scale + zero
            else:
                out[j] = (v - table[nxt] + 0.5) * scale + zero
            if method != 0:
                nxt += 1
                if nxt == N_RANDOM:
                    iseed += 1
                    if iseed == N_RANDOM:
                        iseed = 0
                    nxt = int(table[iseed] * 500.0)
        o += lengths[t]
