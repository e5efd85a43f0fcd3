"""``stoker.cli.coco_tfrecord``: a generated COCO dataset written as TFRecord shards reads
back through ``fn.readers.tfrecord`` with every image, box and label the JSON holds."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import stoker.tfrecord as tfrec
from stoker import fn, pipeline_def
from stoker.cli.coco_tfrecord import coco_to_tfrecord
from stoker.cli.make_coco import make_coco_dataset

pytest.importorskip("cv2")

FEATURES = {
    "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
    "image/filename": tfrec.FixedLenFeature((), tfrec.string, ""),
    "image/height": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "image/width": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0),
    "image/object/bbox/ymin": tfrec.VarLenFeature(tfrec.float32, 0.0),
    "image/object/bbox/xmax": tfrec.VarLenFeature(tfrec.float32, 0.0),
    "image/object/bbox/ymax": tfrec.VarLenFeature(tfrec.float32, 0.0),
    "image/object/class/label": tfrec.VarLenFeature(tfrec.int64, 0),
    "image/object/is_crowd": tfrec.VarLenFeature(tfrec.int64, 0),
}


def test_every_image_box_and_label_reads_back(tmp_path):
    file_root, ann = make_coco_dataset(tmp_path / "coco", images=7, seed=3)
    files, indexes = coco_to_tfrecord(file_root, ann, tmp_path / "tf", shards=2)
    assert [pathlib.Path(f).name for f in files] == ["train-00000-of-00002.tfrecord",
                                                   "train-00001-of-00002.tfrecord"]
    assert all(pathlib.Path(i).read_text().count("\n") >= 3 for i in indexes)

    @pipeline_def(batch_size=7, num_threads=1, device_id=None)
    def read():
        f = fn.readers.tfrecord(path=files, index_path=indexes, features=FEATURES)
        return tuple(f[name] for name in FEATURES)

    pipe = read()
    pipe.build()
    outs = [[np.asarray(s) for s in out] for out in pipe.run()]
    doc = json.loads(pathlib.Path(ann).read_text())
    by_name = {im["file_name"]: im for im in doc["images"]}
    seen = set()
    for k in range(7):
        sample = {name: outs[j][k] for j, name in enumerate(FEATURES)}
        name = sample["image/filename"].tobytes().decode()
        image = by_name[name]
        seen.add(name)
        assert sample["image/encoded"].tobytes() == (pathlib.Path(file_root) / name).read_bytes()
        h, w = image["height"], image["width"]
        assert sample["image/height"].tolist() == [h] and sample["image/width"].tolist() == [w]
        anns = [a for a in doc["annotations"] if a["image_id"] == image["id"]]
        want = np.array([a["bbox"] for a in anns], np.float64).reshape(-1, 4)
        got = np.stack([sample[f"image/object/bbox/{c}"] for c in ("xmin", "ymin", "xmax",
                                                                    "ymax")], 1)
        np.testing.assert_allclose(got, np.stack([want[:, 0] / w, want[:, 1] / h,
                                                  (want[:, 0] + want[:, 2]) / w,
                                                  (want[:, 1] + want[:, 3]) / h], 1),
                                   rtol=1e-6, atol=1e-7)
        assert sample["image/object/class/label"].tolist() == [a["category_id"] for a in anns]
        assert sample["image/object/is_crowd"].tolist() == [a["iscrowd"] for a in anns]
    assert seen == set(by_name)  # every image once, empty ones included


def test_records_are_framed_and_encoded_as_the_independent_writer_writes_them():
    from container_writers import example, tfrecord_frame

    from stoker.cli.coco_tfrecord import _framed, encode_example

    values = {"a": b"jpeg bytes", "b": np.array([1, -2, 300]), "c": np.array([0.5, 2.25]),
              "d": np.zeros(0)}
    payload = encode_example(values)
    assert payload == example({"a": b"jpeg bytes", "b": [1, -2, 300], "c": [0.5, 2.25],
                               "d": ("raw", bytes([0x12, 0x00]))})
    assert _framed(payload) == tfrecord_frame(payload)
