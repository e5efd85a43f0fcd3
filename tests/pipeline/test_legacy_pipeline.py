"""DALI's legacy pipeline style: a ``Pipeline`` subclass whose ``define_graph()`` makes the
graph and whose ``iter_setup()`` feeds it. The call counts and the end-of-epoch traces were
measured by running DALI 2.4 (CPU) with the same classes; the numbers are in the asserts."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from stoker import Pipeline, fn, ops


class Counting(Pipeline):
    """Feeds batch k (1-based call count of iter_setup) as [k, k] per sample; raises
    StopIteration from iter_setup once it has been called ``stop_at`` times."""

    def __init__(self, depth: int = 2, stop_at: int | None = None, **kw):
        super().__init__(4, 1, None, seed=1, prefetch_queue_depth=depth, **kw)
        self.calls = 0
        self.stop_at = stop_at
        self.threads: set[int] = set()

    def define_graph(self):
        self.x = fn.external_source()
        return self.x

    def iter_setup(self):
        self.calls += 1
        self.threads.add(threading.get_ident())
        if self.stop_at is not None and self.calls >= self.stop_at:
            raise StopIteration
        self.feed_input(self.x, [np.full((2,), self.calls, np.int32)] * 4)


def _first(out) -> int:
    return int(np.asarray(out[0].at(0))[0])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_iter_setup_fills_the_prefetch_queue_at_the_first_run_then_once_per_run(depth):
    pipe = Counting(depth)
    pipe.build()
    assert pipe.calls == 0  # DALI: build() does not call it
    trace = []
    for _ in range(3):
        out = pipe.run()
        trace.append((pipe.calls, _first(out)))
    pipe.close()
    # DALI 2.4: depth 1 -> [(1,1),(2,2),(3,3)], 2 -> [(2,1),(3,2),(4,3)], 3 -> [(3,1),...]
    assert trace == [(depth + i, 1 + i) for i in range(3)]


def test_iter_setup_with_dict_prefetch_depth_fills_the_deeper_queue():
    pipe = Counting({"cpu_size": 2, "gpu_size": 3})
    trace = []
    for _ in range(2):
        out = pipe.run()
        trace.append((pipe.calls, _first(out)))
    pipe.close()
    assert trace == [(3, 1), (4, 2)]  # DALI 2.4 fills max(cpu_size, gpu_size)


def test_schedule_run_calls_iter_setup_like_run():
    pipe = Counting(2)
    pipe.build()
    pipe.schedule_run()
    assert pipe.calls == 2
    assert _first(pipe.share_outputs()) == 1
    pipe.release_outputs()
    pipe.schedule_run()
    assert pipe.calls == 3
    assert _first(pipe.share_outputs()) == 2
    pipe.close()


def test_stop_iteration_in_iter_setup_ends_the_epoch_after_the_batches_in_flight():
    pipe = Counting(2, stop_at=4)
    pipe.build()
    trace = []
    for epoch, stop_at in ((0, 4), (1, 7)):
        pipe.stop_at = stop_at
        for _ in range(6):
            try:
                out = pipe.run()
            except StopIteration:
                trace.append((epoch, "stop", pipe.calls))
                break
            trace.append((epoch, _first(out), pipe.calls))
        pipe.reset()
    pipe.close()
    # DALI 2.4: the 4th call raises during the 3rd run, which still returns batch 3; the
    # next run raises StopIteration without calling iter_setup. reset() starts over and
    # fills the queue again (calls 5 and 6).
    assert trace == [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, "stop", 4),
                     (1, 5, 6), (1, 6, 7), (1, "stop", 7)]


def test_stop_iteration_before_any_batch_makes_run_raise_stop_iteration():
    pipe = Counting(2, stop_at=1)
    with pytest.raises(StopIteration):
        pipe.run()
    with pytest.raises(StopIteration):
        pipe.run()
    assert pipe.calls == 1
    pipe.close()


def test_an_error_in_iter_setup_reaches_the_caller_of_run():
    class Broken(Counting):
        def iter_setup(self):
            raise KeyError("no such sample")

    pipe = Broken(2)
    with pytest.raises(KeyError, match="no such sample"):
        pipe.run()
    pipe.close()


def test_iter_setup_runs_on_the_callers_thread():
    pipe = Counting(3)
    for _ in range(4):
        pipe.run()
    pipe.close()
    assert pipe.threads == {threading.get_ident()}


def test_base_pipeline_iter_setup_is_a_no_op():
    assert Pipeline(batch_size=1, num_threads=1, device_id=None).iter_setup() is None


class Legacy(Pipeline):
    """The pattern of DALI's older docs and tests: operators made in __init__ (here fn.*
    calls inside define_graph), outputs returned from define_graph, data fed per iteration."""

    def __init__(self, batch_size, num_threads, device_id, images):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.images = images
        self.i = 0

    def define_graph(self):
        self.jpegs = fn.external_source(name="jpegs")
        self.labels = fn.external_source()
        flipped = fn.flip(self.jpegs, horizontal=1, vertical=0)
        return flipped, self.labels

    def iter_setup(self):
        n = self.batch_size
        batch = [self.images[(self.i + k) % len(self.images)] for k in range(n)]
        self.feed_input(self.jpegs, batch, layout="HWC")
        self.feed_input(self.labels, np.arange(self.i, self.i + n, dtype=np.int32))
        self.i += n


def test_legacy_subclass_builds_runs_and_feeds_per_iteration():
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (4 + k, 5, 3), dtype=np.uint8) for k in range(5)]
    pipe = Legacy(3, 2, None, images)
    pipe.build()
    for it in range(3):
        flipped, labels = pipe.run()
        assert flipped.layout() == "HWC"  # fed with feed_input(..., layout="HWC")
        for k in range(3):
            src = images[(3 * it + k) % 5]
            np.testing.assert_array_equal(flipped.at(k), src[:, ::-1])
        np.testing.assert_array_equal(np.asarray(labels.as_array()),
                                      np.arange(3 * it, 3 * it + 3))
    pipe.close()


class LegacyOps(Pipeline):
    """The same pattern with DALI's operator classes, and operators that need the layout fed
    in iter_setup (pad by axis name, then a transpose that names its output axes)."""

    def __init__(self):
        super().__init__(2, 1, None, seed=3)
        self.input = ops.ExternalSource()
        self.pad = ops.Pad(axis_names="C", shape=[4], fill_value=9)
        self.transpose = ops.Transpose(perm=[2, 0, 1])
        self.k = 0

    def define_graph(self):
        self.images = self.input()
        return self.transpose(self.pad(self.images))

    def iter_setup(self):
        self.k += 1
        img = np.arange(18, dtype=np.uint8).reshape(2, 3, 3) + self.k
        self.feed_input(self.images, [img, img[:1]], layout="HWC")


def test_legacy_ops_subclass_with_layout_dependent_operators_matches_dali():
    pipe = LegacyOps()
    pipe.build()
    for k in (1, 2):
        (out,) = pipe.run()
        assert out.layout() == "CHW"
        img = np.arange(18, dtype=np.uint8).reshape(2, 3, 3) + k
        for got, src in zip(out, (img, img[:1]), strict=True):
            padded = np.concatenate([src, np.full(src.shape[:2] + (1,), 9, np.uint8)], axis=2)
            np.testing.assert_array_equal(np.asarray(got), padded.transpose(2, 0, 1))
    pipe.close()
    # The same class on DALI 2.4 (nvidia.dali's ops and Pipeline) gives these two batches,
    # values and layout alike.
