"""Questions asked of DALI's batch and sample objects, and of constant pipeline outputs,
shared by the recorder (tests/data/record/tensor_api.py, run with DALI 2.4) and the
replay against stoker (tests/test_tensor_api_vs_dali.py).

Each probe is one Python expression, evaluated with fresh objects made by ``objects()``
from the library under test; its answer is turned into plain JSON by ``describe()``, so
that DALI's recorded answer and stoker's can be compared as values. An expression that
raises is described by the builtin exception classes it is an instance of.
"""

from __future__ import annotations

import builtins
import ctypes
from typing import Any

import numpy as np

PROBES = [
    # -- samples: at(i) is a numpy array, [i] and iteration give TensorCPU objects
    "dense.at(1)",
    "ragged.at(1)",
    "dense[1]",
    "dense[-1]",
    "ragged[0]",
    "[type(t).__name__ for t in dense]",
    "[t.shape() for t in ragged]",
    "dense[4]",
    "dense[1].shape()",
    "dense[1].ndim()",
    "dense[1].dtype",
    "dense[1].layout()",
    "dense[1].source_info()",
    "dense[1].get_property('source_info')",
    "(lambda t: t.as_cpu() is t)(dense[1])",
    "np.asarray(dense[1])",
    "np.array(ragged[1])",
    "callable(dense[0].shape)",
    "hasattr(dense[0], '__array_interface__')",
    "hasattr(dense[0], '__dlpack__')",
    "len(dense[0])",
    # -- the batch
    "len(dense)",
    "dense.as_cpu() is dense",
    "dense.as_tensor()",
    "dense.as_tensor().layout()",
    "nolayout.as_tensor().layout()",
    "dense.as_array()",
    "np.asarray(dense)",
    "ragged.as_array()",
    "ragged.as_tensor()",
    "dense.shape()",
    "ragged.shape()",
    "dense.layout()",
    "nolayout.layout()",
    "dense.dtype",
    "ragged.dtype",
    "dense.ndim()",
    "dense.is_dense_tensor()",
    "ragged.is_dense_tensor()",
    "dense.dtype == types.FLOAT",
    "dense.as_reshaped_tensor([4, 6])",
    # -- constructors
    "TensorCPU(np.arange(6).reshape(2, 3))",
    "TensorCPU(np.arange(6).reshape(2, 3), 'AB').layout()",
    "TensorCPU(np.zeros((2, 3)), 'ABC')",
    "TensorCPU(np.float32(3))",
    "TensorCPU(np.zeros(2, bool)).dtype",
    "TensorCPU(np.zeros(2, np.float16)).dtype",
    "TensorListCPU(np.arange(6, dtype=np.int16).reshape(3, 2), 'X')",
    "TensorListCPU(np.zeros((3, 2)), 'XY')",
    "TensorListCPU(np.zeros((3, 2))).layout()",
    "TensorListCPU([np.zeros((2, 2)), np.zeros((3, 2))], 'AB')",
    "TensorListCPU([TensorCPU(np.ones((2, 2), np.float32)), TensorCPU(np.zeros((1, 2), "
    "np.float32))])",
    "TensorListCPU([np.zeros((2, 3)), np.zeros(2, np.int32)])",
    "TensorListCPU([np.zeros((2, 3)), np.zeros(2)])",
    "TensorListCPU([]).shape()",
    "TensorListCPU([]).dtype",
    "len(TensorListCPU([]))",
    "TensorListCPU(dense, 'QQ').layout()",
    "(TensorListCPU(dense, 'QQ'), dense.layout())[1]",
    "TensorListCPU.broadcast(TensorCPU(np.ones(2, np.int8), 'A'), 3)",
    # -- changing in place
    "(lambda t: (t.squeeze(), t.shape(), t.layout()))(cube)",
    "(lambda t: (t.squeeze(2), t.shape(), t.layout()))(cube)",
    "(lambda t: (t.squeeze(-3), t.shape(), t.layout()))(cube)",
    "(lambda t: (t.squeeze(1), t.shape()))(cube)",
    "TensorCPU(np.zeros((1, 3), np.float32)).squeeze(5)",
    "(lambda t: (t.set_layout('XY'), t.layout()))(TensorCPU(np.zeros((2, 2))))",
    "TensorCPU(np.zeros((2, 2))).set_layout('X')",
    "(dense.set_layout('PQ'), dense.layout(), dense[0].layout())",
    "dense.set_layout('P')",
    "(lambda t: (t.reinterpret(types.INT32), t.dtype)[1])(TensorCPU(np.zeros(2, np.float32)))",
    # -- memory
    "(lambda a: (dense[1].copy_to_external(ctypes.c_void_p(a.ctypes.data)), a)[1])"
    "(np.zeros((2, 3), np.float32))",
    "(lambda a: (dense.copy_to_external(ctypes.c_void_p(a.ctypes.data)), a)[1])"
    "(np.zeros((4, 2, 3), np.float32))",
    "dense[1].data_ptr() == np.asarray(dense[1]).ctypes.data",
]


def objects(TensorCPU: type, TensorListCPU: type, types: Any) -> dict[str, Any]:
    """Fresh objects each probe runs with, from the library under test."""
    return {
        "np": np, "ctypes": ctypes, "types": types,
        "TensorCPU": TensorCPU, "TensorListCPU": TensorListCPU,
        "dense": TensorListCPU(np.arange(24, dtype=np.float32).reshape(4, 2, 3), "HW"),
        "nolayout": TensorListCPU(np.arange(6, dtype=np.int32).reshape(3, 2)),
        "ragged": TensorListCPU([np.zeros((2, 3), np.uint8), np.ones((4, 3), np.uint8)], "HW"),
        "cube": TensorCPU(np.zeros((1, 3, 1), np.float32), "ABC"),
    }


def ask(expr: str, env: dict[str, Any]) -> Any:
    """The expression's answer as JSON, or {"raises": [builtin exception names]}."""
    try:
        value = eval(expr, dict(env))  # noqa: S307 (the probes are this module's own text)
    except Exception as e:
        return {"raises": builtin_bases(e)}
    return describe(value)


def builtin_bases(e: BaseException) -> list[str]:
    names = ("TypeError", "ValueError", "RuntimeError", "IndexError", "KeyError",
             "AttributeError", "OverflowError")
    return [n for n in names if isinstance(e, getattr(builtins, n))]


def describe(value: Any) -> Any:
    """Plain JSON for a probe's answer: batches, tensors and arrays by kind, type, shape,
    layout and values; enums by name; containers element by element."""
    kind = type(value).__name__
    if kind in ("TensorCPU", "TensorListCPU"):
        out: dict[str, Any] = {"kind": kind, "dtype": value.dtype.name, "layout": value.layout()}
        if kind == "TensorCPU":
            out["shape"] = value.shape()
            out["values"] = np.asarray(value).tolist()
        else:
            out["shape"] = [list(s) for s in value.shape()]
            out["values"] = [np.asarray(value.at(i)).tolist() for i in range(len(value))]
        return out
    if isinstance(value, np.ndarray):
        return {"kind": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape),
                "values": value.tolist()}
    if hasattr(value, "name") and type(value).__name__ in ("DALIDataType", "_DALIDataType"):
        return {"kind": "DALIDataType", "name": value.name}
    if isinstance(value, list | tuple):
        return [describe(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return {"kind": kind}


# Values a pipeline function returns beside a DataNode: what DALI makes of each (a constant
# output of some type and shape, or a TypeError at build()).
OUTPUT_FORMS = {
    "int": "3", "negative int": "-7", "int beyond int32": "2 ** 40", "float": "2.5",
    "bool": "True", "list of ints": "[1, 2, 3]", "list of floats": "[1.0, 2.5]",
    "ints and floats": "[1, 2.5]", "list of bools": "[True, False]", "empty list": "[]",
    "tuple": "(1, 2)", "nested list": "[[1, 2], [3, 4]]",
    "float64 array": "np.array([1.0, 2.0])", "int64 array": "np.arange(3)",
    "uint8 array": "np.arange(3, dtype=np.uint8)", "float16 array": "np.ones(2, np.float16)",
    "2-D array": "np.arange(4, dtype=np.int16).reshape(2, 2)",
    "float32 scalar": "np.float32(1.5)", "int16 scalar": "np.int16(4)",
    "0-d array": "np.array(5.0)",
    "Constant(float)": "types.Constant(1.5)", "Constant(int)": "types.Constant(3)",
    "Constant(int, UINT8)": "types.Constant(3, dtype=types.UINT8)",
    "Constant(int16 array)": "types.Constant(np.arange(4, dtype=np.int16))",
    "Constant(0-d array)": "types.Constant(np.array(2.0, np.float32))",
    "Constant with layout": "types.Constant(np.zeros((2, 2), np.float32), layout='HW')",
    "str": "'abc'", "bytes": "b'ab'", "None": "None",
}


def output_outcome(pipeline_def: Any, fn: Any, types: Any, expr: str) -> Any:
    """What a pipeline returning ``(uniform, <expr>)`` gives as its second output, or the
    stage ("call"/"build"/"run") and builtin types of the error."""
    value = eval(expr, {"np": np, "types": types})  # noqa: S307 (this module's own text)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def make():
        return fn.random.uniform(shape=[1], seed=1), value

    stage = "call"
    try:
        pipe = make()
        stage = "build"
        pipe.build()
        stage = "run"
        out = pipe.run()[1]
    except Exception as e:
        return {"stage": stage, "raises": builtin_bases(e)}
    return describe(out)
