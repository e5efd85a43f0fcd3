"""What every reader does alike (tests/reader_datasets.py makes one dataset per reader):
reader_meta, checkpoints that resume exactly, a bad sample named by its source or skipped
with every good sample still delivered once per epoch, and reads on two threads equal to
reads on one. (Exactly once across shards: tests/plugin/test_exactly_once.py.)"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
from reader_datasets import READERS, make, output, reader_fn, sample_id

from stoker import Pipeline, SampleError

pytest.importorskip("lmdb")
N = 11


def _pipe(reader, kwargs, batch_size=3, **kw):
    pipe_kw = {k: kw.pop(k) for k in ("on_error", "enable_checkpointing", "checkpoint",
                                      "num_threads") if k in kw}
    pipe_kw.setdefault("num_threads", 1)
    pipe = Pipeline(batch_size=batch_size, device_id=None, seed=7, **pipe_kw)
    with pipe:
        pipe.set_outputs(output(reader, reader_fn(reader)(name="R", **kwargs,
                                                                      **kw)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.build()
    return pipe


def _ids(pipe, batches):
    out = []
    for _ in range(batches):
        (tl,) = pipe.run()
        out.append([sample_id(tl.at(i)) for i in range(len(tl))])
    return out


@pytest.mark.parametrize("reader", READERS)
def test_reader_meta_and_epoch_size(tmp_path, reader):
    kwargs = make(reader, str(tmp_path), N)
    pipe = _pipe(reader, kwargs, shard_id=1, num_shards=3, pad_last_batch=True)
    assert pipe.reader_meta("R") == {"epoch_size": N, "epoch_size_padded": 12,
                                     "number_of_shards": 3, "shard_id": 1,
                                     "pad_last_batch": 1, "stick_to_shard": 0}
    assert pipe.epoch_size("R") == 12


@pytest.mark.parametrize("reader", READERS)
def test_checkpoints_resume_exactly(tmp_path, reader):
    kwargs = make(reader, str(tmp_path), N)
    pipe = _pipe(reader, kwargs, random_shuffle=True, shard_id=1, num_shards=2,
                 enable_checkpointing=True)
    _ids(pipe, 3)
    saved = pipe.checkpoint()
    want = _ids(pipe, 6)
    resumed = _pipe(reader, kwargs, random_shuffle=True, shard_id=1, num_shards=2,
                    enable_checkpointing=True, checkpoint=saved)
    assert _ids(resumed, 6) == want
    assert len(set(sum(want, []))) > 5  # both shards' samples: the epochs moved on


@pytest.mark.parametrize("reader", READERS)
def test_a_bad_sample_is_named_or_skipped_once_per_epoch(tmp_path, reader):
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    bad = 5
    kwargs = make(reader, str(tmp_path), N, bad=bad)
    with pytest.raises(SampleError) as e:
        _ids(_pipe(reader, kwargs), 4)
    where = e.value.source
    assert where and (str(tmp_path) in where or where.endswith(".bin")), where
    pipe = _pipe(reader, kwargs, on_error="skip")
    it = DALIGenericIterator(pipe, ["data"], reader_name="R",
                             last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)
    for epoch in range(2):
        seen = collections.Counter()
        for batch in it:
            data = batch[0]["data"]
            seen.update((data[:, 0].to(torch.int32) + 256 * data[:, 1].to(torch.int32))
                        .tolist())
        assert seen == collections.Counter(i for i in range(N) if i != bad), epoch
        assert len(pipe.skipped_samples()) == epoch + 1
    sources = {s for s, _ in pipe.skipped_samples()}
    # readers.file lists its samples' paths relative to file_root.
    assert len(sources) == 1 and where.endswith(sources.pop()), (sources, where)


@pytest.mark.parametrize("reader", READERS)
def test_two_threads_read_what_one_reads(tmp_path, reader):
    kwargs = make(reader, str(tmp_path), N)
    one = _ids(_pipe(reader, kwargs, random_shuffle=True, num_threads=1), 5)
    two = _ids(_pipe(reader, kwargs, random_shuffle=True, num_threads=2), 5)
    assert one == two
    assert sorted(np.ravel(one[:3]).tolist() + one[3][:2]) == list(range(N))
