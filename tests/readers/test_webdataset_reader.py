"""fn.readers.webdataset: tar formats and names against ``tarfile``'s own reading, index
files, the index tool, bad archives and on_error="skip".

Shards are written with ``tarfile`` (tests/container_writers.py). DALI's outcomes on the
shared cases are replayed in test_webdataset_vs_dali.py.
"""

from __future__ import annotations

import io
import tarfile
import warnings

import numpy as np
import pytest
from container_writers import add_tar_dir, write_tar
from webdataset_cases import write_index

from stoker import Pipeline, SampleError, fn, types
from stoker.cli.main import main as cli
from stoker.readers import DatasetError


def read(paths, ext, batch_size=1, iterations=1, skip=False, **kw):
    paths = paths if isinstance(paths, list) else [paths]
    pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None, seed=2,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        out = fn.readers.webdataset(paths=paths, ext=ext, name="R", **kw)
        pipe.set_outputs(*(out if isinstance(out, list) else [out]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pipe.build()
    cols: list[list] = [[] for _ in ext]
    infos: list[str] = []
    for _ in range(iterations):
        tls = pipe.run()
        for k, tl in enumerate(tls):
            cols[k] += [np.array(tl.at(i)) for i in range(len(tl))]
        infos += [tls[0].source_info(i) for i in range(len(tls[0]))]
    meta = pipe.reader_meta("R")
    pipe.close()
    return cols, infos, meta, pipe


@pytest.mark.parametrize("fmt", ["gnu", "pax", "ustar"])
def test_long_and_unicode_names_in_every_format_read_as_tarfile_reads_them(tmp_path, fmt):
    deep = "d" * 60 + "/" + "e" * 70 + "/"  # over ustar's 100-byte name field
    names = [f"{deep}sample.jpg", f"{deep}sample.cls", "ünï/cödé.jpg", "ünï/cödé.cls"]
    if fmt == "ustar":
        names = names[:2]  # ustar has no way to store non-ASCII names portably
    members = [(n, n.encode() * 3) for n in names]
    path = str(tmp_path / f"{fmt}.tar")
    write_tar(path, members, fmt)
    with tarfile.open(path) as tar:
        want = {m.name: (m.offset_data, tar.extractfile(m).read()) for m in tar.getmembers()}
    cols, infos, meta, _ = read(path, ["jpg", "cls"], batch_size=len(names) // 2)
    assert meta["epoch_size"] == len(names) // 2
    for k in range(len(names) // 2):
        jpg, cls = names[2 * k], names[2 * k + 1]
        assert cols[0][k].tobytes() == want[jpg][1]
        assert cols[1][k].tobytes() == want[cls][1]
        assert infos[k] == f"{path}:{want[jpg][0]}:{jpg}"


def test_pax_size_records_and_other_entries(tmp_path):
    # A PAX header that overrides the size (as for members over 8 GB), folders and links.
    path = str(tmp_path / "x.tar")
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("a.bin")
        info.size = 5
        info.pax_headers = {"size": "5", "comment": "x" * 300}
        tar.addfile(info, io.BytesIO(b"hello"))
        link = tarfile.TarInfo("b.bin")
        link.type = tarfile.SYMTYPE
        link.linkname = "a.bin"
        tar.addfile(link)
        info = tarfile.TarInfo("c.bin")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    add_tar_dir(path, "folder")
    cols, _, meta, _ = read(path, ["bin"], batch_size=2)
    assert meta["epoch_size"] == 2
    assert [c.tobytes() for c in cols[0]] == [b"hello", b"abc"]


def test_hidden_members_belong_to_no_sample(tmp_path):
    path = str(tmp_path / "h.tar")
    write_tar(path, [("a.jpg", b"A"), (".hidden.jpg", b"H"), ("dir/.x.jpg", b"X"),
                     ("b.jpg", b"B")])
    cols, _, meta, _ = read(path, ["jpg"], batch_size=2)
    assert meta["epoch_size"] == 2 and [c.tobytes() for c in cols[0]] == [b"A", b"B"]


def test_index_tool_writes_what_dalis_wds2idx_writes(tmp_path):
    path = str(tmp_path / "g.tar")
    write_tar(path, [("a.jpg", b"A"), ("a.cls", b"1"), ("dir/b.x.y", b"B")])
    write_index(path, str(tmp_path / "want.idx"))
    assert cli(["webdataset-index", path, str(tmp_path / "got.idx")]) == 0
    assert (tmp_path / "got.idx").read_text() == (tmp_path / "want.idx").read_text()


def test_dtypes_reinterpret_the_bytes(tmp_path):
    path = str(tmp_path / "n.tar")
    values = np.array([1.5, -2.0, 3.25], np.float32)
    write_tar(path, [("a.f4", values.tobytes()), ("a.i8", np.arange(2).tobytes())])
    cols, _, _, _ = read(path, ["f4", "i8"], dtypes=[types.FLOAT, types.INT64])
    assert cols[0][0].dtype == np.float32 and cols[0][0].tolist() == values.tolist()
    assert cols[1][0].dtype == np.int64 and cols[1][0].tolist() == [0, 1]


def test_a_truncated_member_names_the_shard_and_offset_or_is_skipped(tmp_path):
    path = str(tmp_path / "t.tar")
    write_tar(path, [("a.jpg", b"A" * 10), ("b.jpg", b"B" * 600), ("c.jpg", b"C")])
    with tarfile.open(path) as tar:
        b = tar.getmember("b.jpg").offset_data
    with open(path, "r+b") as f:
        f.truncate(b + 100)
    with pytest.raises(SampleError, match=rf"t.tar:{b}:b.jpg: the member at offset {b} "
                                          r"\(600 bytes\) runs past the end"):
        read(path, ["jpg"], batch_size=2)
    cols, _, _, pipe = read(path, ["jpg"], batch_size=2, skip=True)
    assert [c.tobytes() for c in cols[0]] == [b"A" * 10]
    (where, why), = pipe.skipped_samples()
    assert where == f"{path}:{b}:b.jpg" and "runs past the end" in why


def test_a_tar_cut_inside_a_header_warns_and_reads_its_whole_members(tmp_path):
    path = str(tmp_path / "t.tar")
    write_tar(path, [("a.jpg", b"A"), ("b.jpg", b"B")])
    with tarfile.open(path) as tar:
        b_header = tar.getmember("b.jpg").offset
    with open(path, "r+b") as f:
        f.truncate(b_header + 100)
    with pytest.warns(UserWarning, match=rf"ends inside a tar header at offset {b_header}"):
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
        with pipe:
            pipe.set_outputs(fn.readers.webdataset(paths=[path], ext=["jpg"]))
        pipe.build()
    assert pipe.epoch_size()  # one sample
    assert np.array(pipe.run()[0].at(0)).tobytes() == b"A"


def test_bad_shards_fail_at_build_naming_the_file(tmp_path):
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"hello world" * 100)
    with pytest.raises(DatasetError, match="junk.tar' is not a valid tar archive: a header's "
                                           "checksum or size field is not valid at offset 0"):
        read(str(junk), ["jpg"])
    with pytest.raises(DatasetError, match="tar file '.*nope.tar' does not exist"):
        read(str(tmp_path / "nope.tar"), ["jpg"])
    empty = tmp_path / "empty.tar"
    empty.write_bytes(bytes(1024))
    with pytest.raises(DatasetError, match="holds no sample"):
        read(str(empty), ["jpg"])


def test_an_index_outside_the_shard_fails_at_build(tmp_path):
    path = str(tmp_path / "g.tar")
    write_tar(path, [("a.jpg", b"A")])
    (tmp_path / "bad.idx").write_text("v1.2 1\njpg 51200 1 a.jpg\n")
    with pytest.raises(DatasetError, match="offset 51200 is outside"):
        read(path, ["jpg"], index_paths=[str(tmp_path / "bad.idx")])


def test_reads_without_mmap_and_shuffles_whole_shards(tmp_path):
    paths = []
    for f in range(4):
        paths.append(str(tmp_path / f"s{f}.tar"))
        write_tar(paths[-1], [(f"{f}_{i}.v", bytes([10 * f + i])) for i in range(3)])
    plain, _, _, _ = read(paths, ["v"], batch_size=12)
    copied, _, _, _ = read(paths, ["v"], batch_size=12, dont_use_mmap=True)
    assert [c.tolist() for c in plain[0]] == [c.tolist() for c in copied[0]]
    cols, _, _, _ = read(paths, ["v"], batch_size=12, iterations=3, shuffle_after_epoch=True)
    values = [int(c[0]) for c in cols[0]]
    for e in range(3):
        epoch = values[12 * e:12 * e + 12]
        assert sorted(epoch) == sorted(int(c[0]) for c in plain[0])
        # Each shard's samples stay together and in order.
        shards = [v // 10 for v in epoch]
        assert [shards[3 * k] for k in range(4)] == shards[::3]
        assert all(epoch[3 * k:3 * k + 3] == sorted(epoch[3 * k:3 * k + 3]) for k in range(4))
