"""``fn.readers.file`` against DALI 2.4 itself, without shuffling: the same samples (bytes,
labels, source_info) in the same order, run after run, and the same reader_meta.

Skipped unless nvidia.dali is importable; run it with
``/work/bench-venv/bin/python -m pytest tests/dali/test_file_reader_vs_dali.py``.
"""

from __future__ import annotations

import os

import pytest

dali = pytest.importorskip("nvidia.dali")
import nvidia.dali.fn as dali_fn  # noqa: E402

import stoker  # noqa: E402

TREE = ["B/1.jpg", "B/a.JPG", "B/x.txt", "B-x/1.png", "B.x/1.jpeg", "a/A.jpg", "a/B2.jpg",
        "a/a10.jpg", "a/a9.jpg", "a/b.webp", "c/c.jpg", "c/sub/s.jpg", ".h/h.jpg", "top.jpg",
        "d/q.wav", "d/r.Tiff", "d/s.gif"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    for name in TREE:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode() * 3)
    (root / "empty").mkdir()
    return root


def run_both(runs: int, batch_size: int, **reader_args):
    """Per library: (reader_meta, [[(source_info, bytes, label), ...] per run])."""
    results = {}
    for lib, fn, pipeline_def in (("dali", dali_fn, dali.pipeline_def),
                                  ("stoker", stoker.fn, stoker.pipeline_def)):
        @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=3)
        def pipe(fn=fn):
            return tuple(fn.readers.file(name="R", **reader_args))

        p = pipe()
        p.build()
        batches = []
        for _ in range(runs):
            data, labels = p.run()
            batches.append([(data[i].source_info() if lib == "dali" else data.source_info(i),
                             bytes(memoryview(data.at(i))), int(labels.at(i)[0]))
                            for i in range(len(data))])
        results[lib] = (p.reader_meta("R"), batches)
        del p
    return results["dali"], results["stoker"]


@pytest.mark.parametrize("reader_args", [
    {},
    {"case_sensitive_filter": True},
    {"file_filters": ["*"]},
    {"file_filters": ["*.JPG", "?.png"]},
    {"file_filters": ["[ab]*"], "case_sensitive_filter": True},
    {"dir_filters": ["[Bc]*"]},
    {"dir_filters": ["A", "d"]},
], ids=str)
def test_file_root_listing_equals_dali(tree, reader_args):
    theirs, ours = run_both(4, 5, file_root=str(tree), **reader_args)
    assert ours == theirs


@pytest.mark.parametrize("n,shards,batch", [(10, 2, 4), (9, 2, 4), (10, 3, 4), (13, 4, 3),
                                            (7, 3, 1), (5, 5, 2)])
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("stick", [False, True])
def test_sharded_sequences_equal_dali(tree, n, shards, batch, pad, stick):
    files = sorted(str(p) for p in tree.rglob("*") if p.is_file())[:n]
    for sid in range(shards):
        theirs, ours = run_both(8, batch, files=files, num_shards=shards, shard_id=sid,
                                pad_last_batch=pad, stick_to_shard=stick)
        assert ours == theirs, f"shard {sid}"


def test_file_list_equals_dali(tree, tmp_path):
    lst = tmp_path / "list.txt"
    lst.write_text(f"a/b.webp 3\nB/x.txt\t1\n\nc/c.jpg 0   \r\n{tree}/d/q.wav 7\n")
    theirs, ours = run_both(3, 3, file_list=str(lst), file_root=str(tree))
    assert ours == theirs
    theirs, ours = run_both(2, 3, file_list=str(lst), file_root=str(tree), num_shards=2,
                            shard_id=1, pad_last_batch=True)
    assert ours == theirs


def test_files_and_labels_equal_dali(tree):
    files = ["a/A.jpg", "c/c.jpg", "a/A.jpg", "d/q.wav"]
    theirs, ours = run_both(3, 3, files=files, file_root=str(tree))
    assert ours == theirs
    theirs, ours = run_both(3, 3, files=[os.path.join(tree, f) for f in files],
                            labels=[4, -1, 2, 9])
    assert ours == theirs
