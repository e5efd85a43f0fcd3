"""Layouts that come with the data: ``feed_input(..., layout=)``, a fed ``TensorList``, a
source returning one. DALI 2.4 decides layouts per batch; the rules asserted here were
measured by running it (CPU) on the same pipelines: the layout reaches the outputs and the
operators downstream, a source without a declared layout keeps the first non-empty layout
it is fed (empty batches before it are fine), a declared layout must match, and layout
checks that need the fed layout run when it is known."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, fn, pipeline_def
from stoker.errors import ArgumentError, ArgumentTypeError
from stoker.graph.layouts import Pending

IMG = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)


def _pipe(body, depth=1, batch_size=2):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None,
                  prefetch_queue_depth=depth)
    def make():
        return body()

    pipe = make()
    pipe.build()
    return pipe


def _fed(pipe, layouts, data=None, name="x"):
    """Feeds each layout in turn and runs: the outputs' layouts, or the error's type."""
    out = []
    for layout in layouts:
        try:
            pipe.feed_input(name, [IMG] * 2 if data is None else data, layout=layout)
            out.append(tuple(tl.layout() for tl in pipe.run()))
        except RuntimeError as e:
            out.append(type(e).__name__)
            break
    return out


def test_fed_layout_reaches_the_outputs_and_the_operators_downstream():
    pipe = _pipe(lambda: (lambda x: (x, fn.transpose(x, perm=[2, 0, 1]), fn.flip(x)))(
        fn.external_source(name="x")))
    pipe.feed_input("x", [IMG, IMG], layout="HWC")
    plain, chw, flipped = pipe.run()
    # DALI 2.4: ('HWC', 'CHW', 'HWC')
    assert (plain.layout(), chw.layout(), flipped.layout()) == ("HWC", "CHW", "HWC")
    # flip's default is horizontal: the W axis, which the fed layout puts second
    np.testing.assert_array_equal(np.asarray(flipped.at(0)), IMG[:, ::-1])


def test_operators_read_the_fed_layout_not_the_graphs_empty_one():
    # The same data fed as CHW: horizontal flip is then the last axis.
    pipe = _pipe(lambda: fn.flip(fn.external_source(name="x"), horizontal=1))
    pipe.feed_input("x", [IMG, IMG], layout="CHW")
    (out,) = pipe.run()
    assert out.layout() == "CHW"
    np.testing.assert_array_equal(np.asarray(out.at(1)), IMG[:, :, ::-1])


def test_a_check_that_needs_the_layout_passes_with_the_fed_one():
    # squeeze by axis name needs the layout: with the graph's empty one there is no 'C'.
    pipe = _pipe(lambda: fn.squeeze(fn.external_source(name="x"), axis_names="C"))
    pipe.feed_input("x", [IMG[:, :, :1]] * 2, layout="HWC")
    (out,) = pipe.run()
    assert out.layout() == "HW" and out.shape() == [(4, 6)] * 2


def test_a_check_that_the_fed_layout_fails_raises_at_run_like_dali():
    pipe = _pipe(lambda: fn.squeeze(fn.external_source(name="x"), axis_names="C"))
    pipe.feed_input("x", [IMG[:, :, :1]] * 2, layout="ABD")
    with pytest.raises(RuntimeError, match=r"fn\.squeeze.*'C'.*'ABD'") as info:
        pipe.run()
    assert isinstance(info.value, ArgumentError)  # what the check raises at the call


def test_an_argument_error_of_an_operator_after_such_a_source_still_names_it():
    with pytest.raises(ArgumentError, match="fn.reshape: nothing to do"):
        _pipe(lambda: fn.reshape(fn.external_source(source=lambda: [IMG] * 2))).run()


@pytest.mark.parametrize("layouts, expected", [
    # DALI 2.4, fed one batch per layout in turn (None: no layout argument):
    (["HWC", "ABC"], [("HWC",), "SampleError"]),
    (["HWC", None], [("HWC",), "SampleError"]),
    ([None, "HWC", "ABC"], [("",), ("HWC",), "SampleError"]),
    (["", "HWC", "HWC"], [("",), ("HWC",), ("HWC",)]),
    ([None, None], [("",), ("",)]),
])
def test_the_first_non_empty_fed_layout_stays_the_sources(layouts, expected):
    pipe = _pipe(lambda: fn.external_source(name="x"))
    assert _fed(pipe, layouts) == expected


def test_declared_layout_is_used_and_another_fed_one_is_an_error():
    pipe = _pipe(lambda: fn.external_source(name="x", layout="HWC"))
    assert _fed(pipe, [None, "HWC", "CHW"]) == [("HWC",), ("HWC",), "SampleError"]


def test_batches_in_flight_keep_the_layout_they_were_fed_with():
    class Feeding(Pipeline):
        def __init__(self):
            super().__init__(2, 1, None, prefetch_queue_depth=3)
            self.layouts = iter(["", "", "HWC", "HWC", "HWC"])

        def define_graph(self):
            self.x = fn.external_source()
            return self.x, fn.transpose(self.x, perm=[2, 0, 1])

        def iter_setup(self):
            self.feed_input(self.x, [IMG] * 2, layout=next(self.layouts))

    pipe = Feeding()
    got = [tuple(tl.layout() for tl in pipe.run()) for _ in range(3)]
    pipe.close()
    assert got == [("", ""), ("", ""), ("HWC", "CHW")]


def test_layout_that_cannot_describe_the_data_is_refused_at_feed_input():
    pipe = _pipe(lambda: fn.external_source(name="x"))
    with pytest.raises(RuntimeError, match="'HW' cannot describe 3-dimensional"):
        pipe.feed_input("x", [IMG] * 2, layout="HW")  # DALI: RuntimeError here too


@pytest.mark.parametrize("layout", [5, ["H", "W", "C"]])
def test_layout_that_is_not_a_string_is_a_type_error(layout):
    pipe = _pipe(lambda: fn.external_source(name="x"))
    with pytest.raises(ArgumentTypeError, match="'layout' must be a string"):
        pipe.feed_input("x", [IMG] * 2, layout=layout)


def test_a_fed_tensor_list_brings_its_layout_and_the_argument_overrides_it():
    producer = _pipe(lambda: fn.external_source(
        source=lambda: [IMG, IMG[:2]], layout="HWC"))
    (batch,) = producer.run()  # ragged, HWC
    pipe = _pipe(lambda: fn.external_source(name="x"))
    pipe.feed_input("x", batch)
    (out,) = pipe.run()
    assert out.layout() == "HWC" and out.shape() == [(4, 6, 3), (2, 6, 3)]
    other = _pipe(lambda: fn.external_source(name="x"))
    other.feed_input("x", batch, layout="ABC")
    assert other.run()[0].layout() == "ABC"  # DALI 2.4: the argument wins


def test_a_source_returning_a_tensor_list_gives_its_layout():
    producer = _pipe(lambda: fn.external_source(source=lambda: [IMG, IMG], layout="HWC"))
    (batch,) = producer.run()
    pipe = _pipe(lambda: fn.transpose(fn.external_source(source=lambda: batch), perm=[2, 0, 1]))
    (out,) = pipe.run()
    assert out.layout() == "CHW"


def test_undeclared_layouts_are_pending_in_the_graph_and_resolved_once():
    pipe = _pipe(lambda: fn.flip(fn.external_source(name="x")), depth=2)
    assert isinstance(pipe._outputs[0].layout, Pending)
    for _ in range(4):
        pipe.feed_input("x", [IMG] * 2, layout="HWC")
    for _ in range(3):
        assert pipe.run()[0].layout() == "HWC"
    variants = pipe._runtime.executor.variants
    assert len(variants._by_key) == 1  # one resolution for every batch with that layout
    pipe.close()


@pytest.mark.parametrize("on_error", ["raise", "skip"])
@pytest.mark.parametrize("depth", [1, 3])
def test_fed_layout_reaches_outputs_on_every_executor_path(on_error, depth):
    # skip mode runs batches in rounds (executor/skipping.py); depth 3 finishes a batch's
    # last stage on a worker while the next one starts (executor.Deferred).
    @pipeline_def(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=depth,
                  on_error=on_error)
    def make():
        x = fn.external_source(name="x")
        return fn.transpose(fn.flip(x, horizontal=1), perm=[2, 0, 1])

    pipe = make()
    for _ in range(depth + 2):
        pipe.feed_input("x", [IMG, IMG], layout="HWC")
    for _ in range(3):
        (out,) = pipe.run()
        assert out.layout() == "CHW"
        np.testing.assert_array_equal(np.asarray(out.at(0)), IMG[:, ::-1].transpose(2, 0, 1))
    pipe.close()
