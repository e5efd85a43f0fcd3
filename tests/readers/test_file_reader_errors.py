"""``fn.readers.file``'s errors: each names the operator and the path, list line or
argument at fault, and comes when DALI's does (build or run) or earlier (at the call).

Facts marked "measured" were observed on DALI 2.4.0 (CPU, device_id=None).
"""

from __future__ import annotations

import os

import pytest
from helpers import collect_reads, make_files

from stoker import ArgumentError, SampleError, fn, pipeline_def
from stoker.readers import DatasetError


def read(runs: int = 1, batch_size: int = 1, **reader_args):
    """``runs`` batches of (source_info, bytes, label). Defined here, not shared from
    helpers.py: the errors below must name this file as where the reader was created."""

    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe():
        data, label = fn.readers.file(name="Reader", **reader_args)
        return data, label

    return collect_reads(pipe(), runs)


def test_missing_file_root_fails_at_build_naming_it(tmp_path):
    # Measured: DALI failed at build with "Failed to open <path>".
    missing = tmp_path / "nope"

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe(lazy_init=False):
        return tuple(fn.readers.file(file_root=str(missing), lazy_init=lazy_init))

    p = pipe()
    with pytest.raises(FileNotFoundError, match=f"fn.readers.file.*file_root '{missing}' "
                                                "does not exist"):
        p.build()
    p = pipe(lazy_init=True)
    p.build()  # lazy_init: nothing is listed until the first run
    with pytest.raises(FileNotFoundError, match=str(missing)):
        p.run()
    p.close()


def test_file_root_that_is_a_file_or_has_no_class_folders(tmp_path):
    make_files(tmp_path, ["f.jpg"])
    with pytest.raises(NotADirectoryError, match=f"'{tmp_path / 'f.jpg'}' is not a folder"):
        read(file_root=str(tmp_path / "f.jpg"))
    # Measured: files directly in file_root give "No files found".
    with pytest.raises(DatasetError, match=f"no files found under file_root '{tmp_path}' "
                                           r"\(no sub-folders\)"):
        read(file_root=str(tmp_path))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"\(1 sub-folder\(s\)\).*<file_root>/<class>/<file>"):
        read(file_root=str(tmp_path))


def test_unreadable_file_fails_at_run_naming_the_path(tmp_path):
    # Measured: DALI: "File mapping failed: <full path>" at run(). (Tests run as root here,
    # so a missing file and a dangling link stand in for a permission error.)
    make_files(tmp_path, ["d/a.jpg"])
    os.symlink("nowhere", tmp_path / "d" / "b.jpg")
    with pytest.raises(SampleError, match=f"cannot read file '{tmp_path / 'd' / 'b.jpg'}'"):
        read(2, file_root=str(tmp_path))
    with pytest.raises(SampleError, match=r"fn.readers.file \(created at .*test_file_reader"):
        read(files=[str(tmp_path / "gone.jpg")])
    with pytest.raises(SampleError, match=f"cannot read file '{tmp_path / 'd'}': Is a dir"):
        read(files=[str(tmp_path / "d")])


def test_malformed_file_list_names_the_list_and_the_line(tmp_path):
    lst = tmp_path / "l.txt"
    lst.write_text("a.jpg 0\n\nb.jpg x\n")
    with pytest.raises(DatasetError, match=f"file_list '{lst}', line 3: expected"):
        read(file_list=str(lst))
    with pytest.raises(FileNotFoundError, match=f"file_list '{tmp_path / 'no.txt'}' does not"):
        read(file_list=str(tmp_path / "no.txt"))
    with pytest.raises(IsADirectoryError, match="is a folder"):
        read(file_list=str(tmp_path))
    lst.write_text("\n\n")
    with pytest.raises(DatasetError, match="has no entries"):
        read(file_list=str(lst))


@pytest.mark.parametrize("kwargs,match", [
    ({}, "give the dataset as 'file_root'"),
    ({"files": ["a"], "file_list": "l.txt"}, "not both"),
    ({"file_root": "r", "labels": [1]}, "'labels' goes with 'files' only"),
    ({"files": []}, "'files' is an empty list"),
    ({"files": ["a", "b"], "labels": [1]}, "'labels' has 1 values for 2 files"),
    ({"files": ["a"], "shard_id": 2, "num_shards": 2}, "'shard_id' must be less than"),
    ({"files": ["a"], "num_shards": 0}, "'num_shards' must be in [1, inf]"),
    ({"files": ["a"], "shard_id": -1}, "'shard_id' must be in [0, inf]"),
    ({"files": ["a"], "random_shuffle": True, "shuffle_after_epoch": True}, "cannot both"),
    ({"files": ["a"], "stick_to_shard": True, "shuffle_after_epoch": True}, "cannot both"),
])
def test_bad_argument_combinations_fail_at_the_call(kwargs, match):
    with pytest.raises(ArgumentError, match=match.replace("[", r"\[").replace("]", r"\]")):
        fn.readers.file(**kwargs)


def test_more_shards_than_samples_fails_at_build(tmp_path):
    # Measured: DALI: "The number of input samples: 3, needs to be at least equal to the
    # requested number of shards: 5".
    make_files(tmp_path, ["a.jpg"])
    with pytest.raises(DatasetError, match="num_shards=5 is more than the 3 samples"):
        read(files=[str(tmp_path / "a.jpg")] * 3, num_shards=5)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.file(files=[str(tmp_path / "a.jpg")] * 12, num_shards=9999))

    p = pipe()
    # At build(), as a RuntimeError, as DALI raises it (and with DALI's words in it).
    with pytest.raises(RuntimeError, match="The number of input samples: 12, needs to be at "
                                           "least equal to the requested number of shards: "
                                           "9999"):
        p.build()


def test_dataset_errors_are_runtime_errors_as_in_dali(tmp_path):
    # Measured: DALI raises RuntimeError at build for an empty file_root, a bad file_list
    # line and too many shards; ValueError still catches them too.
    assert issubclass(DatasetError, RuntimeError) and issubclass(DatasetError, ValueError)
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuntimeError, match="no files found"):
        read(file_root=str(tmp_path / "empty"))


def test_a_file_read_ahead_fails_with_its_own_batch(tmp_path):
    # The reader reads the next batch's files while this batch is decoded (files of 8 KB
    # or more, 8 or more a batch); a file that cannot be read must still fail the batch
    # that holds it, and only that one, and every other file must come out whole.
    (tmp_path / "d").mkdir()
    blobs = {f"d/{i:02d}.jpg": bytes([i]) * 20_000 for i in range(24) if i != 17}
    for name, blob in blobs.items():
        (tmp_path / name).write_bytes(blob)
    os.symlink("nowhere", tmp_path / "d" / "17.jpg")  # in the third batch of 8

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1, exec_async=False,
                  exec_pipelined=False)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return data

    p = pipe()
    for first in (0, 8):
        (data,) = p.run()
        assert [data.source_info(i) for i in range(8)] == list(blobs)[first:first + 8]
        assert [data.at(i).tobytes() for i in range(8)] == list(blobs.values())[first:first + 8]
    with pytest.raises(SampleError, match=f"cannot read file '{tmp_path / 'd' / '17.jpg'}'"):
        p.run()
    p.close()
