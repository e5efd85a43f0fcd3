"""Writes the tiny container files in stoker/readers/samples/ that the readers' schema
examples read (the contract battery runs every reader on them).

Re-run: ``python tests/data/record/reader_samples.py`` from the repository root (needs
numpy and lmdb, and astropy for mini.fits; ``... reader_samples.py fits`` writes only
that one). The files are a few hundred bytes each and change only when this
script does.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # tests/

import numpy as np  # noqa: E402
from container_writers import (  # noqa: E402
    C2_FLOAT,
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

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "stoker",
                   "readers", "samples")


def tfrecord() -> None:
    records = [example({"image/encoded": bytes([0xFF, 0xD8, k]), "image/class/label": [k],
                        "image/object/bbox/xmin": [0.25 * j for j in range(k)]})
               for k in range(3)]
    spans = write_tfrecord(os.path.join(OUT, "mini.tfrecord"), records)
    write_index(os.path.join(OUT, "mini.tfrecord.idx"), spans)


def webdataset() -> None:
    members = []
    for k in range(3):
        members += [(f"s{k}.jpg", bytes([0xFF, 0xD8, k])), (f"s{k}.cls", str(k).encode()),
                    (f"s{k}.f4", np.arange(k + 1, dtype=np.float32).tobytes())]
    path = os.path.join(OUT, "mini.tar")
    write_tar(path, members)
    # DALI's v1.2 index: data offsets (header + 512), as wds2idx writes them.
    lines = [" ".join(f"{name.split('.', 1)[1]} {512 * (2 * (3 * k + j) + 1)} {len(data)} "
                      f"{name}" for j, (name, data) in enumerate(members[3 * k:3 * k + 3]))
             for k in range(3)]
    with open(path + ".idx", "w") as f:
        f.write("v1.2 3\n" + "\n".join(lines) + "\n")


def numpy_files() -> None:
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    np.save(os.path.join(OUT, "mini.npy"), a)
    np.save(os.path.join(OUT, "mini_f.npy"), np.asfortranarray(a * 2))


def recordio() -> None:
    records = [irheader(1.0, 0) + bytes([0xFF, 0xD8, 0]),
               irheader([2.0, 3.0], 1) + bytes([0xFF, 0xD8, 1])]
    write_recordio(os.path.join(OUT, "mini.rec"), os.path.join(OUT, "mini.idx"), records)


def lmdb_dbs() -> None:
    import shutil

    for name in ("mini_caffe", "mini_caffe2"):
        shutil.rmtree(os.path.join(OUT, name), ignore_errors=True)
    write_lmdb(os.path.join(OUT, "mini_caffe"),
               [(f"{k:02d}".encode(), datum(bytes([0xFF, 0xD8, k]), k)) for k in range(3)])
    write_lmdb(os.path.join(OUT, "mini_caffe2"), [
        (f"{k:02d}".encode(), tensor_protos([
            tensor_proto(C2_STRING, bytes([0xFF, 0xD8, k])), tensor_proto(C2_INT32, [k]),
            tensor_proto(C2_FLOAT, [0.5 * k, 1.0]), tensor_proto(C2_INT32, [0, 0, 4, 4])]))
        for k in range(3)])
    for name in ("mini_caffe", "mini_caffe2"):  # readers open them without a lock file
        os.remove(os.path.join(OUT, name, "lock.mdb"))


def fits_file() -> None:
    from astropy.io import fits

    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(a), fits.ImageHDU(a.astype(np.float32) / 4),
                  fits.CompImageHDU(a.astype(np.int32) - 2, compression_type="RICE_1")]
                 ).writeto(os.path.join(OUT, "mini.fits"), overwrite=True)


if __name__ == "__main__" and sys.argv[1:] == ["fits"]:
    fits_file()
elif __name__ == "__main__":
    fits_file()
    tfrecord()
    webdataset()
    numpy_files()
    recordio()
    lmdb_dbs()
