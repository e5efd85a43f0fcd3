"""Tensor operators and ``node[...]`` against DALI 2.4 itself: same values, dtypes, layouts.

Skipped unless nvidia.dali is importable; run it with
``/work/bench-venv/bin/python -m pytest tests/dali/test_tensor_vs_dali.py``.
Each case builds the same graph in both libraries; a case DALI rejects must be rejected
by stoker too.
"""

from __future__ import annotations

import numpy as np
import pytest

dali = pytest.importorskip("nvidia.dali")
import nvidia.dali.fn as dali_fn  # noqa: E402
import nvidia.dali.types as dali_types  # noqa: E402

import stoker  # noqa: E402

RNG = np.random.default_rng(0)
IMG = [RNG.integers(0, 255, s, dtype=np.uint8) for s in ((5, 7, 3), (9, 4, 3), (6, 6, 3))]
IMGU = [RNG.integers(0, 255, (6, 8, 3), dtype=np.uint8) for _ in range(3)]
F = [RNG.standard_normal((4, 5)).astype(np.float32) * 100 for _ in range(3)]
V = [np.arange(n, dtype=np.int32) * 3 for n in (5, 2, 7)]
LAB = [np.array([0, 3, 1, 9], np.int32), np.array([2, 2, 5, -1], np.int32),
       np.array([1, 0, 0, 4], np.int32)]
ST = [np.array([1, 2], np.int32), np.array([0, 5], np.int32), np.array([3, 3], np.int32)]
FV = [np.array(4.5, np.float32), np.array(-2.0, np.float32), np.array(300.0, np.float32)]
IX = [np.array(0, np.int32), np.array(-1, np.int32), np.array(2, np.int32)]
RS = [np.array([2, -1], np.int32), np.array([-1, 3], np.int32), np.array([6, 24], np.int32)]

# name -> (inputs, layouts, build(fn, types, *nodes))
CASES = {
    "slice rel": ([IMG], ["HWC"], lambda fn, t, x: fn.slice(x, rel_start=[0.33, 0.5],
                                                            rel_shape=[0.5, 0.35])),
    "slice rel_end": ([IMG], ["HWC"], lambda fn, t, x: fn.slice(
        x, rel_start=[0.05, 0.15], rel_end=[0.65, 0.95])),
    "slice out of bounds": ([IMG], ["HWC"], lambda fn, t, x: fn.slice(
        x, rel_start=[0.25, 0.75], rel_shape=[0.5, 0.35])),
    "slice f32->u8": ([F], ["HW"], lambda fn, t, x: fn.slice(x, start=[1, 1], shape=[3, 2],
                                                             dtype=t.UINT8)),
    "slice f32->f16": ([F], ["HW"], lambda fn, t, x: fn.slice(x, start=[1, 1], shape=[3, 2],
                                                              dtype=t.FLOAT16)),
    "slice axis_names C": ([IMG], ["HWC"], lambda fn, t, x: fn.slice(
        x, rel_start=[0.34], rel_shape=[0.34], axis_names="C")),
    "slice CHW": ([IMGU], ["CHW"], lambda fn, t, x: fn.slice(x, rel_start=[0.1, 0.3],
                                                             rel_shape=[0.5, 0.5])),
    "slice float inputs": ([IMG, [np.array([0.21, 0.37], np.float32)] * 3,
                            [np.array([0.4, 0.3], np.float32)] * 3], ["HWC", None, None],
                           lambda fn, t, x, a, s: fn.slice(x, a, s)),
    "slice start node": ([IMG, ST], ["HWC", None],
                         lambda fn, t, x, s: fn.slice(x, start=s, shape=[2, 3])),
    "slice start node pad": ([IMGU, ST], ["HWC", None], lambda fn, t, x, s: fn.slice(
        x, start=s, rel_shape=[0.5, 0.5], out_of_bounds_policy="pad")),
    "reshape rel": ([IMG], ["HWC"], lambda fn, t, x: fn.reshape(x, rel_shape=[1, -1])),
    "reshape shape": ([IMGU], ["HWC"], lambda fn, t, x: fn.reshape(x, shape=[-1, 12])),
    "reshape src_dims": ([IMGU], ["HWC"], lambda fn, t, x: fn.reshape(x, src_dims=[1, 0, 2])),
    "reshape shape node": ([IMGU, RS], ["HWC", None],
                           lambda fn, t, x, s: fn.reshape(x, shape=s, layout="AB")),
    "reshape shape input": ([IMGU, RS], ["HWC", None],
                            lambda fn, t, x, s: fn.reshape(x, s, layout="")),
    "reinterpret": ([IMGU], ["HWC"], lambda fn, t, x: fn.reinterpret(
        fn.reshape(x, shape=[6, 24]), dtype=t.INT32)),
    "transpose": ([IMG], ["HWC"], lambda fn, t, x: fn.transpose(x, perm=[1, 2, 0])),
    "transpose reversed": ([F], ["HW"], lambda fn, t, x: fn.transpose(x)),
    "expand_dims": ([F], ["HW"], lambda fn, t, x: fn.expand_dims(x, axes=[2, 0],
                                                                 new_axis_names="AB")),
    "squeeze": ([[np.ones((1, 4, 1), np.float32)] * 3], ["AHB"],
                lambda fn, t, x: fn.squeeze(x, axis_names="BA")),
    "cat": ([IMG, IMG], ["HWC", "HWC"], lambda fn, t, a, b: fn.cat(a, b, axis=2)),
    "cat axis_name": ([IMG, IMG], ["HWC", "HWC"], lambda fn, t, a, b: fn.cat(a, b,
                                                                             axis_name="H")),
    "stack": ([IMG, IMG], ["HWC", "HWC"], lambda fn, t, a, b: fn.stack(a, b, axis=3,
                                                                       axis_name="N")),
    "stack negative": ([F, F, F], ["HW"] * 3, lambda fn, t, a, b, c: fn.stack(a, b, c,
                                                                              axis=-2)),
    "pad": ([V], [None], lambda fn, t, x: fn.pad(x, fill_value=-7)),
    "pad align": ([IMG], ["HWC"], lambda fn, t, x: fn.pad(x, axis_names="HW", align=[4, 3],
                                                          fill_value=9)),
    "pad shape": ([IMG], ["HWC"], lambda fn, t, x: fn.pad(x, axes=[0, 1], shape=[8, -1],
                                                          align=[1, 5])),
    "pad small shape": ([IMG], ["HWC"], lambda fn, t, x: fn.pad(x, axes=[-3], shape=[2],
                                                                align=[4])),
    "pad dense": ([IMGU], ["HWC"], lambda fn, t, x: fn.pad(x, axes=[0], shape=[10],
                                                           fill_value=1.9)),
    "pad fill node": ([V, FV], [None, None], lambda fn, t, x, f: fn.pad(x, fill_value=f)),
    "pad fill node u8": ([IMGU, FV], ["HWC", None], lambda fn, t, x, f: fn.pad(
        x, fill_value=f, axes=[1], shape=[10])),
    "one_hot": ([LAB], [None], lambda fn, t, x: fn.one_hot(x, num_classes=6)),
    "one_hot int8 axis": ([LAB], ["N"], lambda fn, t, x: fn.one_hot(
        x, num_classes=5, axis=0, dtype=t.INT8, on_value=200, off_value=-3.9, axis_name="K")),
    "one_hot single elements": ([[np.array([3], np.int32), np.array([1], np.int32),
                                  np.array([0], np.int32)]], [None],
                                lambda fn, t, x: fn.one_hot(x, num_classes=4)),
    "one_hot float": ([[np.array([[1.9, -0.2]], np.float32)] * 3], [None],
                      lambda fn, t, x: fn.one_hot(x, num_classes=3)),
    "index": ([IMG], ["HWC"], lambda fn, t, x: x[1, -2]),
    "index slices": ([IMG], ["HWC"], lambda fn, t, x: x[1:-1, ::-2, 2]),
    "index steps": ([IMG], ["HWC"], lambda fn, t, x: x[-1:0:-2, 1:100:3]),
    "index node": ([IMG, IX], ["HWC", None], lambda fn, t, x, i: x[:, i]),
    "index node bound": ([IMG, IX], ["HWC", None], lambda fn, t, x, i: x[i:, 1]),
}
CASES.update({
    f"slice {policy}": ([IMGU], ["HWC"], lambda fn, t, x, p=policy: fn.slice(
        x, start=[1, 1] if p == "error" else [-3, 4], shape=[3, 4], out_of_bounds_policy=p,
        fill_values=[1, 2, 3] if p == "pad" else [0]))
    for policy in ("error", "pad", "trim_to_shape", "edge", "reflect", "reflect_101", "wrap")
})


def _source(samples):
    def source():
        return samples
    return source


def _run(lib: str, inputs, layouts, build):
    """(samples, layout) of one batch, or the error's type name."""
    fn, types, pipeline_def = ((dali_fn, dali_types, dali.pipeline_def) if lib == "dali" else
                               (stoker.fn, stoker.types, stoker.pipeline_def))

    @pipeline_def(batch_size=len(inputs[0]), num_threads=1, device_id=None, seed=1)
    def pipe():
        nodes = [fn.external_source(source=_source(s), layout=lay) if lay else
                 fn.external_source(source=_source(s))
                 for s, lay in zip(inputs, layouts, strict=True)]
        return build(fn, types, *nodes)

    try:
        p = pipe()
        p.build()
        out = p.run()[0]
        return [np.array(out[i]) for i in range(len(out))], out.layout()
    except Exception as e:  # noqa: BLE001 - either library's error counts as a rejection
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_dali(name):
    inputs, layouts, build = CASES[name]
    theirs = _run("dali", inputs, layouts, build)
    ours = _run("stoker", inputs, layouts, build)
    if isinstance(theirs, str):
        assert isinstance(ours, str), f"DALI rejects {name} ({theirs}); stoker accepts it"
        return
    assert not isinstance(ours, str), f"stoker rejects {name} ({ours}); DALI accepts it"
    assert ours[1] == theirs[1], "layout"
    for j, (a, b) in enumerate(zip(ours[0], theirs[0], strict=True)):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), f"sample {j}"
        np.testing.assert_array_equal(a, b, err_msg=f"sample {j}")
