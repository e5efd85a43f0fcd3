"""Checkpoints against DALI 2.4 itself: the same protocol (a checkpoint after every call,
a fresh pipeline or iterator restored from each, the rest of the run replayed) gives the
same remaining label streams in both, for readers.file without shuffling (whose order is
DALI's), plain pipelines with a reset() mid-way and iterators with each last_batch_policy
over two equal shards. Random values differ by design (other generators), so only labels
are compared; that each library resumes bit-identically with itself is checked too.

Skipped unless nvidia.dali and torch are importable; run it with
``/work/bench-venv/bin/python -m pytest tests/dali/test_checkpoint_vs_dali.py``.
"""

from __future__ import annotations

import pytest
from helpers import play, sized_files

dali = pytest.importorskip("nvidia.dali")
pytest.importorskip("torch")
import nvidia.dali.fn as dali_fn  # noqa: E402
from nvidia.dali.plugin import pytorch as dali_pytorch  # noqa: E402

import stoker  # noqa: E402
from stoker.plugin import pytorch as stoker_pytorch  # noqa: E402

LIBS = {"dali": (dali_fn, dali.pipeline_def, dali_pytorch),
        "stoker": (stoker.fn, stoker.pipeline_def, stoker_pytorch)}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    return sized_files(tmp_path_factory.mktemp("ckpt_vs_dali"), 8)


def make(lib: str, files: list[str], shard_id: int = 0, num_shards: int = 1, **kw):
    fn, pipeline_def, _ = LIBS[lib]

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=4)
    def pipe():
        _, label = fn.readers.file(files=files, shard_id=shard_id, num_shards=num_shards,
                                   name="Reader")
        return label, fn.random.uniform()

    return pipe(enable_checkpointing=True, **kw)


def label_and_value(outputs: tuple) -> tuple:
    label, u = outputs
    return ([int(label.at(i)[0]) for i in range(len(label))],
            [float(u.at(i)) for i in range(len(u))])


def labels(stream: list) -> list:
    return [x if isinstance(x, str) else x[0] for x in stream]


@pytest.mark.parametrize("depth", [1, 3])
def test_pipelines_resume_where_dali_resumes(files, depth):
    calls = ["run"] * 4 + ["reset"] + ["run"] * 5
    resumed = {}
    for lib in LIBS:
        original = make(lib, files, prefetch_queue_depth=depth)
        checkpoints = [original.checkpoint()]
        expected = play(original, calls, checkpoints, outcome=label_and_value)
        resumed[lib] = []
        for k, saved in enumerate(checkpoints):
            rest = play(make(lib, files, prefetch_queue_depth=depth, checkpoint=saved),
                        calls[k:], outcome=label_and_value)
            assert rest == expected[k:], f"{lib} resumed after call {k}"
            resumed[lib].append(labels(rest))
    assert resumed["stoker"] == resumed["dali"]


def drive(it, checkpoints: list | None = None) -> list:
    out: list = []
    while out.count("end") < 3:
        try:
            out.append([d["label"].reshape(-1).tolist() for d in next(it)])
        except StopIteration:
            out.append("end")
            if checkpoints is not None:
                checkpoints.append((len(out) - 1, it.checkpoints()))
            it.reset()
        if checkpoints is not None:
            checkpoints.append((len(out), it.checkpoints()))
    return out


@pytest.mark.parametrize("policy", ["PARTIAL", "FILL", "DROP"])
def test_iterators_resume_where_dali_resumes(files, policy):
    resumed = {}
    for lib, (_, _, plugin) in LIBS.items():
        last_batch_policy = getattr(plugin.LastBatchPolicy, policy)

        def iterator(saved, lib=lib, plugin=plugin, last_batch_policy=last_batch_policy):
            pipes = [make(lib, files, s, 2, prefetch_queue_depth=2,
                          checkpoint=None if saved is None else saved[s]) for s in range(2)]
            return plugin.DALIGenericIterator(pipes, ["label", "u"], reader_name="Reader",
                                              last_batch_policy=last_batch_policy)

        checkpoints = [(0, (original := iterator(None)).checkpoints())]
        expected = drive(original, checkpoints)
        resumed[lib] = []
        for at, saved in checkpoints:
            rest = drive(iterator(saved))
            n = min(len(rest), len(expected) - at)
            assert rest[:n] == expected[at:at + n], f"{lib} resumed at {at}"
            resumed[lib].append(rest[:n])
    assert resumed["stoker"] == resumed["dali"]
