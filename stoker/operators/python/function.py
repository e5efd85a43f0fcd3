"""``fn.python_function``, ``fn.torch_python_function``, ``fn.dl_tensor_python_function``.

The function sees one sample per call (``batch_processing=False``) or whole batches (lists
of samples per input), as NumPy arrays, torch tensors or DLPack capsules. As in DALI, the
operator is never pruned (the function may be there for its side effects), the function
runs on one thread at a time (the batch's producer, holding the GIL anyway), and
``Pipeline.current()`` inside it is the pipeline that runs it. Its defaults for
``batch_processing`` are those DALI 2.4 applies (measured: tests/data/python_function.json):
per sample for python_function and torch_python_function, per batch for
dl_tensor_python_function. An exception inside the function, or a result of the wrong
count or type, is a ``SampleError`` naming the operator, the pipeline line that created it,
the function and the sample.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

from stoker.errors import ArgumentError, SampleError
from stoker.graph.node import pipeline_stack
from stoker.kernels.cpu.python.calls import call_batch, call_sample
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, Input, OpSchema


def _describe_function(function: Any) -> str:
    code = getattr(function, "__code__", None)
    name = getattr(function, "__qualname__", type(function).__name__)
    if code is None:
        return name
    return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


class PythonFunctionOp:
    """Calls the function for one batch, on the thread that runs the batch stages."""

    view = "numpy"

    def __init__(self, op: Any, pipeline: Any = None):
        self.op = op
        self.function = op.args["function"]
        self.n_out = op.args["num_outputs"]
        self.batch_processing = op.args["batch_processing"]
        self.layouts = _layouts([], op.args)
        self.vectorized = False

    def _fail(self, what: str, e: BaseException) -> SampleError:
        op = self.op
        return SampleError(
            f"{op.describe()}: function {_describe_function(self.function)} {what}: "
            f"{type(e).__name__}: {e}", op=op.schema.fn_name, where=op.where)

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        outs = self._call(ins, bctx)
        for k, (layout, samples) in enumerate(zip(self.layouts, outs, strict=True)):
            bad = next((s for s in samples if layout and s.ndim != len(layout)), None)
            if bad is not None:  # DALI refuses it at run time too
                raise SampleError(
                    f"{self.op.describe()}: output {k} has layout {layout!r} "
                    f"(output_layouts), but the function returned a {bad.ndim}-d array",
                    op=self.op.schema.fn_name, where=self.op.where)
        return outs

    def _call(self, ins: list, bctx: Any) -> tuple:
        n = len(ins[0]) if ins else bctx.size
        samples = [[np.asarray(x) for x in batch] for batch in ins]
        pipe = bctx.pipeline
        stack = pipeline_stack()
        if pipe is not None:  # Pipeline.current() inside the function is this pipeline
            stack.append(pipe)
        try:
            if self.batch_processing:
                try:
                    return call_batch(self.function, self.view, samples, self.n_out, n)
                except Exception as e:
                    raise self._fail(f"failed on batch {bctx.iteration}", e) from e
            outs: list[list[np.ndarray]] = [[] for _ in range(self.n_out)]
            for j in range(n):
                try:
                    res = call_sample(self.function, self.view, [s[j] for s in samples],
                                      self.n_out)
                except Exception as e:
                    raise self._fail(f"failed on sample {j} of batch {bctx.iteration}", e) \
                        from e
                for lst, r in zip(outs, res, strict=True):
                    lst.append(r)
            return tuple(outs)
        finally:
            if pipe is not None and stack and stack[-1] is pipe:
                stack.pop()


class TorchFunctionOp(PythonFunctionOp):
    view = "torch"


class DLTensorFunctionOp(PythonFunctionOp):
    view = "dlpack"


def _check(name: str, args: dict) -> None:
    if not callable(args["function"]):
        raise ArgumentError(f"fn.{name}: argument 'function' must be callable, got "
                            f"{type(args['function']).__name__}")
    layouts = args.get("output_layouts")
    if layouts is not None and not isinstance(layouts, str) and not (
            isinstance(layouts, list | tuple) and all(isinstance(v, str) for v in layouts)):
        raise ArgumentError(f"fn.{name}: argument 'output_layouts' must be a layout string "
                            f"or a list of them, got {layouts!r}")


def _layouts(in_layouts: list, args: dict) -> list:
    n = args["num_outputs"]
    given = args.get("output_layouts")
    if given is None:
        return [""] * n
    if isinstance(given, str):  # one layout for every output, as DALI reads a bare string
        return [given] * n
    if len(given) > n:
        raise ArgumentError(f"argument 'output_layouts' names {len(given)} layouts for "
                            f"{n} outputs")  # (the registry adds the operator's name)
    return [*given, *[""] * (n - len(given))]


def _double(x: np.ndarray) -> np.ndarray:
    return x * 2


def _swap(a: np.ndarray, b: np.ndarray) -> tuple:
    return b, a


def _torch_double(t: Any) -> Any:
    return t * 2


def _dl_identity(capsules: list) -> list:
    return capsules


def _not_callable_example(**extra: Any) -> Example:
    return Example(args={"function": 3, **extra}, inputs=(_DATA,), raises=ArgumentError,
                   match="must be callable")


_DATA = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((4, 3), np.float32)]
_COMMON_DOC = (
    "num_outputs: how many outputs the function returns (a tuple when more than one, None "
    "when 0). batch_processing: the function gets whole batches, a list of samples per "
    "input, and returns lists of samples or arrays whose first axis is the batch.")


def _args(batch_default: bool, *extra: Arg) -> tuple[Arg, ...]:
    return (
        Arg("function", "any", REQUIRED, "The Python callable to run."),
        Arg("num_outputs", "int", 1, "Number of outputs of the function.", range=(0, None)),
        Arg("batch_processing", "bool", batch_default,
            "Whether the function gets whole batches (lists of samples) instead of one "
            "sample per call."),
        # "any", not "strs": a bare string (one layout for all outputs) must stay one.
        Arg("output_layouts", "any", None, "Layouts of the outputs: one string for all, or "
            "a list (shorter than num_outputs leaves the rest without layout)."),
        *extra,
    )


def _schema(name: str, doc: str, batch_default: bool, instance: Any, examples: tuple,
            *extra: Arg) -> OpSchema:
    return OpSchema(
        name=name, doc=f"{doc} {_COMMON_DOC}",
        inputs=(Input("input", "Inputs handed to the function, in order.", optional=True,
                      variadic=True),),
        args=_args(batch_default, *extra),
        num_outputs=lambda a: a["num_outputs"], stage="batch", instance=instance,
        preserved=True, check=functools.partial(_check, name), layout=_layouts, examples=examples,
        # One output is a bare DataNode, several (or none) a list, as DALI returns them.
        result=lambda out: out[0] if isinstance(out, list) and len(out) == 1 else out)


register(_schema(
    "python_function",
    "Runs a Python function on the data: NumPy arrays in, NumPy arrays out.",
    False, PythonFunctionOp,
    (Example(args={"function": _double}, inputs=(_DATA,)),
     Example(args={"function": _swap, "num_outputs": 2, "output_layouts": ["AB"]},
             inputs=(_DATA, _DATA)),
     Example(args={"function": lambda xs: [x + 1 for x in xs], "batch_processing": True},
             inputs=(_DATA,)),
     _not_callable_example(),
     Example(args={"function": _double, "num_outputs": -1}, inputs=(_DATA,),
             raises=ArgumentError, match="'num_outputs'"))))

register(_schema(
    "torch_python_function",
    "Runs a Python function on the data as torch tensors (sharing memory with the batch).",
    False, TorchFunctionOp,
    (Example(args={"function": _torch_double}, inputs=(_DATA,)),
     _not_callable_example())))

register(_schema(
    "dl_tensor_python_function",
    "Runs a Python function on the data as DLPack capsules, in and out.",
    True, DLTensorFunctionOp,
    (Example(args={"function": _dl_identity}, inputs=(_DATA,)),
     _not_callable_example()),
    Arg("synchronize_stream", "bool", True, "GPU only in DALI (waits for DALI's stream "
        "before the call); accepted and unused on the CPU.")))
