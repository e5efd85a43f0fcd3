"""fn.io.file.read: the bytes of the file each sample names, as DALI 2.4 reads them.

Checked against each file's bytes read with Python (DALI 2.4, run here: uint8 and int8
paths both work, the output is uint8 with an empty layout, a missing file is a run-time
error).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import gradient_jpeg

from stoker import fn, pipeline_def, types
from stoker.errors import SampleError


def encoded(path, dtype=np.uint8) -> np.ndarray:
    return np.frombuffer(str(path).encode(), dtype=dtype)


def read(paths, dtype=np.uint8, **kwargs):
    @pipeline_def(batch_size=len(paths), num_threads=2, device_id=None)
    def pipe():
        names = fn.external_source(source=lambda: [encoded(p, dtype) for p in paths])
        return fn.io.file.read(names, **kwargs)

    p = pipe()
    p.build()
    (out,) = p.run()
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_reads_each_named_file_whole(tmp_path, dtype):
    files = []
    for i, size in enumerate([0, 1, 1000, 70_000]):
        path = tmp_path / f"f{i} é.bin"  # a space and a non-ASCII letter in the name
        path.write_bytes(np.random.default_rng(i).integers(0, 256, size, np.uint8).tobytes())
        files.append(path)
    out = read(files, dtype)
    assert out.layout() == "" and out.dtype == types.UINT8
    for i, path in enumerate(files):
        sample = np.asarray(out.at(i))
        assert sample.dtype == np.uint8 and sample.ndim == 1
        assert sample.tobytes() == path.read_bytes()


def test_portability_arguments_are_accepted(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello world")
    out = read([path], dont_use_mmap=True, use_o_direct=False)
    assert np.asarray(out.at(0)).tobytes() == b"hello world"


def test_read_then_decode_equals_the_file_reader(tmp_path):
    for i, (h, w) in enumerate([(40, 50), (33, 21)]):
        (tmp_path / "c").mkdir(exist_ok=True)
        (tmp_path / "c" / f"{i}.jpg").write_bytes(gradient_jpeg(h, w, seed=i).tobytes())
    paths = sorted((tmp_path / "c").iterdir())

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        names = fn.external_source(source=lambda: [encoded(p) for p in paths])
        return fn.decoders.image(jpegs), fn.decoders.image(fn.io.file.read(names))

    p = pipe()
    p.build()
    want, got = p.run()
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got.at(i)), np.asarray(want.at(i)))


def test_missing_file_names_the_path_and_the_operator(tmp_path):
    missing = tmp_path / "nope.jpg"
    with pytest.raises(SampleError, match=r"fn\.io\.file\.read.*No such file.*nope\.jpg"):
        read([missing])


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(SampleError, match="Is a directory"):
        read([tmp_path])


def test_a_path_must_be_a_1d_byte_array():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        names = fn.external_source(source=lambda: [np.array([47, 116], np.int32)])
        return fn.io.file.read(names)

    p = pipe()
    p.build()
    with pytest.raises(SampleError, match="a file path must be a 1-D array of its UTF-8 bytes"):
        p.run()
