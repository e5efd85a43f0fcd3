"""fn.readers.caffe / caffe2: databases written with lmdb (tests/container_writers.py)
read back in key order, values decoded against what was written, bad values named by
database and key (or skipped), and two pipelines on one database.

DALI's outcomes on the shared cases are replayed in test_caffe_vs_dali.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from container_writers import (
    C2_FLOAT,
    C2_INT32,
    C2_STRING,
    datum,
    tensor_proto,
    tensor_protos,
    write_lmdb,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker import Pipeline, SampleError, fn
from stoker.readers import DatasetError

pytest.importorskip("lmdb")


def read(reader, paths, batch_size=1, skip=False, **kw):
    pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None,
                    **({"on_error": "skip"} if skip else {}))
    with pipe:
        out = getattr(fn.readers, reader)(path=[str(p) for p in paths], **kw)
        pipe.set_outputs(*(out if isinstance(out, list) else [out]))
    pipe.build()
    tls = pipe.run()
    pipe.close()
    cols = [[np.array(tl.at(i)) for i in range(len(tl))] for tl in tls]
    return cols, [tls[0].source_info(i) for i in range(len(tls[0]))], pipe


@settings(max_examples=20, deadline=None)
@given(entries=st.dictionaries(st.binary(min_size=1, max_size=6),
                               st.tuples(st.binary(max_size=20),
                                         st.integers(-(1 << 31), (1 << 31) - 1)),
                               min_size=1, max_size=8))
def test_datums_read_back_in_key_order(tmp_path_factory, entries):
    db = tmp_path_factory.mktemp("caffe") / "db"
    write_lmdb(db, [(k, datum(data, label)) for k, (data, label) in entries.items()])
    (images, labels), infos, _ = read("caffe", [db], batch_size=len(entries))
    keys = sorted(entries)  # LMDB's order: bytes
    for k, key in enumerate(keys):
        data, label = entries[key]
        assert images[k].tobytes() == data
        assert labels[k].dtype == np.int32 and labels[k].tolist() == [label]
        assert infos[k] == f"{db} at key {key.decode('utf-8', 'backslashreplace')}"


def test_bad_values_are_named_or_skipped(tmp_path):
    write_lmdb(tmp_path / "db", [(b"a", datum(b"A", 1)), (b"b", b"\x0a\xff\xff\xff"),
                                 (b"c", datum(b"C", 3))])
    with pytest.raises(SampleError, match=r"db at key b: the value is not a Caffe Datum"):
        read("caffe", [tmp_path / "db"], batch_size=3)
    (images, labels), _, pipe = read("caffe", [tmp_path / "db"], batch_size=3, skip=True)
    assert [lab.tolist() for lab in labels] == [[1], [3]]
    (where, _), = pipe.skipped_samples()
    assert where == f"{tmp_path / 'db'} at key b"


def test_missing_and_empty_databases_fail_at_build(tmp_path):
    with pytest.raises(DatasetError, match="LMDB database '.*nope' does not exist"):
        read("caffe", [tmp_path / "nope"])
    write_lmdb(tmp_path / "empty", [])
    with pytest.raises(DatasetError, match="has no entries"):
        read("caffe2", [tmp_path / "empty"])


def test_two_pipelines_share_a_database(tmp_path):
    write_lmdb(tmp_path / "db", [(b"a", datum(b"A", 1))])
    pipes = []
    for _ in range(2):
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
        with pipe:
            pipe.set_outputs(*fn.readers.caffe(path=[str(tmp_path / "db")]))
        pipe.build()
        pipes.append(pipe)
    assert [p.run()[1].at(0).tolist() for p in pipes] == [[1], [1]]
    for p in pipes:
        p.close()
    read("caffe", [tmp_path / "db"])  # reopened after both closed it


def test_caffe2_label_types_against_the_protos_written(tmp_path):
    write_lmdb(tmp_path / "db", [(b"a", tensor_protos([
        tensor_proto(C2_STRING, b"IMG"), tensor_proto(C2_INT32, [2, 0]),
        tensor_proto(C2_FLOAT, [0.25, 4.0]), tensor_proto(C2_INT32, [1, 1, 5, 5])]))])
    (img, label), _, _ = read("caffe2", [tmp_path / "db"], label_type=1, num_labels=3)
    assert img[0].tobytes() == b"IMG" and label[0].tolist() == [1, 0, 1]
    (_, label), _, _ = read("caffe2", [tmp_path / "db"], label_type=3, num_labels=3)
    assert label[0].dtype == np.float32 and label[0].tolist() == [4.0, 0.0, 0.25]
    (_, label, box), _, _ = read("caffe2", [tmp_path / "db"], label_type=3, num_labels=3,
                                 bbox=True)
    assert box[0].tolist() == [1, 1, 5, 5]
    with pytest.raises(SampleError, match="db at key a: label_type=0 wants one INT32 or "
                                          "FLOAT label, the proto is INT32 with 2 values"):
        read("caffe2", [tmp_path / "db"])


def test_a_release_inside_an_open_waits_for_the_lock_instead_of_deadlocking(tmp_path):
    # A pipeline's __del__ can run (garbage collection) on a thread inside _open_env, which
    # holds the environments' lock: its release must be left for later, not wait (a hang).
    import lmdb

    from stoker.readers import lmdb_db

    path = tmp_path / "db"
    write_lmdb(path, [(b"k0", datum(b"x", 0))])
    env = lmdb_db._open_env(lmdb, str(path))
    with lmdb_db._ENVS_LOCK:
        lmdb_db._release_env(env)  # would block forever on a plain wait
        assert lmdb_db._ENVS[str(path.resolve())][1] == 1  # not yet released
    other = lmdb_db._open_env(lmdb, str(tmp_path / "db"))  # the next holder releases it
    assert other is not env and env not in [e for e, _ in lmdb_db._ENVS.values()]
    lmdb_db._release_env(other)
    assert str(path.resolve()) not in lmdb_db._ENVS
