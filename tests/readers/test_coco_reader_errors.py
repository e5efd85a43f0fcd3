"""``fn.readers.coco``: bad annotation files, bad arguments, and the reader contract.

Bad input fails with an error naming the file and the entry (at build, where DALI also
fails at build), or is skipped and reported under ``on_error="skip"``. The reader shares
``fn.readers.file``'s machinery, checked here through COCO: sharding, exact shuffles,
checkpoints, epochs.
"""

from __future__ import annotations

import copy
import json
import pathlib
import re

import numpy as np
import pytest

from stoker import SampleError, fn, pipeline_def
from stoker.errors import ArgumentError
from stoker.readers import DatasetError

BASE = {
    "images": [{"id": 2, "file_name": "b.jpg", "height": 10, "width": 20},
               {"id": 1, "file_name": "a.jpg", "height": 10, "width": 20},
               {"id": 3, "file_name": "c.jpg", "height": 10, "width": 20}],
    "categories": [{"id": 9, "name": "x"}, {"id": 4, "name": "y"}],
    "annotations": [
        {"id": 10, "image_id": 1, "category_id": 4, "bbox": [1, 2, 3, 4], "iscrowd": 0,
         "segmentation": [[1, 2, 4, 2, 4, 6]]},
        {"id": 11, "image_id": 2, "category_id": 9, "bbox": [0, 0, 20, 10], "iscrowd": 0,
         "segmentation": [[0, 0, 20, 0, 20, 10]]},
        {"id": 12, "image_id": 3, "category_id": 9, "bbox": [5, 5, 2, 2], "iscrowd": 0,
         "segmentation": [[5, 5, 7, 5, 7, 7]]}],
}


def write(tmp_path: pathlib.Path, doc=None, text: str | None = None) -> tuple[str, str]:
    (tmp_path / "img").mkdir(exist_ok=True)
    for name in "abc":
        (tmp_path / "img" / f"{name}.jpg").write_bytes(name.encode() * 3)
    ann = tmp_path / "ann.json"
    ann.write_text(text if text is not None else json.dumps(doc or BASE))
    return str(tmp_path / "img"), str(ann)


def build(file_root, ann, batch=3, on_error="raise", **kw):
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, on_error=on_error, seed=5)
    def pipe():
        return tuple(fn.readers.coco(file_root=file_root, annotations_file=ann, name="R", **kw))

    p = pipe()
    p.build()
    return p


def changed(edit) -> dict:
    doc = copy.deepcopy(BASE)
    edit(doc)
    return doc


# -- bad annotation files: errors at build naming the file and the entry ---------------------


def test_malformed_json_names_the_file_line_and_column(tmp_path):
    root, ann = write(tmp_path, text='{"images": [\n {"id": 1, "file_name": "a.jpg"} ,')
    with pytest.raises(DatasetError, match=r"ann\.json' is not valid JSON: .* line 2, column"):
        build(root, ann)


def test_missing_annotations_file(tmp_path):
    root, _ = write(tmp_path)
    with pytest.raises(DatasetError, match="annotations_file '/nope.json' does not exist"):
        build(root, "/nope.json")


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["annotations"][0].update(bbox=[1, 2, 3]),
     "annotation 10 (image 'a.jpg'): 'bbox' must contain exactly 4 values, got 3"),
    (lambda d: d["annotations"][0].pop("bbox"), "annotation 10 (image 'a.jpg'): has no 'bbox'"),
    (lambda d: d["annotations"][1].update(category_id=77),
     "annotation 11 (image 'b.jpg'): category_id 77 is not in 'categories'"),
    (lambda d: d["images"][0].pop("file_name"), "images[0] (id 2): has no 'file_name'"),
    (lambda d: d["images"].append({"id": 1, "file_name": "z.jpg"}),
     "images[3]: repeats image id 1"),
    (lambda d: d.pop("images"), "the top level: has no 'images' list"),
    (lambda d: d.update(images=[]), "gives no images to read"),
    (lambda d: d["annotations"][0].update(image_id="one"), "'image_id' must be an integer"),
])
def test_bad_entries_fail_the_build_naming_them(tmp_path, edit, match):
    root, ann = write(tmp_path, changed(edit))
    with pytest.raises(DatasetError, match=re.escape(match)) as info:
        build(root, ann)
    assert "fn.readers.coco" in str(info.value) and "ann.json" in str(info.value)


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["annotations"][0].update(segmentation=[[1, 2, 3]]),
     "annotation 10 .*polygon 0 has an odd number of coordinates"),
    (lambda d: d["annotations"][0].update(segmentation={"size": [5, 5], "counts": [25]}),
     "annotation 10 .*RLE mask size 5 x 5 differs from its image's 10 x 20"),
    (lambda d: d["annotations"][0].update(segmentation={"size": [10, 20], "counts": [7, 3]}),
     "annotation 10 .*bad RLE segmentation: its runs cover 10 pixels, the mask has 200"),
    (lambda d: d["images"][1].pop("width"), "needs a positive 'width' and 'height'"),
])
def test_bad_masks_fail_the_build(tmp_path, edit, match):
    root, ann = write(tmp_path, changed(edit))
    with pytest.raises(DatasetError, match=match):
        build(root, ann, pixelwise_masks=True)


def test_images_argument_naming_a_file_not_in_the_annotations(tmp_path):
    root, ann = write(tmp_path)
    with pytest.raises(DatasetError, match="'images' names 1 file.*'nope.jpg'"):
        build(root, ann, images=["a.jpg", "nope.jpg"])


def test_box_outside_its_image_fails_the_build_or_is_skipped(tmp_path):
    doc = changed(lambda d: d["annotations"][1].update(bbox=[5, 0, 20, 10]))
    root, ann = write(tmp_path, doc)
    with pytest.raises(DatasetError, match=r"annotation 11 \(image 'b.jpg'\): box \[x, y, w, h\] "
                                           r"= \[5, 0, 20, 10\] lies outside its 20 x 10 image"
                                           r".*on_error='skip'"):
        build(root, ann)
    # Within a pixel of the edge is tolerated (COCO boxes are floats).
    build(root, write(tmp_path, changed(lambda d: d["annotations"][1].update(
        bbox=[0.5, 0, 20.4, 10.6])))[1])
    root, ann = write(tmp_path, doc)
    pipe = build(root, ann, batch=2, on_error="skip", image_ids=True)
    _, _, _, ids = pipe.run()
    assert [int(np.array(i)[0]) for i in ids] == [1, 3]
    (source, reason), = pipe.skipped_samples()
    assert source.endswith("b.jpg") and "annotation 11" in reason and "outside" in reason


def test_missing_image_file_fails_at_run_naming_it_or_is_skipped(tmp_path):
    root, ann = write(tmp_path)
    pathlib.Path(root, "b.jpg").unlink()
    pipe = build(root, ann, batch=3)
    with pytest.raises(SampleError, match="cannot read image file .*b.jpg"):
        pipe.run()
    pipe = build(root, ann, batch=2, on_error="skip", image_ids=True)
    _, boxes, _, ids = pipe.run()
    assert [int(np.array(i)[0]) for i in ids] == [1, 3]
    assert np.array(boxes[1]).tolist() == [[5, 5, 2, 2]]
    (source, reason), = pipe.skipped_samples()
    assert source.endswith("b.jpg") and "fn.readers.coco" in reason


# -- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, match", [
    ({"polygon_masks": True, "pixelwise_masks": True}, "mutually exclusive"),
    ({"skip_cached_images": True}, "'skip_cached_images' is not supported"),
    ({"save_preprocessed_annotations": True}, "needs 'save_preprocessed_annotations_dir'"),
    ({"preprocessed_annotations": "/x"}, "not both"),
    ({"shard_id": 2, "num_shards": 2}, "'shard_id' must be less than num_shards=2"),
])
def test_bad_argument_combinations_fail_at_the_call(tmp_path, kw, match):
    root, ann = write(tmp_path)
    with pytest.raises(ArgumentError, match=match):
        build(root, ann, **kw)


def test_no_annotations_and_no_file_root_fail_at_the_call(tmp_path):
    with pytest.raises(ArgumentError, match="give the COCO annotations"):
        fn.readers.coco(file_root=str(tmp_path))
    with pytest.raises(ArgumentError, match="missing argument 'file_root'"):
        fn.readers.coco(annotations_file="x.json")
    with pytest.raises(ArgumentError, match="'images' cannot be combined"):
        fn.readers.coco(file_root="r", preprocessed_annotations="p", images=["a.jpg"])


def test_deprecated_argument_names_still_work(tmp_path):
    root, ann = write(tmp_path)
    pipe = build(root, ann, save_img_ids=True, dump_meta_files=True,
                 dump_meta_files_path=str(tmp_path / "meta"))
    assert len(pipe.run()) == 4
    assert (tmp_path / "meta" / "original_ids.dat").exists()
    pipe = build(root, "", meta_files_path=str(tmp_path / "meta"), image_ids=True)
    assert [int(np.array(i)[0]) for i in pipe.run()[3]] == [1, 2, 3]


# -- the reader contract, through COCO --------------------------------------------------------


def ids_of(pipe, runs: int) -> list[int]:
    return [int(np.array(i)[0]) for _ in range(runs) for i in pipe.run()[-1]]


def test_shards_split_the_images_sorted_by_id(tmp_path):
    root, ann = write(tmp_path)
    assert ids_of(build(root, ann, batch=1, image_ids=True, num_shards=3, shard_id=1), 3) == \
        [2, 3, 1]  # shard 1, then the next shards, as readers.file
    meta = build(root, ann, batch=1, num_shards=2, shard_id=1, pad_last_batch=True).reader_meta("R")
    assert meta["epoch_size"] == 3 and meta["epoch_size_padded"] == 4


def test_random_shuffle_is_a_permutation_per_epoch_and_seeded(tmp_path):
    root, ann = write(tmp_path)
    orders = [ids_of(build(root, ann, batch=3, image_ids=True, random_shuffle=True, seed=s), 4)
              for s in (1, 1, 2)]
    assert orders[0] == orders[1]
    for epoch in range(4):
        assert sorted(orders[0][3 * epoch:3 * epoch + 3]) == [1, 2, 3]


def test_checkpoint_resumes_exactly(tmp_path):
    root, ann = write(tmp_path)

    def make(checkpoint=None):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3,
                      enable_checkpointing=True, checkpoint=checkpoint)
        def pipe():
            out = fn.readers.coco(file_root=root, annotations_file=ann, image_ids=True,
                                  random_shuffle=True, name="R")
            return out[1], out[3]

        p = pipe()
        p.build()
        return p

    first = make()
    first.run()
    first.run()
    saved = first.checkpoint()
    rest = [[np.array(x).tolist() for x in first.run()[1]] for _ in range(3)]
    resumed = make(saved)
    assert [[np.array(x).tolist() for x in resumed.run()[1]] for _ in range(3)] == rest
