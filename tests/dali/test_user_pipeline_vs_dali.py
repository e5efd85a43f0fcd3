"""A user's pipeline file runs with stoker and with DALI, whichever of the two it imports
(``stoker bench FILE --compare dali``): the port is the import line.

Skipped unless nvidia.dali is importable; run it with
``/work/bench-venv/bin/python -m pytest tests/dali/test_user_pipeline_vs_dali.py``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")

import stoker  # noqa: E402
from stoker.cli.pipelines import load_user_pipeline  # noqa: E402

BODY = textwrap.dedent("""
    @pipeline_def
    def pipeline():
        values = fn.random.uniform(range=(0.0, 1.0), shape=(5,), seed=3)
        return fn.cast(values * 200.0 + 10.0, dtype=types.UINT8)
""")


@pytest.fixture(params=["from stoker import fn, pipeline_def, types",
                        "from nvidia.dali import fn, pipeline_def, types",
                        "import nvidia.dali.fn as fn\nimport nvidia.dali.types as types\n"
                        "from nvidia.dali import pipeline_def"])
def user_file(request, tmp_path):
    path = tmp_path / "user_pipe.py"
    path.write_text(request.param + "\n" + BODY)
    return str(path)


@pytest.mark.parametrize("library", ["stoker", "dali"])
def test_the_file_builds_with_the_library_asked_for(user_file, library):
    pipe = load_user_pipeline(user_file, 4, 1, library)
    want = dali.Pipeline if library == "dali" else stoker.Pipeline
    assert isinstance(pipe, want)
    pipe.build()
    (out,) = pipe.run()
    values = np.stack([np.array(out[i]) for i in range(4)]) if library == "dali" else \
        np.stack([np.array(x) for x in out])
    assert values.shape == (4, 5) and values.dtype == np.uint8
    assert ((values >= 10) & (values <= 210)).all()
    import nvidia.dali.fn as real_fn  # the aliases are gone afterwards

    assert sys.modules["nvidia.dali"] is dali and real_fn.__name__ == "nvidia.dali.fn"
    assert sys.modules["stoker"] is stoker


def test_bench_compares_a_user_file_with_dali(user_file):
    out = subprocess.run(
        [sys.executable, "-m", "stoker.cli.main", "bench", user_file + ":pipeline",
         "--compare", "dali,torchvision", "--runs", "1", "--seconds", "0.3",
         "--batch-size", "16"], capture_output=True, text=True, timeout=300, check=True).stdout
    assert "torchvision: no recipe for a user's pipeline file, skipped" in out
    rows = [line.split()[0] for line in out.splitlines()[-3:] if line.strip()]
    assert rows[-2:] == ["stoker", "dali"]


def test_a_file_importing_stoker_tfrecord_reads_with_dalis_features(tmp_path):
    # ``import stoker.tfrecord as tfrec`` answers with nvidia.dali.tfrecord under DALI, so
    # the feature descriptions are the ones DALI's reader takes.
    from stoker.cli.coco_tfrecord import _framed, encode_example
    from stoker.cli.indexes import tfrecord_index

    data = tmp_path / "small.tfrecord"
    data.write_bytes(b"".join(_framed(encode_example({"v": np.array([k, 2 * k])}))
                              for k in range(4)))
    tfrecord_index(str(data), str(data) + "_idx")
    path = tmp_path / "tf_pipe.py"
    path.write_text(textwrap.dedent(f"""
        import stoker.tfrecord as tfrec
        from stoker import fn, pipeline_def

        @pipeline_def
        def pipeline():
            return fn.readers.tfrecord(path=[{str(data)!r}], index_path=[{str(data) + "_idx"!r}],
                                       features={{"v": tfrec.FixedLenFeature([2], tfrec.int64,
                                                                             -1)}})["v"]
    """))
    for library in ("stoker", "dali"):
        pipe = load_user_pipeline(str(path), 4, 1, library)
        pipe.build()
        (out,) = pipe.run()
        values = np.stack([np.array(out[i]) for i in range(4)])
        np.testing.assert_array_equal(values, [[k, 2 * k] for k in range(4)])
    assert sys.modules["stoker.tfrecord"].__name__ == "stoker.tfrecord"
