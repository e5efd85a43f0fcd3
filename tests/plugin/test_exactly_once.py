"""Every epoch delivers every sample exactly once across all shards under PARTIAL, for any
dataset size, batch size, shard count, padding, stickiness and shuffling (property test),
for every reader: readers.file and readers.coco."""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy  # noqa: E402


def _folder(root: pathlib.Path, n: int) -> str:
    folder = root / f"exactly_once_n{n}" / "c0"  # not shared with other tests' folders
    if not folder.exists():
        folder.mkdir(parents=True)
        for i in range(n):
            (folder / f"{i:03d}.bin").write_bytes(i.to_bytes(2, "little"))
    return str(folder.parent)


def _coco(root: pathlib.Path, n: int) -> tuple[str, str]:
    """A COCO dataset of n images whose file i holds i (as _folder's), ids out of order."""
    folder = root / f"exactly_once_coco_n{n}"
    ann = folder / "annotations.json"
    if not ann.exists():
        (folder / "img").mkdir(parents=True)
        images = []
        for i in range(n):
            (folder / "img" / f"{i:03d}.bin").write_bytes(i.to_bytes(2, "little"))
            images.append({"id": 1000 - i, "file_name": f"{i:03d}.bin", "height": 4,
                           "width": 4})
        ann.write_text(json.dumps({"images": images, "annotations": [], "categories": []}))
    return str(folder / "img"), str(ann)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 23), bs=st.integers(1, 6), shards=st.integers(1, 3),
       pad=st.booleans(), stick=st.booleans(), shuffle=st.booleans(),
       one_per_iterator=st.booleans(), reader=st.sampled_from(["file", "coco"]))
def test_partial_epochs_cover_every_sample_once(tmp_path_factory, n, bs, shards, pad, stick,
                                                shuffle, one_per_iterator, reader):
    shards = min(shards, n)
    base = tmp_path_factory.getbasetemp()
    root = _folder(base, n) if reader == "file" else None
    coco_root, annotations = _coco(base, n) if reader == "coco" else (None, None)

    def make(shard):
        common = dict(name="R", shard_id=shard, num_shards=shards, pad_last_batch=pad,
                      stick_to_shard=stick, random_shuffle=shuffle, seed=9)

        @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=3)
        def pipe():
            if reader == "coco":
                return fn.readers.coco(file_root=coco_root, annotations_file=annotations,
                                       **common)[0]
            data, _ = fn.readers.file(file_root=root, file_filters=["*.bin"], **common)
            return data
        return pipe()

    groups = [[s] for s in range(shards)] if one_per_iterator else [list(range(shards))]
    iters = [DALIGenericIterator([make(s) for s in g], ["data"], reader_name="R",
                                 last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
             for g in groups]
    for _ in range(3):
        seen: Counter = Counter()
        for it in iters:
            for batch in it:
                for d in batch:
                    data = d["data"]
                    seen.update((data[:, 0].to(torch.int32) + 256 * data[:, 1].to(
                        torch.int32)).tolist())
        assert sorted(seen) == list(range(n)), f"missing {set(range(n)) - set(seen)}"
        assert max(seen.values()) == 1, f"repeated {[k for k, v in seen.items() if v > 1]}"
