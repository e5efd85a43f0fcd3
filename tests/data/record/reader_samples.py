"""Writes the tiny container files in stoker/readers/samples/ that the readers' schema
examples read (the contract battery runs every reader on them).

Re-run: ``python tests/data/record/reader_samples.py`` from the repository root (needs
only numpy and lmdb). The files are a few hundred bytes each and change only when this
script does.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # tests/

from container_writers import example, write_index, write_tfrecord  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "stoker",
                   "readers", "samples")


def tfrecord() -> None:
    records = [example({"image/encoded": bytes([0xFF, 0xD8, k]), "image/class/label": [k],
                        "image/object/bbox/xmin": [0.25 * j for j in range(k)]})
               for k in range(3)]
    spans = write_tfrecord(os.path.join(OUT, "mini.tfrecord"), records)
    write_index(os.path.join(OUT, "mini.tfrecord.idx"), spans)


if __name__ == "__main__":
    tfrecord()
