"""stoker.experimental.dynamic (DALI 2.4's dynamic mode) against DALI's recorded outputs
(tests/data/dali_dynamic.npz, recorder tests/data/record/dynamic_mode.py), against the
same operator inside a pipeline, and its bad uses."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from dynamic_cases import CASES, IMAGE, SMALL, outcome

import stoker.experimental.dynamic as nd
from stoker import fn, pipeline_def, types
from stoker.errors import ArgumentError, ArgumentTypeError

RECORDED = np.load(pathlib.Path(__file__).parents[1] / "data" / "dali_dynamic.npz")
META = json.loads(str(RECORDED["meta"]))
# resize's linear filter rounds a few pixels one step apart from DALI (its own tests allow
# the same); everything else is exact.
TOLERANCE = {"resize_linear": 1}


@pytest.mark.parametrize("name", sorted(CASES))
def test_call_matches_dali_dynamic_mode(name):
    ref = META[name]
    if "error" in ref:
        with pytest.raises(Exception):  # noqa: B017 (DALI's own error type differs)
            CASES[name](nd, types)
        return
    ours = outcome(CASES[name](nd, types))
    assert ours["batch"] == ref["batch"] and len(ours["samples"]) == ref["n"]
    assert ours["dtype"] == ref["dtype"] and ours["layout"] == ref["layout"]
    for i, sample in enumerate(ours["samples"]):
        want = RECORDED[f"{name}/{i}"]
        assert sample.shape == want.shape
        np.testing.assert_allclose(sample.astype(np.float64), want.astype(np.float64),
                                   atol=TOLERANCE.get(name, 1e-5), rtol=1e-5)


def test_same_results_as_the_operator_inside_a_pipeline():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        img = fn.external_source(name="img", layout="HWC")
        out = fn.resize(img, resize_x=5, resize_y=4)
        return fn.crop_mirror_normalize(out, crop=(3, 3), mean=[9.0], std=[3.0], mirror=1)

    p = pipe()
    p.build()
    p.feed_input("img", [IMAGE, SMALL])
    (want,) = p.run()
    got = nd.crop_mirror_normalize(nd.resize(nd.as_batch([IMAGE, SMALL], layout="HWC"),
                                             resize_x=5, resize_y=4),
                                   crop=(3, 3), mean=[9.0], std=[3.0], mirror=1)
    assert len(got) == 2 and got.layout == "CHW"
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got[i]), want.at(i))


def test_random_operators_draw_on_and_seed_repeats():
    a = nd.random.uniform(batch_size=4, range=[0, 1], seed=11)
    b = nd.random.uniform(batch_size=4, range=[0, 1], seed=11)  # same pipeline: draws on
    fresh = [float(np.asarray(t)) for t in a]
    assert fresh != [float(np.asarray(t)) for t in b]
    assert all(0 <= v < 1 for v in fresh)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        return fn.random.uniform(range=[0, 1], seed=11)

    p = pipe()
    p.build()
    (first,) = p.run()
    np.testing.assert_array_equal(first.as_array(), np.array(fresh, np.float32))


def test_bad_uses_raise_the_pipelines_errors():
    with pytest.raises(ArgumentTypeError, match="fn.flip: unknown argument 'bogus'"):
        nd.flip(nd.as_tensor(IMAGE, layout="HWC"), bogus=1)
    with pytest.raises(ArgumentError, match="different batch sizes"):
        nd.flip(nd.as_batch([IMAGE, SMALL]), horizontal=nd.as_batch([np.int32(1)] * 3))
    with pytest.raises(AttributeError, match="no operator 'no_such_op'"):
        nd.no_such_op  # noqa: B018
    with pytest.raises(AttributeError, match="readers need a Pipeline"):
        nd.readers.file  # noqa: B018
    with pytest.raises(ArgumentError, match="set_num_threads"):
        nd.set_num_threads(0)
