"""One small dataset per reader, for the tests every reader must pass alike (exactly once
per epoch across shards, checkpoints, skipping bad samples).

Sample ``i``'s first output holds the two bytes ``i % 256, i // 256``; ``sample_id``
reads them back. Container datasets spread their samples over three files (fewer for
fewer samples), so that
shards and epochs cross file boundaries. ``bad`` makes that sample unreadable in the
reader's own way (a garbage record, a truncated member, a broken header...).
"""

from __future__ import annotations

import os
import tarfile
from typing import Any

import numpy as np
from container_writers import (
    C2_INT32,
    C2_STRING,
    datum,
    example,
    irheader,
    tensor_proto,
    tensor_protos,
    write_index,
    write_lmdb,
    write_recordio,
    write_tar,
    write_tfrecord,
)

READERS = ("file", "coco", "tfrecord", "webdataset", "numpy", "mxnet", "caffe", "caffe2",
           "fits")


def reader_fn(reader: str) -> Any:
    """The fn function of reader ``reader`` (fits is DALI's experimental.readers.fits)."""
    from stoker import fn

    return fn.experimental.readers.fits if reader == "fits" else getattr(fn.readers, reader)


def _payload(i: int) -> bytes:
    return bytes([i % 256, i // 256])


def _split(n: int) -> list[range]:
    """The sample ids of each file: three files (fewer for n < 3), none empty."""
    k = min(3, n)
    cuts = [n * j // k for j in range(k + 1)]
    return [range(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def make(reader: str, root: str, n: int, bad: int | None = None) -> dict[str, Any]:
    """Writes the dataset under ``root`` (a fresh folder); returns fn.readers.<reader>'s
    keyword arguments. ``bad``: the id of a sample that cannot be read."""
    os.makedirs(root, exist_ok=True)
    return globals()[f"_{reader}"](root, n, bad)


def output(reader: str, outs: Any) -> Any:
    """The output that carries the sample ids, from a reader call's result."""
    if reader == "tfrecord":
        return outs["d"]
    return outs[0] if isinstance(outs, list | tuple) else outs


def sample_id(data: Any) -> int:
    a = np.asarray(data).reshape(-1)
    return int(a[0]) + 256 * int(a[1])


def _file(root: str, n: int, bad: int | None) -> dict:
    folder = os.path.join(root, "c0")
    os.makedirs(folder, exist_ok=True)
    for i in range(n):
        path = os.path.join(folder, f"{i:04d}.bin")
        if i == bad:
            os.symlink(path + ".missing", path)  # listed, but cannot be read
        else:
            with open(path, "wb") as f:
                f.write(_payload(i))
    return {"file_root": root, "file_filters": ["*.bin"]}


def _coco(root: str, n: int, bad: int | None) -> dict:
    """readers.file's files, listed by a COCO annotation file with image ids out of order."""
    import json

    folder = os.path.join(root, "img")
    os.makedirs(folder, exist_ok=True)
    images = []
    for i in range(n):
        path = os.path.join(folder, f"{i:04d}.bin")
        if i == bad:
            os.symlink(path + ".missing", path)
        else:
            with open(path, "wb") as f:
                f.write(_payload(i))
        images.append({"id": 1000 - i, "file_name": f"{i:04d}.bin", "height": 4, "width": 4})
    annotations = os.path.join(root, "annotations.json")
    with open(annotations, "w") as f:
        json.dump({"images": images, "annotations": [], "categories": []}, f)
    return {"file_root": folder, "annotations_file": annotations}


def _tfrecord(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for f, ids in enumerate(_split(n)):
        path = os.path.join(root, f"{f}.tfrecord")
        records = [b"\x0a\xff\xff" if i == bad else example({"d": _payload(i)}) for i in ids]
        spans = write_tfrecord(path, records)
        write_index(path + ".idx", spans)
        paths.append(path)
    from stoker import tfrecord as tfrec

    return {"path": paths, "index_path": [p + ".idx" for p in paths],
            "features": {"d": tfrec.FixedLenFeature([], tfrec.string, "")}}


def _webdataset(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for f, ids in enumerate(_split(n)):
        path = os.path.join(root, f"{f}.tar")
        head = [i for i in ids if bad not in ids or i <= bad]
        write_tar(path, [(f"{i:04d}.d", _payload(i) * (300 if i == bad else 1)) for i in head])
        paths.append(path)
        if bad in ids:
            # Cut the archive inside the bad sample's data; the samples after it go to a
            # tar of their own, so that only the bad one is lost.
            with tarfile.open(path) as tar:
                at = tar.getmember(f"{bad:04d}.d").offset_data
            with open(path, "r+b") as fh:
                fh.truncate(at + 10)
            tail = [i for i in ids if i > bad]
            if tail:
                paths.append(os.path.join(root, f"{f}_tail.tar"))
                write_tar(paths[-1], [(f"{i:04d}.d", _payload(i)) for i in tail])
    return {"paths": paths, "ext": ["d"]}


def _numpy(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for i in range(n):
        path = os.path.join(root, f"{i:04d}.npy")
        if i == bad:
            with open(path, "wb") as f:
                f.write(b"\x93NUMPY\x01\x00\x10\x00{broken header}\n")
        else:
            np.save(path, np.frombuffer(_payload(i), np.uint8))
        paths.append(path)
    return {"files": paths}


def fits_bytes(payload: bytes) -> bytes:
    """A FITS file: an empty primary HDU, then an image extension of ``payload`` (bytes,
    BITPIX 8, 1-D); written by hand so that the datasets need no astropy."""
    def header(cards: list[tuple[str, object]]) -> bytes:
        def value(v: object) -> str:
            return f"'{v:<8}'" if isinstance(v, str) else f"{'T' if v is True else v:>20}"

        text = "".join(f"{k:<8}= {value(v)}".ljust(80) for k, v in cards) + "END".ljust(80)
        return text.encode().ljust(-(-len(text) // 2880) * 2880, b" ")

    primary = header([("SIMPLE", True), ("BITPIX", 8), ("NAXIS", 0), ("EXTEND", True)])
    ext = header([("XTENSION", "IMAGE"), ("BITPIX", 8), ("NAXIS", 1),
                  ("NAXIS1", len(payload)), ("PCOUNT", 0), ("GCOUNT", 1)])
    return primary + ext + payload.ljust(-(-len(payload) // 2880) * 2880, b"\0")


def _fits(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for i in range(n):
        path = os.path.join(root, f"{i:04d}.fits")
        data = fits_bytes(_payload(i))
        with open(path, "wb") as f:
            f.write(data[:3000] if i == bad else data)  # bad: cut inside the extension
        paths.append(path)
    return {"files": paths}


def _mxnet(root: str, n: int, bad: int | None) -> dict:
    paths, offsets, start = [], [], 0
    for f, ids in enumerate(_split(n)):
        path = os.path.join(root, f"{f}.rec")
        records = [irheader(float(i)) + _payload(i) for i in ids]
        offs = write_recordio(path, None, records, start=start)
        if bad in ids:  # overwrite the bad record's magic number
            with open(path, "r+b") as fh:
                fh.seek(offs[ids.index(bad)] - start)
                fh.write(b"XXXX")
        offsets += offs
        start += os.path.getsize(path)
        paths.append(path)
    with open(os.path.join(root, "all.idx"), "w") as fh:
        fh.writelines(f"{k}\t{o}\n" for k, o in enumerate(offsets))
    return {"path": paths, "index_path": [os.path.join(root, "all.idx")]}


def _caffe(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for f, ids in enumerate(_split(n)):
        path = os.path.join(root, f"db{f}")
        write_lmdb(path, [(f"{i:04d}".encode(), b"\x0a\xff" if i == bad else
                           datum(_payload(i), i)) for i in ids])
        paths.append(path)
    return {"path": paths}


def _caffe2(root: str, n: int, bad: int | None) -> dict:
    paths = []
    for f, ids in enumerate(_split(n)):
        path = os.path.join(root, f"db{f}")
        write_lmdb(path, [(f"{i:04d}".encode(), b"\x0a\xff" if i == bad else tensor_protos([
            tensor_proto(C2_STRING, _payload(i)), tensor_proto(C2_INT32, [i])])) for i in ids])
        paths.append(path)
    return {"path": paths}
