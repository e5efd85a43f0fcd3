"""The forms of data ``fn.external_source`` and ``feed_input`` may be given, run the same way
on DALI (tests/data/record/external_source_forms.py records its outcomes) and on stoker
(tests/sources/test_external_source_vs_dali.py replays them).

A case is a function of the library (``Lib``) that returns a ``Source`` (the source
callable, iterable or generator, with external_source's arguments) or a ``Feed`` (data for
``feed_input``, made fresh for each run, with its ``layout``). ``outcome`` runs it and
describes what happened: the outputs of every run (per output: shapes, type, layout, the
values), or where it stopped (stage: define, build, feed or run) and the exception.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Lib:
    fn: Any
    types: Any
    pipeline_def: Any
    TensorListCPU: Any
    TensorCPU: Any
    torch: Any = None  # None when torch is not installed


@dataclass
class Source:
    source: Any
    kwargs: dict = field(default_factory=dict)
    runs: int = 1
    batch_size: int = 2
    pipe: dict = field(default_factory=dict)
    torch: bool = False  # needs torch


@dataclass
class Feed:
    data: Any  # () -> the batch to feed
    layout: Any = None
    kwargs: dict = field(default_factory=dict)
    runs: int = 1
    batch_size: int = 2
    by_run: bool = False  # give it as pipe.run(x=data) (prefetch_queue_depth=1)
    torch: bool = False


def arr(*shape: int, dtype: Any = np.uint8, start: int = 0) -> np.ndarray:
    """Small distinct values, so that the recorded values tell samples apart."""
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(start, start + n) % 120).astype(dtype).reshape(shape)


def _gen_batches():
    for k in range(3):
        yield [arr(2, start=10 * k), arr(2, start=10 * k + 5)]


def _gen_samples():
    k = 0
    while True:
        yield arr(k % 3 + 1, start=k)
        k += 1


def _gen_sample_pairs():
    k = 0
    while True:
        yield arr(1, start=k), arr(2, 2, dtype=np.int16, start=k)
        k += 1


def _int_sample(info: Any) -> Any:
    return info.idx_in_epoch


def _cases() -> dict[str, Any]:
    c: dict[str, Any] = {}
    two = [arr(2, 3), arr(2, 3, start=6)]
    ragged = [arr(2, 3), arr(1, 2, start=7)]

    # -- batch mode: the source returns a batch per call ---------------------------------
    c["batch_list_uniform"] = lambda lib: Source(lambda: two)
    c["batch_list_ragged"] = lambda lib: Source(lambda: ragged)
    c["batch_tuple_of_samples"] = lambda lib: Source(lambda: tuple(ragged))
    c["batch_ndarray_dense"] = lambda lib: Source(lambda: arr(2, 2, 3))
    c["batch_ndarray_1d_scalars"] = lambda lib: Source(lambda: arr(2, dtype=np.int32))
    c["batch_ndarray_0d"] = lambda lib: Source(lambda: np.int32(3))
    c["batch_python_lists"] = lambda lib: Source(lambda: [[1, 2], [3, 4]])
    c["batch_python_ints"] = lambda lib: Source(lambda: [1, 2])
    c["batch_torch_dense"] = lambda lib: Source(
        lambda: lib.torch.arange(6, dtype=lib.torch.float32).reshape(2, 3), torch=True)
    c["batch_list_of_torch"] = lambda lib: Source(
        lambda: [lib.torch.zeros(3), lib.torch.ones(2)], torch=True)
    c["batch_tensorlist_dense"] = lambda lib: Source(
        lambda: lib.TensorListCPU(arr(2, 2, 3), "HW"))
    c["batch_tensorlist_ragged"] = lambda lib: Source(
        lambda: lib.TensorListCPU(ragged, "HW"))
    c["batch_list_of_tensorcpu"] = lambda lib: Source(
        lambda: [lib.TensorCPU(s, "HW") for s in ragged])
    c["batch_mixed_dtypes"] = lambda lib: Source(lambda: [arr(2), arr(2, dtype=np.int32)])
    c["batch_mixed_ndim"] = lambda lib: Source(lambda: [arr(2), arr(2, 2)])
    c["batch_too_many_samples"] = lambda lib: Source(lambda: [arr(2)] * 3)
    c["batch_fewer_samples"] = lambda lib: Source(lambda: [arr(2)])
    c["batch_empty"] = lambda lib: Source(lambda: [])
    for dt in ("bool", "float16", "float64", "int64", "uint16"):
        c[f"batch_dtype_{dt}"] = lambda lib, dt=dt: Source(lambda: [arr(2, dtype=dt)] * 2)
    c["batch_non_contiguous"] = lambda lib: Source(lambda: [arr(4, 4)[:, ::2]] * 2)
    c["batch_strings"] = lambda lib: Source(lambda: ["ab", "cd"])
    c["batch_object_array"] = lambda lib: Source(
        lambda: np.array([arr(2), arr(3)], dtype=object))
    c["batch_callable_iteration"] = lambda lib: Source(
        lambda i: [np.array([i], np.int64)] * 2, runs=2)
    c["batch_callable_batch_info"] = lambda lib: Source(
        lambda info: [np.array([info.iteration, info.epoch_idx], np.int64)] * 2,
        kwargs={"batch_info": True}, runs=2)
    c["batch_generator_function"] = lambda lib: Source(_gen_batches, runs=4)
    c["batch_generator_object"] = lambda lib: Source(_gen_batches(), runs=4)
    c["batch_iterable_list"] = lambda lib: Source([two, ragged], runs=3)
    c["batch_iterable_cycle_quiet"] = lambda lib: Source([two, ragged], runs=3,
                                                         kwargs={"cycle": "quiet"})
    c["batch_declared_layout"] = lambda lib: Source(lambda: two, kwargs={"layout": "HW"})
    c["batch_declared_layout_wrong_ndim"] = lambda lib: Source(lambda: two,
                                                               kwargs={"layout": "HWC"})
    c["batch_declared_dtype_mismatch"] = lambda lib: Source(
        lambda: two, kwargs={"dtype": lib.types.INT32})
    c["batch_declared_dtype_match"] = lambda lib: Source(
        lambda: two, kwargs={"dtype": lib.types.UINT8, "ndim": 2})

    # -- batch mode with num_outputs: a batch per output ---------------------------------
    c["batch_n1_tuple"] = lambda lib: Source(lambda: (two,), kwargs={"num_outputs": 1})
    c["batch_n1_bare_batch"] = lambda lib: Source(lambda: two, kwargs={"num_outputs": 1})
    c["batch_n2_tuple"] = lambda lib: Source(lambda: (two, ragged), kwargs={"num_outputs": 2})
    c["batch_n2_list"] = lambda lib: Source(lambda: [two, ragged], kwargs={"num_outputs": 2})
    c["batch_n2_ndarray"] = lambda lib: Source(lambda: arr(2, 2, 3),
                                               kwargs={"num_outputs": 2})
    c["batch_n3_mixed_dtypes"] = lambda lib: Source(
        lambda: (two, [arr(1, dtype=np.float32)] * 2, arr(2, dtype=np.int64)),
        kwargs={"num_outputs": 3})
    c["batch_n2_wrong_count"] = lambda lib: Source(lambda: (two, two, two),
                                                   kwargs={"num_outputs": 2})
    c["batch_n2_different_sizes"] = lambda lib: Source(lambda: (two, [arr(2)]),
                                                       kwargs={"num_outputs": 2})
    c["batch_n2_layouts"] = lambda lib: Source(
        lambda: (two, [arr(3)] * 2), kwargs={"num_outputs": 2, "layout": ["HW", "C"]})
    c["batch_n2_iterable"] = lambda lib: Source([(two, ragged)] * 5, kwargs={"num_outputs": 2},
                                                runs=2)
    c["batch_n2_one_batch_only"] = lambda lib: Source(lambda: (two,), kwargs={"num_outputs": 2})
    c["batch_callable_returning_an_iterator"] = lambda lib: Source(lambda: iter([two]))

    # -- per-sample mode: the source returns a sample per call ---------------------------
    c["sample_ndarray"] = lambda lib: Source(lambda info: arr(2, start=info.idx_in_epoch),
                                             kwargs={"batch": False}, runs=2)
    c["sample_ragged"] = lambda lib: Source(
        lambda info: arr(info.idx_in_batch + 1, 2), kwargs={"batch": False})
    c["sample_numpy_scalar"] = lambda lib: Source(lambda info: np.float32(info.idx_in_epoch),
                                                  kwargs={"batch": False})
    c["sample_0d_array"] = lambda lib: Source(lambda info: np.array(info.idx_in_epoch),
                                              kwargs={"batch": False})
    c["sample_python_int"] = lambda lib: Source(_int_sample, kwargs={"batch": False})
    c["sample_python_float"] = lambda lib: Source(lambda info: 1.5, kwargs={"batch": False})
    c["sample_python_list"] = lambda lib: Source(lambda info: [1, 2, 3],
                                                 kwargs={"batch": False})
    c["sample_tuple_one_output"] = lambda lib: Source(lambda info: (arr(2), arr(2)),
                                                      kwargs={"batch": False})
    c["sample_torch"] = lambda lib: Source(lambda info: lib.torch.zeros(2, 3),
                                           kwargs={"batch": False}, torch=True)
    c["sample_tensorcpu"] = lambda lib: Source(lambda info: lib.TensorCPU(arr(2, 3), "HW"),
                                               kwargs={"batch": False})
    c["sample_mixed_dtypes"] = lambda lib: Source(
        lambda info: arr(2, dtype=np.uint8 if info.idx_in_batch == 0 else np.int32),
        kwargs={"batch": False})
    c["sample_mixed_ndim"] = lambda lib: Source(
        lambda info: arr(*([2] * (1 + info.idx_in_batch))), kwargs={"batch": False})
    c["sample_no_argument"] = lambda lib: Source(lambda: arr(2), kwargs={"batch": False})
    c["sample_generator_function"] = lambda lib: Source(_gen_samples, kwargs={"batch": False},
                                                        runs=2)
    c["sample_iterable_quiet"] = lambda lib: Source(
        [arr(1), arr(2), arr(3)], kwargs={"batch": False, "cycle": "quiet"}, runs=2)
    c["sample_n2_tuple"] = lambda lib: Source(
        lambda info: (arr(2, 3, start=info.idx_in_epoch), np.array([info.idx_in_epoch])),
        kwargs={"batch": False, "num_outputs": 2}, runs=2)
    c["sample_n2_list"] = lambda lib: Source(
        lambda info: [arr(2, 3), arr(4)], kwargs={"batch": False, "num_outputs": 2})
    c["sample_n2_ndarray_split"] = lambda lib: Source(
        lambda info: arr(2, 3, start=info.idx_in_epoch),
        kwargs={"batch": False, "num_outputs": 2})
    c["sample_n3_tuple"] = lambda lib: Source(
        lambda info: (arr(1), arr(2, dtype=np.int16), np.float32(info.idx_in_epoch)),
        kwargs={"batch": False, "num_outputs": 3})
    c["sample_n2_wrong_count"] = lambda lib: Source(
        lambda info: (arr(1), arr(1), arr(1)), kwargs={"batch": False, "num_outputs": 2})
    c["sample_n2_one_value"] = lambda lib: Source(
        lambda info: (arr(1),), kwargs={"batch": False, "num_outputs": 2})
    c["sample_n2_scalar"] = lambda lib: Source(
        lambda info: np.float32(1), kwargs={"batch": False, "num_outputs": 2})
    c["sample_n2_generator"] = lambda lib: Source(
        _gen_sample_pairs, kwargs={"batch": False, "num_outputs": 2}, runs=2)
    c["sample_n2_parallel"] = lambda lib: Source(
        _pair_sample, kwargs={"batch": False, "num_outputs": 2, "parallel": True}, runs=2,
        pipe={"py_num_workers": 2})
    c["sample_n2_layouts"] = lambda lib: Source(
        lambda info: (arr(2, 2), arr(3)),
        kwargs={"batch": False, "num_outputs": 2, "layout": ["HW", "C"]})

    # -- feed_input ----------------------------------------------------------------------
    c["feed_list_uniform"] = lambda lib: Feed(lambda: list(two))
    c["feed_list_ragged"] = lambda lib: Feed(lambda: list(ragged))
    c["feed_tuple"] = lambda lib: Feed(lambda: tuple(ragged))
    c["feed_ndarray_dense"] = lambda lib: Feed(lambda: arr(2, 2, 3))
    c["feed_ndarray_1d_scalars"] = lambda lib: Feed(lambda: arr(2, dtype=np.float32))
    c["feed_ndarray_0d"] = lambda lib: Feed(lambda: np.uint8(3))
    c["feed_python_lists"] = lambda lib: Feed(lambda: [[1, 2], [3, 4]])
    c["feed_python_ints"] = lambda lib: Feed(lambda: [1, 2])
    c["feed_torch_dense"] = lambda lib: Feed(lambda: lib.torch.zeros(2, 3), torch=True)
    c["feed_list_of_torch"] = lambda lib: Feed(
        lambda: [lib.torch.zeros(3), lib.torch.ones(2)], torch=True)
    c["feed_tensorlist_dense"] = lambda lib: Feed(lambda: lib.TensorListCPU(arr(2, 4, 3), "HW"))
    c["feed_tensorlist_dense_layout_argument"] = lambda lib: Feed(
        lambda: lib.TensorListCPU(arr(2, 4, 3), "HW"), layout="AB")
    c["feed_tensorlist_ragged"] = lambda lib: Feed(lambda: lib.TensorListCPU(ragged, "HW"))
    c["feed_pipeline_output_ragged"] = lambda lib: Feed(lambda: _pipeline_output(lib))
    c["feed_list_of_tensorcpu"] = lambda lib: Feed(
        lambda: [lib.TensorCPU(s, "HW") for s in ragged])
    c["feed_tensorcpu_mixed_layouts"] = lambda lib: Feed(
        lambda: [lib.TensorCPU(ragged[0], "HW"), lib.TensorCPU(ragged[1], "AB")])
    c["feed_too_many_samples"] = lambda lib: Feed(lambda: [arr(2)] * 3)
    c["feed_fewer_samples"] = lambda lib: Feed(lambda: [arr(2)])
    c["feed_empty"] = lambda lib: Feed(lambda: [])
    c["feed_mixed_dtypes"] = lambda lib: Feed(lambda: [arr(2), arr(2, dtype=np.int32)])
    c["feed_mixed_ndim"] = lambda lib: Feed(lambda: [arr(2), arr(2, 2)])
    c["feed_object_array"] = lambda lib: Feed(lambda: np.array([arr(2), arr(3)], dtype=object))
    c["feed_strings"] = lambda lib: Feed(lambda: ["ab", "cd"])
    c["feed_non_contiguous"] = lambda lib: Feed(lambda: [arr(4, 4)[:, ::2]] * 2)
    for dt in ("bool", "float16", "float64", "int64"):
        c[f"feed_dtype_{dt}"] = lambda lib, dt=dt: Feed(lambda: [arr(2, dtype=dt)] * 2)
    c["feed_layout"] = lambda lib: Feed(lambda: list(two), layout="HW")
    c["feed_layout_empty"] = lambda lib: Feed(lambda: list(two), layout="")
    c["feed_layout_wrong_length"] = lambda lib: Feed(lambda: list(two), layout="HWC")
    c["feed_layout_int"] = lambda lib: Feed(lambda: list(two), layout=5)
    c["feed_layout_list"] = lambda lib: Feed(lambda: list(two), layout=["H", "W"])
    c["feed_declared_layout_same"] = lambda lib: Feed(lambda: list(two), layout="HW",
                                                      kwargs={"layout": "HW"})
    c["feed_declared_layout_other"] = lambda lib: Feed(lambda: list(two), layout="AB",
                                                       kwargs={"layout": "HW"})
    c["feed_declared_layout_none_fed"] = lambda lib: Feed(lambda: list(two),
                                                          kwargs={"layout": "HW"})
    c["feed_declared_ndim_mismatch"] = lambda lib: Feed(lambda: list(two), kwargs={"ndim": 3})
    c["feed_by_run_keyword"] = lambda lib: Feed(lambda: list(ragged), by_run=True, runs=2)
    c["feed_num_outputs_without_source"] = lambda lib: Feed(
        lambda: (list(two), list(two)), kwargs={"num_outputs": 2})
    c["feed_to_a_source_with_a_callable"] = lambda lib: Feed(
        lambda: list(two), kwargs={"source": lambda: two})
    return c


def _pair_sample(info: Any) -> tuple:
    """A module-level callback (DALI's parallel mode pickles or forks it)."""
    return arr(2, 3, start=info.idx_in_epoch), np.array([info.idx_in_epoch], np.int32)


def _pipeline_output(lib: Lib) -> Any:
    """A ragged batch as another pipeline returns it."""
    @lib.pipeline_def(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def make():
        return lib.fn.external_source(source=lambda: [arr(2, 3), arr(1, 3, start=9)],
                                      layout="HW")

    pipe = make()
    pipe.build()
    (out,) = pipe.run()
    return out


CASES = _cases()


def _describe_outputs(outs: Any) -> list:
    described = []
    for tl in outs:
        dtype = tl.dtype
        samples = [np.asarray(tl.at(i)) for i in range(len(tl))]
        described.append({
            "shapes": [list(s.shape) for s in samples],
            "dtype": getattr(dtype, "name", str(dtype)),
            "layout": tl.layout(),
            "values": [s.astype(np.float64).ravel().tolist() for s in samples],
        })
    return described


def builtin_bases(e: BaseException) -> list[str]:
    """The builtin exception classes ``e`` is an instance of, most specific first."""
    return [k.__name__ for k in type(e).__mro__
            if getattr(builtins, k.__name__, None) is k and k not in (BaseException, object)]


def outcome(lib: Lib, case: Any) -> dict:
    """What running the case does: {"runs": [outputs per run]} or, where it stopped,
    {"runs": [...], "stage": ..., "error": type name, "bases": builtin classes}."""
    runs: list = []
    stage = "define"
    pipe = None
    try:
        source = isinstance(case, Source)
        kwargs = dict(case.kwargs)
        if source:
            kwargs["source"] = case.source
        else:
            kwargs.setdefault("name", "x")
        depth = 1

        @lib.pipeline_def(batch_size=case.batch_size, num_threads=1, device_id=None,
                          prefetch_queue_depth=depth, **(case.pipe if source else {}))
        def make():
            out = lib.fn.external_source(**kwargs)
            return tuple(out) if isinstance(out, list) else out

        pipe = make()
        stage = "build"
        pipe.build()
        for _ in range(case.runs):
            if source:
                stage = "run"
                outs = pipe.run()
            elif case.by_run:
                stage = "run"
                outs = pipe.run(x=case.data())
            else:
                stage = "feed"
                pipe.feed_input("x", case.data(), layout=case.layout)
                stage = "run"
                outs = pipe.run()
            runs.append(_describe_outputs(outs))
    except BaseException as e:  # noqa: BLE001  (StopIteration and all: the outcome is data)
        return {"runs": runs, "stage": stage, "error": type(e).__name__,
                "bases": builtin_bases(e), "message": str(e)[:300]}
    finally:
        close = getattr(pipe, "close", None)
        if close is not None:
            close()
    return {"runs": runs}
