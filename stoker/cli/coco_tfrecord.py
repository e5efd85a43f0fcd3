"""COCO-style detection data as TFRecord shards of ``tf.train.Example``, without TensorFlow.

The records carry the features TensorFlow's object-detection converters write (the
EfficientDet repository's ``create_coco_tfrecord.py`` among them): ``image/encoded`` (the
JPEG), ``image/height``, ``image/width``, ``image/source_id``, ``image/filename``,
``image/format``, ``image/object/bbox/{xmin,ymin,xmax,ymax}`` relative to the image,
``image/object/class/label`` (the COCO category id), ``image/object/is_crowd`` and
``image/object/area``. Each shard gets DALI's index beside it (``<shard>_idx``, what
``tfrecord2idx`` writes). Used by ``examples/efficientdet_tfrecord.py`` and its test.
"""

from __future__ import annotations

import json
import os
import pathlib
import struct
from typing import Any

import numpy as np

# -- protobuf's wire format, as much of it as tf.train.Example needs --------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 takes ten bytes
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _feature(value: Any) -> bytes:
    """A ``tf.train.Feature``: bytes -> BytesList (1), a float array -> FloatList (2,
    packed), an integer array -> Int64List (3, packed). (The array's dtype decides, so an
    empty list of boxes is still a FloatList, as a reader of float32 features expects.)"""
    if isinstance(value, bytes):
        return _field(1, _field(1, value))
    kind = 2 if value.dtype.kind == "f" else 3
    if not len(value):  # an empty list, as protobuf writes it: no packed field at all
        return _field(kind, b"")
    if kind == 2:
        return _field(2, _field(1, value.astype("<f4").tobytes()))
    return _field(3, _field(1, b"".join(_varint(int(v)) for v in value)))


def encode_example(features: dict[str, Any]) -> bytes:
    """A serialized ``tf.train.Example`` (Features (1) -> map<string, Feature> (1))."""
    entries = b"".join(_field(1, _field(1, name.encode()) + _field(2, _feature(value)))
                       for name, value in features.items())
    return _field(1, entries)


def _framed(payload: bytes) -> bytes:
    """One TFRecord record: length, masked CRC32C of the length, payload, its CRC."""
    from stoker.kernels.cpu.compiled import loops

    tf = loops("readers.tfrecord_loops")
    length = struct.pack("<Q", len(payload))

    def crc(data: bytes) -> bytes:
        buf = np.frombuffer(data, np.uint8)
        return struct.pack("<I", tf.masked_crc32c(buf, 0, len(buf), tf._CRC_TABLE))

    return length + crc(length) + payload + crc(payload)


# -- the conversion ---------------------------------------------------------------------------


def coco_to_tfrecord(file_root: str | os.PathLike, annotations_file: str | os.PathLike,
                     out_dir: str | os.PathLike, shards: int = 2
                     ) -> tuple[list[str], list[str]]:
    """Writes ``out_dir/train-0000i-of-0000n.tfrecord`` (images dealt round-robin over
    ``shards`` files, in the annotation file's order) and their indexes; returns
    ``(tfrecord paths, index paths)``. Annotations with no area are left out, as the
    converters do."""
    from stoker.cli.indexes import tfrecord_index

    doc = json.loads(pathlib.Path(annotations_file).read_text())
    per_image: dict[int, list[dict[str, Any]]] = {}
    for ann in doc["annotations"]:
        per_image.setdefault(ann["image_id"], []).append(ann)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [str(out / f"train-{k:05d}-of-{shards:05d}.tfrecord") for k in range(shards)]
    files = [open(p, "wb") for p in paths]  # noqa: SIM115 (closed below, all together)
    try:
        for i, image in enumerate(doc["images"]):
            h, w = image["height"], image["width"]
            anns = [a for a in per_image.get(image["id"], ())
                    if a["bbox"][2] > 0 and a["bbox"][3] > 0]
            boxes = np.array([a["bbox"] for a in anns], np.float64).reshape(-1, 4)
            x, y, bw, bh = boxes.T
            features = {
                "image/height": np.array([h]), "image/width": np.array([w]),
                "image/filename": image["file_name"].encode(),
                "image/source_id": str(image["id"]).encode(),
                "image/encoded": (pathlib.Path(file_root) / image["file_name"]).read_bytes(),
                "image/format": b"jpeg",
                "image/object/bbox/xmin": x / w,
                "image/object/bbox/xmax": (x + bw) / w,
                "image/object/bbox/ymin": y / h,
                "image/object/bbox/ymax": (y + bh) / h,
                "image/object/class/label": np.array([a["category_id"] for a in anns], int),
                "image/object/is_crowd": np.array([a.get("iscrowd", 0) for a in anns], int),
                "image/object/area": np.array([a.get("area", 0.0) for a in anns], float),
            }
            files[i % shards].write(_framed(encode_example(features)))
    finally:
        for f in files:
            f.close()
    indexes = [p + "_idx" for p in paths]
    for data, index in zip(paths, indexes, strict=True):
        tfrecord_index(data, index)
    return paths, indexes
