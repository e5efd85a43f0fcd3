"""fn.external_source against DALI 2.4's behaviour, as measured by running DALI (notes in the
test names and comments): how callbacks are called, cycle modes, batches, feed_input,
parallel mode and the errors."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError, ArgumentTypeError, PipelineError, SampleError


def _pipe(build, batch_size=2, **kw):
    kw.setdefault("num_threads", 1)
    kw.setdefault("exec_pipelined", False)

    @pipeline_def(batch_size=batch_size, device_id=None, **kw)
    def pipe():
        return build()

    return pipe()


def _values(tl):
    return [int(np.asarray(tl.at(i)).reshape(-1)[0]) for i in range(len(tl))]


def _drain(pipe, limit=20):
    out = []
    for _ in range(limit):
        try:
            out.append(_values(pipe.run()[0]))
        except StopIteration:
            out.append("stop")
            break
    return out


def test_per_sample_callback_gets_sample_info_in_dali_order():
    seen = []

    def cb(info):
        seen.append((info.idx_in_epoch, info.idx_in_batch, info.iteration, info.epoch_idx))
        return np.array([info.idx_in_epoch], np.int32)

    pipe = _pipe(lambda: fn.external_source(source=cb, batch=False))
    pipe.run()
    pipe.run()
    pipe.reset()
    pipe.run()
    # DALI 2.4, batch 2: (0,0,0,0),(1,1,0,0),(2,0,1,0),(3,1,1,0); reset -> epoch 1, counters 0.
    assert seen == [(0, 0, 0, 0), (1, 1, 0, 0), (2, 0, 1, 0), (3, 1, 1, 0), (0, 0, 0, 1),
                    (1, 1, 0, 1)]


def test_parameter_with_default_still_counts_as_an_argument_like_dali():
    calls = []

    def cb(x=None):  # DALI passes the iteration to it, default or not
        calls.append(x)
        return [np.array([1], np.int32)] * 2

    _pipe(lambda: fn.external_source(source=cb)).run()
    assert calls == [0]


def test_zero_argument_per_sample_callable_is_called_once_per_sample():
    counter = iter(range(100))
    pipe = _pipe(lambda: fn.external_source(source=lambda: np.array([next(counter)], np.int32),
                                            batch=False), batch_size=3)
    assert _values(pipe.run()[0]) == [0, 1, 2]
    assert _values(pipe.run()[0]) == [3, 4, 5]


def test_batch_info_carries_iteration_and_epoch():
    seen = []

    def cb(info):
        seen.append((info.iteration, info.epoch_idx))
        return [np.array([info.iteration], np.int32)] * 2

    pipe = _pipe(lambda: fn.external_source(source=cb, batch_info=True))
    pipe.run()
    pipe.run()
    pipe.reset()
    pipe.run()
    assert seen == [(0, 0), (1, 0), (0, 1)]


BATCHES = [[np.array([i], np.int32)] for i in range(3)]


@pytest.mark.parametrize("cycle,expected", [
    # DALI 2.4, list of 3 batches, 5 runs, reset, 5 runs:
    (None, [[0], [1], [2], "stop", "|", "stop"]),
    ("no", [[0], [1], [2], "stop", "|", "stop"]),
    ("raise", [[0], [1], [2], "stop", "|", [0], [1], [2], "stop"]),
])
def test_cycle_modes_at_the_end_of_a_list(cycle, expected):
    pipe = _pipe(lambda: fn.external_source(source=BATCHES, cycle=cycle), batch_size=1)
    got = _drain(pipe) + ["|"]
    pipe.reset()
    got += _drain(pipe)
    assert got == expected


def test_cycle_quiet_wraps_and_reset_does_not_rewind():
    pipe = _pipe(lambda: fn.external_source(source=BATCHES, cycle="quiet"), batch_size=1)
    got = [_values(pipe.run()[0])[0] for _ in range(5)]
    pipe.reset()
    got += [_values(pipe.run()[0])[0] for _ in range(3)]
    assert got == [0, 1, 2, 0, 1, 2, 0, 1]


def test_generator_function_with_cycle_raise_restarts_on_reset():
    def gen():
        for i in range(2):
            yield [np.array([i], np.int32)]

    pipe = _pipe(lambda: fn.external_source(source=gen, cycle="raise"), batch_size=1)
    assert _drain(pipe) == [[0], [1], "stop"]
    pipe.reset()
    assert _drain(pipe) == [[0], [1], "stop"]


def test_per_sample_iterable_drops_a_partly_filled_batch():
    pipe = _pipe(lambda: fn.external_source(source=[np.array([i], np.int32) for i in range(5)],
                                            batch=False))
    assert _drain(pipe) == [[0, 1], [2, 3], "stop"]  # sample 4 never comes, as in DALI


def test_per_sample_iterable_quiet_wraps_inside_a_batch():
    pipe = _pipe(lambda: fn.external_source(source=[np.array([i], np.int32) for i in range(5)],
                                            batch=False, cycle="quiet"))
    assert [_values(pipe.run()[0]) for _ in range(4)] == [[0, 1], [2, 3], [4, 0], [1, 2]]


def test_num_outputs_returns_a_list_even_for_one_output():
    with _pipe(lambda: fn.external_source(source=lambda: ([np.zeros(1)] * 2,),
                                          num_outputs=1)[0]) as pipe:
        assert len(pipe.run()[0]) == 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def check():
        outs = fn.external_source(source=lambda: ([np.zeros(1)] * 2,), num_outputs=1)
        assert isinstance(outs, list) and len(outs) == 1
        return outs[0]

    check()


def test_batches_may_vary_in_size_down_to_empty():
    sizes = iter([2, 1, 3, 0])
    pipe = _pipe(lambda: fn.external_source(
        source=lambda: [np.array([k], np.int32) for k in range(next(sizes))]), batch_size=3)
    assert [len(pipe.run()[0]) for _ in range(4)] == [2, 1, 3, 0]


def test_batch_larger_than_batch_size_is_an_error():
    pipe = _pipe(lambda: fn.external_source(source=lambda: [np.zeros(1)] * 3))
    with pytest.raises(SampleError, match="returned 3 samples, more than the pipeline's "
                                          "batch_size=2"):
        pipe.run()


@pytest.mark.parametrize("kwargs,data,message", [
    ({"dtype": types.FLOAT}, np.zeros((2, 3), np.uint8), "gave UINT8 data, but dtype=FLOAT"),
    ({"ndim": 2}, np.zeros((2, 3, 4, 5), np.uint8), "gave 3-dimensional samples, but ndim=2"),
    ({"layout": "HW"}, np.zeros((2, 3, 4, 5), np.uint8), "layout 'HW' cannot describe "
                                                         "3-dimensional samples"),
])
def test_declared_type_ndim_and_layout_are_checked(kwargs, data, message):
    pipe = _pipe(lambda: fn.external_source(source=lambda: data, **kwargs))
    with pytest.raises(SampleError, match=message):
        pipe.run()


def test_samples_of_mixed_types_are_refused():
    pipe = _pipe(lambda: fn.external_source(source=lambda: [np.zeros(1, np.uint8),
                                                            np.zeros(1, np.int16)]))
    with pytest.raises(SampleError, match="different types"):
        pipe.run()


def test_exception_in_callback_names_the_operator_and_line():
    def cb():
        raise KeyError("no such image")

    pipe = _pipe(lambda: fn.external_source(source=cb))
    with pytest.raises(SampleError, match=r"fn\.external_source \(created at .*"
                                          r"test_external_source\.py:\d+\).*KeyError"):
        pipe.run()


def test_feed_input_queues_batches_by_name():
    pipe = _pipe(lambda: fn.external_source(name="inp"), prefetch_queue_depth=1)
    pipe.build()
    pipe.feed_input("inp", [np.array([1], np.int32)] * 2)
    pipe.feed_input("inp", np.array([[5], [6]], np.int32))
    assert _values(pipe.run()[0]) == [1, 1]
    assert _values(pipe.run()[0]) == [5, 6]
    assert _values(pipe.run(inp=np.array([[7]], np.int32))[0]) == [7]
    with pytest.raises(ArgumentError, match="no data was fed"):
        pipe.run()


def test_run_with_inputs_needs_depth_one_when_pipelined():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(name="inp")

    p = pipe()
    with pytest.raises(PipelineError, match="prefetch_queue_depth=1"):
        p.run(inp=[np.zeros(1)])
    p.close()


def test_feed_input_to_a_sourced_external_source_is_refused():
    pipe = _pipe(lambda: fn.external_source(source=lambda: [np.zeros(1)] * 2, name="src"))
    with pytest.raises(ArgumentError, match="only for an external_source without a source"):
        pipe.feed_input("src", [np.zeros(1)])


@pytest.mark.parametrize("kwargs,error,message", [
    ({"source": lambda: 1, "cycle": "quiet"}, ArgumentError, "not to a callable"),
    ({"source": (x for x in []), "cycle": "raise"}, ArgumentTypeError, "cannot be cycled"),
    ({"source": lambda: 1, "parallel": True}, ArgumentTypeError, "exactly one argument"),
    ({"source": 3}, ArgumentTypeError, "must be a callable, an iterable"),
    ({"source": [1], "cycle": "sometimes"}, ArgumentError, "'cycle' must be one of"),
    # DALI 2.4: ValueError at the call, feed_input feeds one output per external_source
    ({"num_outputs": 2}, ArgumentError, "'num_outputs' needs a 'source'"),
])
def test_invalid_sources_are_refused_at_the_call(kwargs, error, message):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(**kwargs)

    with pytest.raises(error, match=message):
        pipe()


def test_parallel_per_sample_callbacks_run_on_several_threads():
    threads = set()

    def cb(info):
        threads.add(threading.current_thread().name)
        time.sleep(0.01)
        return np.array([info.idx_in_batch], np.int32)

    pipe = _pipe(lambda: fn.external_source(source=cb, batch=False, parallel=True),
                 batch_size=8, py_num_workers=4)
    assert _values(pipe.run()[0]) == list(range(8))
    assert len(threads) > 1
    pipe.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("stoker-es")]


def test_parallel_batch_callbacks_run_ahead_in_order():
    def cb(info):
        time.sleep(0.02)
        if info.iteration >= 5:
            raise StopIteration
        return [np.array([info.iteration], np.int32)]

    pipe = _pipe(lambda: fn.external_source(source=cb, batch_info=True, parallel=True),
                 batch_size=1, py_num_workers=3)
    assert _drain(pipe) == [[0], [1], [2], [3], [4], "stop"]
    pipe.reset()
    assert _drain(pipe, limit=2) == [[0], [1]]
    pipe.close()


# -- per-sample sources with several outputs (issue 20, item 2) ------------------------------

_IMAGES = np.arange(5 * 4 * 4 * 3, dtype=np.uint8).reshape(5, 4, 4, 3)
_LABELS = np.array([3, 1, 4, 1, 5], np.int32)


def _cifar_like(info):
    """The CIFAR/ImageNet-from-memory pattern of DALI's docs: one (image, label) per call."""
    k = info.idx_in_epoch % len(_IMAGES)
    return _IMAGES[k], np.array([_LABELS[k]], np.int32)


@pytest.mark.parametrize("form", [tuple, list])
@pytest.mark.parametrize("parallel", [False, True])
def test_per_sample_source_gives_one_sample_per_output(form, parallel):
    def source(info):
        return form(_cifar_like(info))

    def build():
        images, labels = fn.external_source(source=source, num_outputs=2, batch=False,
                                            parallel=parallel)
        return images, labels

    pipe = _pipe(build, batch_size=3, py_num_workers=2)
    for it in range(2):
        images, labels = pipe.run()
        idx = [(3 * it + j) % 5 for j in range(3)]
        np.testing.assert_array_equal(np.stack([np.asarray(s) for s in images]), _IMAGES[idx])
        assert [int(np.asarray(s)[0]) for s in labels] == _LABELS[idx].tolist()
    pipe.close()


def test_per_sample_source_may_return_an_array_split_along_its_first_axis():
    # DALI 2.4: with num_outputs=2, a (2, 3) array is two samples of shape (3,)
    pipe = _pipe(lambda: tuple(fn.external_source(
        source=lambda info: np.full((2, 3), info.idx_in_epoch, np.int16) + np.arange(2)[:, None],
        num_outputs=2, batch=False)))
    a, b = pipe.run()
    assert a.shape() == [(3,), (3,)] and b.shape() == [(3,), (3,)]
    assert _values(a) == [0, 1] and _values(b) == [1, 2]


def test_per_sample_generator_with_three_outputs():
    def gen():
        k = 0
        while True:
            yield np.full((1,), k, np.uint8), np.full((2, 2), k, np.int32), np.float32(k)
            k += 1

    pipe = _pipe(lambda: tuple(fn.external_source(source=gen, num_outputs=3, batch=False)))
    a, b, c = pipe.run()
    assert _values(a) == [0, 1] and _values(b) == [0, 1]
    assert b.shape() == [(2, 2)] * 2 and c.shape() == [(), ()]
    assert str(c.dtype) == "FLOAT"


@pytest.mark.parametrize("value, got", [((np.zeros(1),), "1 value"), (7, "int")])
def test_per_sample_source_with_the_wrong_count_names_it(value, got):
    pipe = _pipe(lambda: tuple(fn.external_source(source=lambda info: value, num_outputs=2,
                                                  batch=False)))
    with pytest.raises(SampleError, match=f"num_outputs=2.*got {got} for sample 0"):
        pipe.run()


def test_feed_input_copies_the_data_at_the_call_like_dali():
    # DALI 2.4: changing the fed arrays after feed_input changes nothing (copied there).
    pipe = _pipe(lambda: fn.external_source(name="x"))
    dense = np.zeros((2, 3), np.int32)
    pipe.feed_input("x", dense)
    dense[:] = 7
    samples = [np.zeros(3, np.int32), np.ones(2, np.int32)]
    pipe.feed_input("x", samples)
    samples[0][:] = 9
    assert np.asarray(pipe.run()[0].as_array()).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert [np.asarray(s).tolist() for s in pipe.run()[0]] == [[0, 0, 0], [1, 1]]


def test_feed_input_refuses_bad_data_at_the_call():
    pipe = _pipe(lambda: fn.external_source(name="x"))
    with pytest.raises(RuntimeError, match="different types"):  # DALI: at feed_input too
        pipe.feed_input("x", [np.zeros(2, np.uint8), np.zeros(2, np.int32)])
    with pytest.raises(RuntimeError, match="more than the pipeline's batch_size=2"):
        pipe.feed_input("x", [np.zeros(2, np.uint8)] * 3)
