"""Graph IR: operator nodes and the DataNodes that flow between them, plus the tracing context.

Calling an ``fn.*`` function records an ``OpNode``; its outputs are ``DataNode`` objects
that support arithmetic (recorded as more nodes), indexing and device moves. The pipeline
that is "current" (``with pipe:``) owns the nodes created while it is entered.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from stoker.errors import GraphError

_creation = itertools.count()
_local = threading.local()
_STOKER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pipeline_stack() -> list[Any]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current_pipeline() -> Any:
    stack = pipeline_stack()
    return stack[-1] if stack else None


def current_scope() -> tuple:
    """The conditional branch being traced (stoker/graph/conditionals.py); () = none."""
    return getattr(_local, "scope", ())


def set_scope(scope: tuple) -> tuple:
    """Enters ``scope``; returns the one it replaces (to restore it after)."""
    old = current_scope()
    _local.scope = scope
    return old


def user_frame() -> str:
    """``file:line`` of the innermost caller outside stoker: the line that created the op."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_STOKER_DIR + os.sep):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


class Recorder:
    """How a DataNode's methods (arithmetic, indexing, device moves, shape) record operator
    calls. graph/ sits below the operators and imports none of them: stoker/operators fills
    these in as it loads, which it has done before any DataNode exists (only an operator
    call makes one)."""

    call_op: Callable[[str, list, dict], Any]  # fn.<name>(*inputs, **kwargs)
    expression: Callable[..., Any]  # an arithmetic node: (op, *operands)
    subscript: Callable[[Any, Any], Any]  # node[index]


RECORDER = Recorder()


class OpNode:
    """One operator call in a pipeline graph."""

    __slots__ = ("schema", "inputs", "args", "arg_nodes", "device", "outputs", "_pipeline",
                 "where", "order", "name", "scope")

    def __init__(self, schema: Any, inputs: list[DataNode], args: dict[str, Any],
                 arg_nodes: dict[str, DataNode], device: str, pipeline: Any, name: str | None):
        self.schema = schema
        self.inputs = inputs
        self.args = args
        self.arg_nodes = arg_nodes
        self.device = device
        self.pipeline = pipeline
        self.where = user_frame()
        self.order = next(_creation)
        self.name = name or f"__{schema.name.replace('.', '_')}_{self.order}"
        self.outputs: list[DataNode] = []
        # The conditional branch it runs in (graph/conditionals.py): () = the whole batch.
        self.scope: tuple = current_scope()

    # The pipeline is held weakly: it owns its ops, and a strong back-reference would keep
    # an unreferenced pipeline (and its threads) alive until the next garbage collection.
    @property
    def pipeline(self) -> Any:
        return self._pipeline() if self._pipeline is not None else None

    @pipeline.setter
    def pipeline(self, pipe: Any) -> None:
        self._pipeline = weakref.ref(pipe) if pipe is not None else None

    def upstream(self) -> list[DataNode]:
        return [*self.inputs, *self.arg_nodes.values()]

    def describe(self) -> str:
        # An operator that fusion put in place of a chain names the user's operators.
        what = self.args.get("_describe") or self.schema.fn_name
        return f"{what} (created at {self.where})"

    def __repr__(self) -> str:
        return f"OpNode({self.schema.fn_name}, name={self.name!r})"


class DataNode:
    """A symbolic batch: an output of an operator inside a pipeline definition."""

    __slots__ = ("op", "index", "device", "layout", "__weakref__")

    def __init__(self, op: OpNode, index: int, device: str, layout: str | None):
        self.op = op
        self.index = index
        self.device = device
        self.layout = layout

    @property
    def name(self) -> str:
        return self.op.name if len(self.op.outputs) <= 1 else f"{self.op.name}[{self.index}]"

    def __repr__(self) -> str:
        return f"DataNode(name={self.name!r}, device={self.device!r})"

    def __bool__(self) -> bool:
        raise TypeError(
            "a DataNode has no truth value while the pipeline is being defined; for `if` "
            "statements on per-sample values use @pipeline_def(enable_conditionals=True) "
            "(`a if c else b`, `while` and loops on DataNodes are not supported there "
            "either), or compute a mask with comparisons and stoker.math"
        )

    # Identity, as object's (``__eq__`` below builds a comparison node, which would leave
    # the class unhashable): the C slot, since the executor's dicts are keyed by nodes
    # and a Python ``__hash__`` was 0.2 ms of every batch's serial work.
    __hash__ = object.__hash__

    # -- device moves and shape ------------------------------------------------------------
    def gpu(self) -> DataNode:
        if self.device == "gpu":
            return self
        return RECORDER.call_op("_to_device", [self], {"device": "gpu"})

    def cpu(self) -> DataNode:
        if self.device == "cpu":
            return self
        # Runs in the batch's GPU part (after the GPU operators); its output is a CPU node,
        # which the executor downloads to host memory.
        out = RECORDER.call_op("_to_device", [self], {"device": "gpu"})
        out.device = "cpu"
        return out

    def shape(self, dtype: Any = None, device: str = "cpu") -> DataNode:
        args = {} if dtype is None else {"dtype": dtype}
        return RECORDER.call_op("shapes", [self], args)

    def source_info(self) -> DataNode:
        return RECORDER.call_op("get_property", [self], {"key": "source_info"})

    def __getitem__(self, index: Any) -> DataNode:
        return RECORDER.subscript(self, index)

    def __iter__(self) -> Any:
        # (Without it, Python iterates through __getitem__: 0, 1, 2, ... recording a
        # subscript each, forever. DALI raises TypeError too.)
        raise TypeError("a DataNode is not iterable (an operator with several outputs "
                        "returns them as a list; one output is one DataNode)")

    # -- arithmetic: recorded as nodes by stoker.operators.tensor.arithmetic ---------------
    def _bin(self, op: str, other: Any, reverse: bool = False) -> DataNode:
        record = RECORDER.expression
        return record(op, other, self) if reverse else record(op, self, other)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("fdiv", o)
    def __rtruediv__(self, o): return self._bin("fdiv", o, True)
    def __floordiv__(self, o): return self._bin("div", o)
    def __rfloordiv__(self, o): return self._bin("div", o, True)
    def __mod__(self, o): return self._bin("mod", o)
    def __rmod__(self, o): return self._bin("mod", o, True)
    def __pow__(self, o): return self._bin("pow", o)
    def __rpow__(self, o): return self._bin("pow", o, True)
    def __and__(self, o): return self._bin("bitand", o)
    def __rand__(self, o): return self._bin("bitand", o, True)
    def __or__(self, o): return self._bin("bitor", o)
    def __ror__(self, o): return self._bin("bitor", o, True)
    def __xor__(self, o): return self._bin("bitxor", o)
    def __rxor__(self, o): return self._bin("bitxor", o, True)
    def __eq__(self, o): return self._bin("eq", o)  # type: ignore[override]
    def __ne__(self, o): return self._bin("neq", o)  # type: ignore[override]
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("leq", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("geq", o)

    def __neg__(self):
        return RECORDER.expression("minus", self)

    def __pos__(self):
        return self

    def __invert__(self):
        return RECORDER.expression("bitnot", self)

    def __abs__(self):
        return RECORDER.expression("abs", self)


def check_same_pipeline(schema: Any, nodes: list[DataNode]) -> Any:
    """The pipeline the new op belongs to; a node from another pipeline is a graph error."""
    pipe = current_pipeline()
    for node in nodes:
        owner = node.op.pipeline
        if owner is None:
            continue
        if pipe is None:
            pipe = owner
        elif owner is not pipe:
            raise GraphError(
                f"{schema.fn_name}: input {node.name!r} belongs to another pipeline; "
                "a DataNode can only be used in the pipeline that created it"
            )
    return pipe
