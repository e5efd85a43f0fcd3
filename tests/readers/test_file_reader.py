"""``fn.readers.file`` in pipelines: listing, labels, filters, file lists, outputs, errors.

Facts marked "measured" were observed on DALI 2.4.0 (CPU, device_id=None) with the same
folder layouts; the script outputs are summarized next to each test.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import make_files, read_files

from stoker import SampleError, fn, pipeline_def
from stoker.readers import DatasetError


def flat(batches) -> list:
    return [s for b in batches for s in b]


def epoch(root, n: int, **kw) -> list[tuple[str, int]]:
    """One pass of ``n`` samples as (source_info, label)."""
    return [(info, label) for info, _, label in flat(read_files(n, file_root=str(root), **kw))]


# -- file_root -----------------------------------------------------------------------------------


def test_file_root_sorts_folders_and_files_by_name_and_labels_by_folder(tmp_path):
    # Measured: folders "B", "B-x", "B.x" got labels 0, 1, 2 and files came folder by folder
    # (B/1.jpg, B/a.jpg, B-x/1.jpg, B.x/1.jpg): not one sort of the full paths, which would
    # put "B-x/" and "B.x/" before "B/". Names sort by bytes: "A" < "B2" < "a10" < "a9".
    make_files(tmp_path, ["B/a.jpg", "B/1.jpg", "B.x/1.jpg", "B-x/1.jpg",
                          "c/a9.jpg", "c/a10.jpg", "c/B2.jpg", "c/A.jpg"])
    assert epoch(tmp_path, 8) == [
        ("B/1.jpg", 0), ("B/a.jpg", 0), ("B-x/1.jpg", 1), ("B.x/1.jpg", 2),
        ("c/A.jpg", 3), ("c/B2.jpg", 3), ("c/a10.jpg", 3), ("c/a9.jpg", 3)]


def test_file_root_reads_one_level_only_and_empty_folders_keep_their_label(tmp_path):
    # Measured: top.jpg (directly in file_root) and c/sub/s.jpg (two levels down) were not
    # read; an empty folder "C_empty" between "B" and "_x" still took label 2; hidden
    # folders and files are read like any other (".hidden" got label 0).
    make_files(tmp_path, ["top.jpg", ".hidden/h.jpg", "B/.j.jpg", "_x/x.jpg", "c/c.jpg",
                          "c/sub/s.jpg"])
    (tmp_path / "C_empty").mkdir()
    assert epoch(tmp_path, 4) == [(".hidden/h.jpg", 0), ("B/.j.jpg", 1), ("_x/x.jpg", 3),
                                  ("c/c.jpg", 4)]


EXTENSIONS = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "pnm", "ppm", "pgm", "pbm", "jp2",
              "webp", "flac", "ogg", "wav"]


def test_default_file_filters_take_dalis_extensions_in_any_case(tmp_path):
    # Measured: all 15 extensions were read, and 2.JPG / 3.Jpeg too (case-insensitive by
    # default); x.txt, l.gif, k.jpeg.bak and a file named "jpg" were not.
    names = [f"d/f{i:02d}.{ext}" for i, ext in enumerate(EXTENSIONS)]
    make_files(tmp_path, names + ["d/x.txt", "d/l.gif", "d/k.jpeg.bak", "d/jpg", "d/y.JPG",
                                  "d/z.Jpeg"])
    got = [info for info, _ in epoch(tmp_path, 17)]
    assert got == names + ["d/y.JPG", "d/z.Jpeg"]


def test_case_sensitive_filter(tmp_path):
    make_files(tmp_path, ["d/a.jpg", "d/b.JPG", "D2/c.jpg"])
    # Measured: case_sensitive_filter=True dropped 2.JPG and 3.Jpeg.
    assert [i for i, _ in epoch(tmp_path, 2, case_sensitive_filter=True)] == ["D2/c.jpg",
                                                                               "d/a.jpg"]
    # Measured: file_filters=["*.JPG"] matched .jpg files too, unless case-sensitive.
    assert len(epoch(tmp_path, 3, file_filters=["*.JPG"])) == 3
    assert [i for i, _ in epoch(tmp_path, 1, file_filters=["*.JPG"],
                                case_sensitive_filter=True)] == ["d/b.JPG"]


def test_file_filters_are_fnmatch_patterns_on_the_file_name(tmp_path):
    make_files(tmp_path, ["d/A.jpg", "d/b.jpg", "d/B2.jpg", "d/cc.jpg", "d/x.txt", "d/.h.jpg"])
    (tmp_path / "d" / "dir.jpg").mkdir()  # a folder is never a sample (measured)
    names = lambda filters, n: [i for i, _ in epoch(tmp_path, n, file_filters=filters)]  # noqa: E731
    assert names(["*"], 6) == ["d/.h.jpg", "d/A.jpg", "d/B2.jpg", "d/b.jpg", "d/cc.jpg",
                               "d/x.txt"]
    assert names(["?.jpg"], 2) == ["d/A.jpg", "d/b.jpg"]
    assert names(["[ab]*.jpg"], 3) == ["d/A.jpg", "d/B2.jpg", "d/b.jpg"]  # case-insensitive
    assert names(["[!ab]*.jpg"], 2) == ["d/.h.jpg", "d/cc.jpg"]
    assert names(["*.txt", "c*"], 2) == ["d/cc.jpg", "d/x.txt"]
    # Measured: "*/*.jpg" matched nothing: patterns see the bare name, not the path.
    with pytest.raises(DatasetError, match="no files found"):
        read_files(file_root=str(tmp_path), file_filters=["*/*.jpg"])


def test_dir_filters_pick_class_folders_and_labels_count_only_those(tmp_path):
    # Measured: dir_filters=["[Bc]"] gave B label 0 and c label 1; dir_filters=["A"]
    # matched folder "a" unless case_sensitive_filter=True (then: no files found).
    make_files(tmp_path, ["B/1.jpg", "a/2.jpg", "c/3.jpg", "c/sub/4.jpg"])
    assert epoch(tmp_path, 2, dir_filters=["[Bc]"]) == [("B/1.jpg", 0), ("c/3.jpg", 1)]
    assert epoch(tmp_path, 1, dir_filters=["A"]) == [("a/2.jpg", 0)]
    with pytest.raises(DatasetError, match=r"\(3 sub-folder\(s\), 0 of them matching "
                                           r"dir_filters=\['A'\]\)"):
        read_files(file_root=str(tmp_path), dir_filters=["A"], case_sensitive_filter=True)
    with pytest.raises(DatasetError, match="no files found"):
        read_files(file_root=str(tmp_path), dir_filters=["*sub*"])  # not recursive (measured)


def test_symlinked_class_folder_is_followed(tmp_path):
    make_files(tmp_path, ["a/1.jpg"])
    os.symlink("a", tmp_path / "b")
    assert epoch(tmp_path, 2) == [("a/1.jpg", 0), ("b/1.jpg", 1)]


def test_broken_symlink_in_file_root_is_an_error_naming_it(tmp_path):
    # Measured: DALI refused it too ("Could not access <path> during directory traversal").
    make_files(tmp_path, ["a/1.jpg"])
    os.symlink("nowhere", tmp_path / "b")
    with pytest.raises(FileNotFoundError, match=f"{tmp_path / 'b'}.*broken symbolic link"):
        read_files(file_root=str(tmp_path))


# -- outputs -------------------------------------------------------------------------------------


def test_outputs_are_the_file_bytes_and_an_int32_label_of_shape_1(tmp_path):
    make_files(tmp_path, ["a/x.jpg", "b/y.jpg"])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.file(file_root=str(tmp_path)))

    p = pipe()
    data, labels = p.run()
    # Measured: data UINT8 1-D, layout ''; label INT32 of shape (1,), layout ''.
    assert data.layout() == "" and labels.layout() == ""
    assert [data.at(i).tobytes() for i in range(2)] == [b"a/x.jpg", b"b/y.jpg"]
    assert all(data.at(i).dtype == np.uint8 and data.at(i).ndim == 1 for i in range(2))
    assert data.at(0).flags.writeable
    assert labels.as_array().dtype == np.int32 and labels.as_array().shape == (2, 1)
    assert labels.as_array().ravel().tolist() == [0, 1]
    p.close()


def test_empty_file_reads_as_an_empty_array(tmp_path):
    # DALI fails to memory-map an empty file unless dont_use_mmap=True (measured); stoker
    # always reads, so the sample is simply empty.
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "e.jpg").write_bytes(b"")
    [[(info, data, label)]] = read_files(file_root=str(tmp_path))
    assert (info, data, label) == ("d/e.jpg", b"", 0)


def test_source_info_is_the_path_relative_to_file_root(tmp_path):
    # Measured: tl[i].source_info() gave 'cls0/img00.jpg' for file_root; for files= and
    # file_list it is the path as given. fn.get_property reads the same string.
    make_files(tmp_path, ["cls0/img00.jpg", "cls1/img01.jpg"])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return data, fn.get_property(data, key="source_info")

    p = pipe()
    data, info = p.run()
    assert [data.source_info(i) for i in range(2)] == ["cls0/img00.jpg", "cls1/img01.jpg"]
    assert [info.at(i).tobytes().decode() for i in range(2)] == ["cls0/img00.jpg",
                                                                 "cls1/img01.jpg"]
    p.close()


def test_large_batches_read_on_the_pool_give_the_same_bytes(tmp_path):
    rng = np.random.default_rng(0)
    blobs = {f"d/{i:02d}.jpg": rng.integers(0, 256, 200_000, np.uint8).tobytes()
             for i in range(16)}
    for name, blob in blobs.items():
        (tmp_path / "d").mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(blob)

    @pipeline_def(batch_size=16, num_threads=4, device_id=None)
    def pipe():
        return tuple(fn.readers.file(file_root=str(tmp_path)))

    p = pipe()
    for _ in range(3):  # the first batch is read serially, the next ones on the pool
        data, _ = p.run()
        assert [data.at(i).tobytes() for i in range(16)] == list(blobs.values())
    p.close()


# -- file_list and files -------------------------------------------------------------------------


def test_file_list_paths_labels_and_order(tmp_path):
    # Measured: lines keep their order (not sorted); paths are relative to file_root, or to
    # the list's own folder without file_root; absolute paths are used as they are;
    # file_filters do not apply to lists.
    make_files(tmp_path, ["data/b.jpg", "data/a.txt", "data/c d.png", "elsewhere/z.jpg"])
    lst = tmp_path / "data" / "list.txt"
    lst.write_text(f"b.jpg 4\na.txt 2\n\nc d.png\t9\r\n{tmp_path}/elsewhere/z.jpg 0\n")
    want = [("b.jpg", b"data/b.jpg", 4), ("a.txt", b"data/a.txt", 2),
            ("c d.png", b"data/c d.png", 9),
            (f"{tmp_path}/elsewhere/z.jpg", b"elsewhere/z.jpg", 0)]
    assert flat(read_files(4, file_list=str(lst))) == want
    assert flat(read_files(4, file_list=str(lst), file_root=str(tmp_path / "data"))) == want
    other = tmp_path / "list2.txt"
    other.write_text("data/b.jpg 1\n")
    assert flat(read_files(1, file_list=str(other))) == [("data/b.jpg", b"data/b.jpg", 1)]


def test_files_with_and_without_labels(tmp_path):
    # Measured: files keep their order and duplicates; default labels are 0, 1, 2, ...;
    # negative labels are fine; with file_root the paths are relative to it.
    make_files(tmp_path, ["a.jpg", "b.jpg"])
    a, b = str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg")
    assert [(i, lab) for i, _, lab in flat(read_files(3, files=[b, a, b]))] == [(b, 0), (a, 1),
                                                                        (b, 2)]
    assert [lab for _, _, lab in flat(read_files(2, files=[a, b], labels=[-5, 7]))] == [-5, 7]
    got = flat(read_files(2, files=["b.jpg", "a.jpg"], labels=[5, 6], file_root=str(tmp_path)))
    assert got == [("b.jpg", b"b.jpg", 5), ("a.jpg", b"a.jpg", 6)]


def test_a_million_line_file_list_builds_without_touching_the_files(tmp_path):
    lst = tmp_path / "big.txt"
    lst.write_text("".join(f"n{i % 10}/img{i}.jpg {i % 10}\n" for i in range(100_000)))

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.file(file_list=str(lst), file_root="/does/not/exist", name="R"))

    p = pipe()
    p.build()  # measured: DALI neither checks file_root nor opens a listed file here
    assert p.reader_meta("R")["epoch_size"] == 100_000
    with pytest.raises(SampleError, match="/does/not/exist/n0/img0.jpg"):
        p.run()
    p.close()


# -- shuffling, sharding, epochs -----------------------------------------------------------------


def labels_of(batches) -> list[int]:
    return [lab for _, _, lab in flat(batches)]


def ten_files(tmp_path) -> list[str]:
    make_files(tmp_path, ["a.jpg"])
    return [str(tmp_path / "a.jpg")] * 10


def test_unshuffled_runs_wrap_into_the_next_epoch_as_dali(tmp_path):
    files = ten_files(tmp_path)
    # Measured (notes, section d): [0,1,2,3] [4,5,6,7] [8,9,0,1]; with padding [8,9,9,9].
    assert labels_of(read_files(3, 4, files=files, labels=list(range(10)))) == \
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    assert labels_of(read_files(3, 4, files=files, labels=list(range(10)), pad_last_batch=True)) \
        == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9]
    # 2 shards, shard 1, padding, no stick: shard 1 then shard 0 (measured).
    assert labels_of(read_files(4, 4, files=files, labels=list(range(10)), num_shards=2,
                          shard_id=1, pad_last_batch=True)) == \
        [5, 6, 7, 8, 9, 9, 9, 9, 0, 1, 2, 3, 4, 4, 4, 4]


def test_reset_does_not_move_the_reader(tmp_path):
    # Measured: run, reset(), run gave [0,1,2,3] | [4,5,6,7]: readers ignore reset().
    files = ten_files(tmp_path)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.readers.file(files=files, labels=list(range(10))))

    p = pipe()
    first = p.run()[1].as_array().ravel().tolist()
    p.reset()
    assert first + p.run()[1].as_array().ravel().tolist() == list(range(8))
    p.close()


def test_random_shuffle_gives_an_exact_permutation_per_epoch(tmp_path):
    files = ten_files(tmp_path)
    got = labels_of(read_files(6, 5, files=files, labels=list(range(10)), random_shuffle=True))
    epochs = [got[i:i + 10] for i in range(0, 30, 10)]
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1
    assert epochs[0] != list(range(10))


def test_random_shuffle_is_reproducible_from_seed_or_pipeline_seed(tmp_path):
    files = ten_files(tmp_path)
    args = dict(files=files, labels=list(range(10)), random_shuffle=True)
    by_pipe = [labels_of(read_files(4, 5, pipe_seed=s, **args)) for s in (1, 1, 2)]
    assert by_pipe[0] == by_pipe[1] and by_pipe[0] != by_pipe[2]
    by_arg = [labels_of(read_files(4, 5, pipe_seed=s, seed=7, **args)) for s in (1, 2)]
    assert by_arg[0] == by_arg[1]  # the reader's own seed wins over the pipeline's


def test_shuffled_shards_cover_every_epoch_exactly_once_whatever_the_seeds(tmp_path):
    # Readers with different seeds and unequal shards (4 and 5 samples), as ranks often are.
    files = ten_files(tmp_path)[:9]
    sizes = [4, 5]  # shard 0 = [0, 4), shard 1 = [4, 9)
    epochs = {0: [], 1: []}
    for sid in range(2):
        got = labels_of(read_files(9, 1, pipe_seed=10 + sid, files=files, labels=list(range(9)),
                             num_shards=2, shard_id=sid, random_shuffle=True))
        first = sizes[sid]  # epoch 0 reads the reader's own shard, epoch 1 the other one
        epochs[0] += got[:first]
        epochs[1] += got[first:]
    assert sorted(epochs[0]) == list(range(9)) == sorted(epochs[1])


def test_shuffle_after_epoch_reshuffles_the_dataset_every_epoch(tmp_path):
    files = ten_files(tmp_path)
    # Measured: DALI shuffles the first epoch too and reports stick_to_shard=1.
    got = labels_of(read_files(4, 5, files=files, labels=list(range(10)), shuffle_after_epoch=True))
    assert sorted(got[:10]) == list(range(10)) == sorted(got[10:])
    assert got[:10] != list(range(10)) and got[:10] != got[10:]
    shards = [labels_of(read_files(2, 5, files=files, labels=list(range(10)),
                             shuffle_after_epoch=True, num_shards=2, shard_id=s))
              for s in range(2)]
    for e in range(2):  # each epoch, the two shards split one permutation
        assert sorted(shards[0][5 * e:5 * e + 5] + shards[1][5 * e:5 * e + 5]) == \
            list(range(10))


def test_reader_meta_and_epoch_size(tmp_path):
    files = ten_files(tmp_path)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe(num_shards=1, shard_id=0, pad_last_batch=False, shuffle_after_epoch=False):
        # (no **kw: pipeline_def refuses it, as DALI does)
        return tuple(fn.readers.file(files=files, name="Reader", num_shards=num_shards,
                                     shard_id=shard_id, pad_last_batch=pad_last_batch,
                                     shuffle_after_epoch=shuffle_after_epoch))

    p = pipe(num_shards=3, shard_id=2, pad_last_batch=True)
    assert p.reader_meta("Reader") == {
        "epoch_size": 10, "epoch_size_padded": 12, "number_of_shards": 3, "shard_id": 2,
        "pad_last_batch": 1, "stick_to_shard": 0}
    assert p.reader_meta() == {"Reader": p.reader_meta("Reader")}
    assert p.epoch_size("Reader") == 12 and p.epoch_size() == {"Reader": 12}
    p.close()
    p = pipe(shuffle_after_epoch=True)
    assert p.reader_meta("Reader")["stick_to_shard"] == 1
    p.close()


def test_the_next_batch_is_read_ahead_and_taken_only_if_asked_for(tmp_path, monkeypatch):
    from stoker.readers import files

    rng = np.random.default_rng(1)
    paths = []
    for i in range(24):
        path = tmp_path / f"{i:02d}.bin"
        path.write_bytes(rng.integers(0, 256, 10_000 + i, np.uint8).tobytes())
        paths.append(str(path))
    reads: list[str] = []
    real = files.read_file
    monkeypatch.setattr(files, "read_file", lambda p: (reads.append(p), real(p))[1])

    def check(out, want):
        assert [a.tobytes() for a in out] == [open(p, "rb").read() for p in want]

    reader = files.FileBatchReader(2)
    check(reader.read(paths[:8]), paths[:8])
    second, third = object(), object()
    reader.ahead(second, lambda: reader.read_here(paths[8:16]))
    reader._ahead[1].result()  # the read ahead finishes in the background
    assert reads == paths[:16]
    check(reader.taken(second), paths[8:16])
    assert reader.taken(second) is None  # taken once
    reader.ahead(third, lambda: reader.read_here(paths[16:]))
    reader._ahead[1].result()
    assert reads == paths  # the files read ahead were taken, not read a second time
    assert reader.taken(object()) is None  # not what was read ahead: dropped
    assert reader.taken(third) is None
    reader.close()


def test_a_file_reader_takes_the_batch_it_read_ahead_and_only_that(tmp_path, monkeypatch):
    """The pipeline's reader names and reads the next batch on its pool while this one is
    decoded; the batch takes those bytes when it is the batch that was peeked, and reads
    its own files when the stream moved elsewhere (a checkpoint restored)."""
    from stoker.readers import files

    for c in range(2):
        (tmp_path / f"c{c}").mkdir()
        for i in range(12):
            (tmp_path / f"c{c}" / f"{i:02d}.jpg").write_bytes(bytes([c, i]) * 6000)
    reads: list[str] = []
    real = files.read_file
    monkeypatch.setattr(files, "read_file", lambda p: (reads.append(p), real(p))[1])
    monkeypatch.setattr(files, "POOL_MIN_MEAN_BYTES", 0)

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, exec_async=False,
                  exec_pipelined=False, enable_checkpointing=True)
    def pipe():
        data, label = fn.readers.file(file_root=str(tmp_path), random_shuffle=True, seed=3,
                                      name="Reader")
        return data, label

    def batch(out):
        return [(bytes(np.asarray(d)[:2]), int(np.asarray(lab)[0]))
                for d, lab in zip(out[0], out[1], strict=True)]

    p = pipe()
    p.build()
    first = batch(p.run())
    saved = p.checkpoint()
    second = batch(p.run())
    third = batch(p.run())
    for d, lab in first + second + third:
        assert d[0] == lab  # each file's label is its class folder
    assert len({d for d, _ in first + second + third}) == 24  # one epoch: no repeat
    p.close()  # (waits for the read ahead of the fourth batch)
    # Each batch read once (the first now, the others ahead), and the fourth ahead.
    assert len(reads) == 32 and len(set(reads[:24])) == 24
    restored = pipe(checkpoint=saved)
    restored.build()
    assert batch(restored.run()) == second and batch(restored.run()) == third
    restored.close()


@pytest.mark.parametrize("blob", [False, True])
@pytest.mark.parametrize("root", ["/data/set", "/data/set/", "rel", None])
def test_path_table_batches_equal_path_by_path(blob, root):
    """The bulk names and joins (the producer's per-batch path work) give os.path.join's
    paths, absolute names left as they are, in both of PathTable's storages."""
    from stoker.readers.index import PathTable

    names = ["a/1.jpg", "/abs/2.jpg", "b/ünï 3.jpg", "c//4.jpg", "5.jpg"]
    for chosen in (names, [n for n in names if not n.startswith("/")]):
        if blob:
            data = "".join(chosen).encode()
            lengths = np.array([len(n.encode()) for n in chosen])
            ends = np.cumsum(lengths)
            table = PathTable(root, blob=data, starts=ends - lengths, ends=ends)
        else:
            table = PathTable(root, chosen)
        ids = [3, 0, len(chosen) - 1, 1, 0]
        got = table.names(ids)
        assert got == [table.name(i) for i in ids] == [chosen[i] for i in ids]
        want = [os.path.join(root, chosen[i]) if root else chosen[i] for i in ids]
        assert table.joined(got) == want
