"""Seed 003's epoch mechanics, measured against DALI 2.4: an ``external_source`` iterator
object that rewinds itself before raising StopIteration, under a ``DALIGenericIterator``
with no reader and ``auto_reset=True``, delivers the same number of batches every epoch.

DALI asks the same iterator again after ``reset()`` (it does not call ``iter()`` again),
so a list's iterator stays exhausted while a self-rewinding object goes on; without a
reset, ``run()`` keeps raising StopIteration.
"""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def

torch = pytest.importorskip("torch")
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy  # noqa: E402


class Rewinding:
    """Three batches of two samples, then StopIteration (having rewound itself)."""

    def __init__(self, rewind_before_stop: bool = True):
        self.rewind_before_stop = rewind_before_stop
        self.i = 0

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        if self.i >= 3:
            if self.rewind_before_stop:
                self.i = 0
            raise StopIteration
        self.i += 1
        return [np.array([self.i], np.int32)] * 2


def _runs(source, before_reset: int, after_reset: int) -> list:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe_fn():
        return fn.external_source(source=source)

    pipe = pipe_fn()
    pipe.build()
    log = []

    def run():
        try:
            log.append(int(pipe.run()[0].as_array()[0, 0]))
        except StopIteration:
            log.append("stop")

    for _ in range(before_reset):
        run()
    pipe.reset()
    log.append("reset")
    for _ in range(after_reset):
        run()
    pipe.close()
    return log


def test_self_rewinding_source_goes_on_after_reset_as_in_dali():
    # DALI 2.4: [1, 2, 3, S, S, reset, 1, 2, 3, S, S]
    assert _runs(Rewinding(), 5, 5) == [1, 2, 3, "stop", "stop", "reset", 1, 2, 3, "stop",
                                        "stop"]


def test_source_that_does_not_rewind_stays_exhausted_after_reset_as_in_dali():
    # DALI 2.4 does not call iter() again on reset: the object's __iter__ never runs.
    assert _runs(Rewinding(rewind_before_stop=False), 4, 2) == [1, 2, 3, "stop", "reset",
                                                                "stop", "stop"]


def test_list_source_stays_exhausted_after_reset_as_in_dali():
    batches = [[np.array([k], np.int32)] * 2 for k in (1, 2)]
    assert _runs(batches, 3, 1) == [1, 2, "stop", "reset", "stop"]


@pytest.mark.parametrize("auto_reset", [True, False])
def test_iterator_without_reader_ends_epochs_at_the_source_stop(auto_reset):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe_fn():
        return fn.external_source(source=Rewinding())

    it = DALIGenericIterator(pipe_fn(), ["x"], auto_reset=auto_reset,
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    epochs = []
    for _ in range(3):
        epochs.append([int(b[0]["x"][0, 0]) for b in it])
        if not auto_reset:
            it.reset()
    assert epochs == [[1, 2, 3]] * 3
