"""fn.readers.mxnet: records written by tests/container_writers.py read back (labels,
images, split records), with and without an index (the walk, ``stoker recordio-index``),
and bad files named by file and offset, or skipped.

DALI's outcomes on the shared cases are replayed in test_mxnet_vs_dali.py.
"""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest
from container_writers import RECORDIO_MAGIC, irheader, write_recordio
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker import Pipeline, SampleError, fn
from stoker.cli.main import main as cli
from stoker.errors import IndexWarning
from stoker.readers import DatasetError

MAGIC = struct.pack("<I", RECORDIO_MAGIC)


def read(paths, index=None, batch_size=1, iterations=1, skip=False, **kw):
    pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None, seed=5,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        pipe.set_outputs(*fn.readers.mxnet(path=paths, index_path=index, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndexWarning)
        pipe.build()
    images, labels = [], []
    for _ in range(iterations):
        a, b = pipe.run()
        images += [np.array(a.at(i)) for i in range(len(a))]
        labels += [np.array(b.at(i)) for i in range(len(b))]
    pipe.close()
    return images, labels, pipe


@settings(max_examples=25, deadline=None)
@given(records=st.lists(st.tuples(
    st.one_of(st.floats(-1e6, 1e6, width=32), st.lists(st.floats(-1e6, 1e6, width=32),
                                                          min_size=1, max_size=4)),
    st.lists(st.sampled_from([b"ab", b"c", MAGIC]), max_size=5)), min_size=1, max_size=6))
def test_records_read_back_with_and_without_an_index(tmp_path_factory, records):
    # Payloads holding the magic number at 4-byte aligned places are split, as MXNet does.
    tmp = tmp_path_factory.mktemp("rec")
    datas, splits = [], {}
    for k, (label, pieces) in enumerate(records):
        head = irheader(label, k)
        body = b"".join(pieces)
        data = head + body
        cuts = [p for p in range(len(head), len(data) - 3, 4) if data[p:p + 4] == MAGIC]
        if cuts and all(b - a >= 4 for a, b in zip(cuts, cuts[1:], strict=False)):
            splits[k] = cuts
        datas.append(data)
    rec, idx = str(tmp / "a.rec"), str(tmp / "a.idx")
    write_recordio(rec, idx, datas, splits=splits)
    for index in ([idx], None):
        images, labels, _ = read([rec], index, batch_size=len(records))
        for k, (label, pieces) in enumerate(records):
            assert images[k].tobytes() == b"".join(pieces)
            want = np.array([label] if isinstance(label, float) else label, np.float32)
            np.testing.assert_array_equal(labels[k], want)


def test_index_tool_writes_mxnets_index(tmp_path):
    rec = str(tmp_path / "a.rec")
    offsets = write_recordio(rec, str(tmp_path / "want.idx"),
                             [irheader(1.0) + b"x" * k for k in range(5)])
    assert cli(["recordio-index", rec]) == 0
    assert (tmp_path / "a.rec.idx").read_text() == (tmp_path / "want.idx").read_text()
    assert len(offsets) == 5


def test_missing_index_is_built_with_a_warning(tmp_path):
    rec = str(tmp_path / "a.rec")
    write_recordio(rec, None, [irheader(float(k)) + b"x" for k in range(3)])
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(*fn.readers.mxnet(path=[rec]))
    with pytest.warns(IndexWarning, match="stoker recordio-index"):
        pipe.build()
    assert [pipe.run()[1].at(i)[0] for i in range(3)] == [0.0, 1.0, 2.0]


def test_truncated_file_fails_naming_the_offset_or_is_skipped(tmp_path):
    rec = str(tmp_path / "a.rec")
    offsets = write_recordio(rec, str(tmp_path / "a.idx"),
                             [irheader(float(k)) + b"x" * 30 for k in range(3)])
    data = open(rec, "rb").read()
    open(rec, "wb").write(data[:-10])
    for index in ([str(tmp_path / "a.idx")], None):
        with pytest.raises(SampleError, match=rf"a.rec at index {offsets[2]}: "):
            read([rec], index, batch_size=3)
        images, labels, pipe = read([rec], index, batch_size=3, skip=True)
        assert [lab[0] for lab in labels] == [0.0, 1.0]
        (where, _), = pipe.skipped_samples()
        assert where == f"{rec} at index {offsets[2]}"


def test_files_that_are_not_recordio_fail_at_build(tmp_path):
    junk = tmp_path / "junk.rec"
    junk.write_bytes(b"hello world, not a record")
    with pytest.raises(DatasetError, match="junk.rec' is not a RecordIO file"):
        read([str(junk)])
    with pytest.raises(DatasetError, match="RecordIO file '.*nope.rec' does not exist"):
        read([str(tmp_path / "nope.rec")])
    (tmp_path / "x.idx").write_text("0\t0\n1\t99999\n")
    write_recordio(str(tmp_path / "a.rec"), None, [irheader(1.0)])
    with pytest.raises(DatasetError, match="lists offset 99999, past the"):
        read([str(tmp_path / "a.rec")], [str(tmp_path / "x.idx")])
