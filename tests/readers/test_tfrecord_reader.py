"""fn.readers.tfrecord: Example parsing against the values written, indexes (given, missing,
built by ``stoker tfrecord-index``), gzip files, bad input and on_error="skip".

Files are written by tests/container_writers.py, which shares no code with the reader.
DALI's outcomes on the shared cases are replayed in test_tfrecord_vs_dali.py.
"""

from __future__ import annotations

import os
import struct
import warnings

import numpy as np
import pytest
from container_writers import example, feature, field_bytes, write_index, write_tfrecord
from hypothesis import given, settings
from hypothesis import strategies as st

import stoker.tfrecord as tfrec
from stoker import Pipeline, SampleError, fn, ops
from stoker.cli.main import main as cli
from stoker.errors import IndexWarning
from stoker.readers import DatasetError


def read(path, features, index=None, batch_size=None, iterations=1, skip=False, **kw):
    """Every sample of ``iterations`` batches: a list per feature, plus the source_infos."""
    paths = path if isinstance(path, list) else [path]
    n = batch_size or 1
    pipe = Pipeline(batch_size=n, num_threads=1, device_id=None, seed=1,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        out = fn.readers.tfrecord(path=paths, index_path=index, features=features, **kw)
        pipe.set_outputs(*out.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndexWarning)
        pipe.build()
    cols: list[list] = [[] for _ in features]
    infos = []
    for _ in range(iterations):
        tls = pipe.run()
        for k, tl in enumerate(tls):
            cols[k] += [np.array(tl.at(i)) for i in range(len(tl))]
        infos += [tls[0].source_info(i) for i in range(len(tls[0]))]
    pipe.close()
    return cols, infos, pipe


def write(tmp_path, records, name="a.tfrecord", index=True, compress=False):
    path = str(tmp_path / name)
    spans = write_tfrecord(path, records, compress=compress)
    if index:
        write_index(path + ".idx", spans)
    return path, spans


IMAGENET = {"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)}


def imagenet_records(n):
    return [example({"image/encoded": bytes(range(i % 7 + 1)) * 3, "image/class/label": [i],
                     "other": [0.5]}) for i in range(n)]


# -- parsing against what was written -------------------------------------------------------

KINDS = {
    tfrec.int64: st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=5),
    tfrec.float32: st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=5),
    tfrec.string: st.lists(st.binary(max_size=9), min_size=1, max_size=3),
}


@st.composite
def datasets(draw):
    kinds = draw(st.dictionaries(st.sampled_from(["a", "b", "key/c", ""]),
                                 st.sampled_from(list(KINDS)), min_size=1, max_size=4))
    records = draw(st.lists(st.fixed_dictionaries({k: KINDS[t] for k, t in kinds.items()}),
                            min_size=1, max_size=6))
    return kinds, records


@settings(max_examples=30, deadline=None)
@given(data=datasets(), packed=st.booleans())
def test_features_equal_the_values_written(tmp_path_factory, data, packed):
    kinds, records = data
    path, _ = write(tmp_path_factory.mktemp("examples"), [example(r, packed) for r in records])
    feats = {k: (tfrec.FixedLenFeature([], t, "") if t == tfrec.string
                 else tfrec.VarLenFeature(t, 0)) for k, t in kinds.items()}
    cols, _, _ = read(path, feats, path + ".idx", batch_size=len(records))
    for k, (key, kind) in enumerate(kinds.items()):
        for r, record in enumerate(records):
            got, value = cols[k][r], record[key]
            if kind == tfrec.string:
                want = np.frombuffer(value[0], np.uint8)
            else:
                want = np.array(value, tfrec.NUMPY_TYPES[kind]).reshape(-1)
            assert got.dtype == tfrec.NUMPY_TYPES[kind]
            np.testing.assert_array_equal(got, want, err_msg=f"record {r}, {key!r}")


def test_var_len_features_stored_with_another_type_are_empty_as_in_dali(tmp_path):
    path, _ = write(tmp_path, [example({"x": [b"ab"]}), example({"x": [1.5]})])
    cols, _, _ = read(path, {"x": tfrec.VarLenFeature(tfrec.int64, 0)}, batch_size=2)
    assert [c.shape for c in cols[0]] == [(0,), (0,)]


def test_protobuf_details_last_key_wins_messages_merge_unknown_fields_skipped(tmp_path):
    f_a, f_b = feature([1, 2]), feature([7])
    entry = lambda k, body: field_bytes(1, field_bytes(1, k) + field_bytes(2, body))  # noqa: E731
    unknown = bytes([0x18, 0x05, 0x25, 1, 2, 3, 4])  # field 3 varint, field 4 fixed32
    features_1 = entry(b"a", f_a) + entry(b"a", f_b) + unknown
    features_2 = entry(b"z", feature([b"zz"]))
    payload = field_bytes(1, features_1) + unknown + field_bytes(1, features_2)
    path, _ = write(tmp_path, [payload])
    cols, _, _ = read(path, {"a": tfrec.VarLenFeature(tfrec.int64, 0),
                             "z": tfrec.FixedLenFeature([], tfrec.string, "")})
    assert cols[0][0].tolist() == [7]
    assert cols[1][0].tobytes() == b"zz"


def test_negative_int64_and_unpacked_floats(tmp_path):
    path, _ = write(tmp_path, [example({"i": [-1, -(1 << 63), 5], "f": [1.5, -2.25]},
                                       packed=False)])
    cols, _, _ = read(path, {"i": tfrec.FixedLenFeature([3], tfrec.int64, 0),
                             "f": tfrec.FixedLenFeature([2], tfrec.float32, 0)})
    assert cols[0][0].tolist() == [-1, -(1 << 63), 5]
    assert cols[1][0].dtype == np.float32 and cols[1][0].tolist() == [1.5, -2.25]


def test_missing_features_give_the_default_or_an_empty_array(tmp_path):
    path, _ = write(tmp_path, [example({"x": [1]})])
    cols, _, _ = read(path, {"lab": tfrec.FixedLenFeature([2], tfrec.int64, -1),
                             "s": tfrec.FixedLenFeature([], tfrec.string, "none"),
                             "v": tfrec.VarLenFeature([3], tfrec.float32, 0.0)})
    assert cols[0][0].tolist() == [-1, -1]
    assert cols[1][0].tobytes() == b"none"
    assert cols[2][0].shape == (0, 3) and cols[2][0].dtype == np.float32


@pytest.mark.parametrize("feat, words", [
    (tfrec.FixedLenFeature([3], tfrec.int64, 0), "has 2 values; FixedLenFeature([3], int64"),
    (tfrec.FixedLenFeature([2], tfrec.float32, 0), "holds int64s; FixedLenFeature([2], "
                                                   "float32, 0) wants floats"),
    (tfrec.VarLenFeature([3], tfrec.int64, 0), "has 2 values, not a multiple of the partial"),
])
def test_value_counts_and_types_that_do_not_fit_name_the_record(tmp_path, feat, words):
    path, spans = write(tmp_path, [example({"x": [1]}), example({"x": [1, 2]})])
    with pytest.raises(SampleError, match="a.tfrecord at index 0") as e:
        # The first record has one value: FixedLen [3]/[2] and partial [3] reject it too.
        read(path, {"x": feat}, path + ".idx")
    cols, _, pipe = read(path, {"x": feat}, path + ".idx", batch_size=2, iterations=1,
                         skip=True)
    assert cols[0] == []
    reasons = [r for _, r in pipe.skipped_samples()]
    assert len(reasons) == 2 and any(words in r for r in reasons), reasons
    assert "wants" in str(e.value) or "multiple" in str(e.value)


def test_string_features_of_several_values_are_refused_at_the_call(tmp_path):
    with pytest.raises(ValueError, match="string feature must be a FixedLenFeature of one"):
        fn.readers.tfrecord(path=["x"], features={
            "s": tfrec.VarLenFeature(tfrec.string, "")})


def test_outputs_are_writable_views_and_the_file_stays_as_written(tmp_path):
    path, _ = write(tmp_path, imagenet_records(3))
    before = open(path, "rb").read()
    for mmap in (False, True):
        cols, _, _ = read(path, IMAGENET, path + ".idx", batch_size=3,
                          dont_use_mmap=not mmap)
        cols[0][0][:] = 0  # copy-on-write: the file is not touched
    assert open(path, "rb").read() == before


def test_returns_a_dict_in_feature_order_and_the_legacy_class_too(tmp_path):
    path, _ = write(tmp_path, imagenet_records(2))
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        out = fn.readers.tfrecord(path=path, index_path=path + ".idx", features=IMAGENET)
        legacy = ops.readers.TFRecord(path, path + ".idx", IMAGENET)()
        assert list(out) == list(IMAGENET) == list(legacy)
        pipe.set_outputs(out["image/class/label"], legacy["image/encoded"])
    pipe.build()
    labels, images = pipe.run()
    assert labels.at(1).tolist() == [1] and images.at(0).tobytes() == bytes(range(1)) * 3


# -- indexes ---------------------------------------------------------------------------------


def test_no_index_is_built_on_the_fly_with_one_warning(tmp_path):
    path, _ = write(tmp_path, imagenet_records(5), index=False)
    pipe = Pipeline(batch_size=5, num_threads=1, device_id=None)
    with pipe:
        out = fn.readers.tfrecord(path=path, features=IMAGENET)
        pipe.set_outputs(*out.values())
    with pytest.warns(IndexWarning, match="stoker tfrecord-index"):
        pipe.build()
    _, labels = pipe.run()
    assert [labels.at(i)[0] for i in range(5)] == list(range(5))
    # A given index file that does not exist is built too (DALI: an error).
    cols, infos, _ = read(path, IMAGENET, path + ".missing.idx", batch_size=5)
    assert [c[0] for c in cols[1]] == list(range(5))
    assert infos[1] == f"{path} at index {infos_offset(path, 1)}"


def infos_offset(path, k):
    """The byte offset of record k, by walking the framing here."""
    data = open(path, "rb").read()
    at = 0
    for _ in range(k):
        at += struct.unpack("<Q", data[at:at + 8])[0] + 16
    return at


def test_index_tool_writes_dalis_index(tmp_path, capsys):
    path, spans = write(tmp_path, imagenet_records(4), index=False)
    assert cli(["tfrecord-index", path, str(tmp_path / "x.idx")]) == 0
    assert (tmp_path / "x.idx").read_text() == "".join(f"{o} {s}\n" for o, s in spans)
    assert cli(["tfrecord-index", path]) == 0  # default: FILE.idx
    assert (tmp_path / "a.tfrecord.idx").read_text() == (tmp_path / "x.idx").read_text()


def test_gzip_files_read_like_plain_ones_and_index_by_decompressed_offsets(tmp_path):
    plain, spans = write(tmp_path, imagenet_records(4), "p.tfrecord")
    packed, _ = write(tmp_path, imagenet_records(4), "g.tfrecord.gz", index=False,
                      compress=True)
    assert cli(["tfrecord-index", packed]) == 0
    assert open(packed + ".idx").read() == open(plain + ".idx").read()
    a, _, _ = read(plain, IMAGENET, plain + ".idx", batch_size=4)
    for index in (packed + ".idx", None):
        b, _, _ = read(packed, IMAGENET, index, batch_size=4)
        for x, y in zip(a, b, strict=True):
            assert [v.tolist() for v in x] == [v.tolist() for v in y]


def test_malformed_index_files_name_the_line(tmp_path):
    path, _ = write(tmp_path, imagenet_records(2))
    (tmp_path / "bad.idx").write_text("0 20\nabc 7\n")
    with pytest.raises(DatasetError, match="bad.idx'?, line 2: b'abc' is not a number"):
        read(path, IMAGENET, str(tmp_path / "bad.idx"))
    (tmp_path / "odd.idx").write_text("0 20\n7\n")
    with pytest.raises(DatasetError, match="odd number of values"):
        read(path, IMAGENET, str(tmp_path / "odd.idx"))
    (tmp_path / "empty.idx").write_text("\n")
    with pytest.raises(DatasetError, match="is empty"):
        read(path, IMAGENET, str(tmp_path / "empty.idx"))


def test_a_wrong_index_names_the_file_and_offset(tmp_path):
    path, spans = write(tmp_path, imagenet_records(3))
    (o0, s0), (o1, s1), _ = spans
    (tmp_path / "shift.idx").write_text(f"{o0} {s0}\n{o1 + 3} {s1}\n")
    with pytest.raises(SampleError, match=rf"a.tfrecord at index {o1 + 3}: the record header "
                                          "claims a payload of"):
        read(path, IMAGENET, str(tmp_path / "shift.idx"), batch_size=2)
    size = os.path.getsize(path)
    (tmp_path / "past.idx").write_text(f"{o0} {s0}\n{size - 8} {s1}\n")
    with pytest.raises(SampleError, match=rf"at index {size - 8}: the record at offset "
                                          rf"{size - 8} \({s1} bytes\) lies outside"):
        read(path, IMAGENET, str(tmp_path / "past.idx"), batch_size=2)


def test_a_file_that_is_not_tfrecord_fails_at_build(tmp_path):
    (tmp_path / "x.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    with pytest.raises(DatasetError, match="x.jpg'?: the bytes at offset 0 are not a "
                                           "TFRecord record header"):
        read(str(tmp_path / "x.jpg"), IMAGENET)


def test_truncated_file_reads_its_good_records_and_fails_or_skips_the_rest(tmp_path):
    path, spans = write(tmp_path, imagenet_records(4), index=False)
    with open(path, "r+b") as f:
        f.truncate(spans[3][0] + 30)
    cols, _, _ = read(path, IMAGENET, batch_size=3)
    assert [c[0] for c in cols[1]] == [0, 1, 2]
    with pytest.raises(SampleError, match=rf"at index {spans[3][0]}: the record at offset "
                                          rf"{spans[3][0]} claims a payload of"):
        read(path, IMAGENET, batch_size=4)
    cols, _, pipe = read(path, IMAGENET, batch_size=4, skip=True)
    assert [c[0] for c in cols[1]] == [0, 1, 2]
    (where, why), = pipe.skipped_samples()
    assert where == f"{path} at index {spans[3][0]}" and "truncated" in why


def test_a_payload_that_is_not_an_example_is_reported(tmp_path):
    good = imagenet_records(3)
    path, spans = write(tmp_path, [good[0], b"\x0a\xff\xff", good[2]])
    with pytest.raises(SampleError, match=rf"index {spans[1][0]}: the record's payload is not "
                                          "a tf.train.Example"):
        read(path, IMAGENET, path + ".idx", batch_size=3)
    cols, _, _ = read(path, IMAGENET, path + ".idx", batch_size=3, skip=True)
    assert [c[0] for c in cols[1]] == [0, 2]  # no top-up from the next epoch: a short batch


def test_gzip_magic_with_a_valid_header_is_plain_tfrecord(tmp_path):
    # A first record of 0x08_8b1f bytes begins with the gzip magic; its header's CRC says
    # it is a record.
    pad = 0x088B1F - len(example({"image/encoded": b"", "image/class/label": [9]}))
    payload = example({"image/encoded": bytes(pad - 9), "image/class/label": [9]})
    payload = example({"image/encoded": bytes(pad - 9 + 0x088B1F - len(payload)),
                       "image/class/label": [9]})
    assert len(payload) == 0x088B1F, len(payload)
    path, _ = write(tmp_path, [payload], index=False)
    assert open(path, "rb").read(3) == b"\x1f\x8b\x08"
    cols, _, _ = read(path, IMAGENET)
    assert cols[1][0].tolist() == [9]
