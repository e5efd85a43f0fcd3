"""``@pipeline_def``: turns a graph-building function into a pipeline factory.

Pipeline arguments may be given to the decorator or at the call; the call wins. Keyword
arguments the ``Pipeline`` constructor does not take go to the function, and a function
parameter that shares a pipeline argument's name (``batch_size``) receives it too.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from stoker.errors import ArgumentTypeError, GraphError
from stoker.pipeline.pipeline import Pipeline

PIPELINE_ARGS = frozenset(
    name for name in inspect.signature(Pipeline.__init__).parameters if name != "self"
)


def pipeline_def(fn: Callable | None = None, *, enable_conditionals: bool = False,
                 **pipeline_kwargs: Any) -> Any:
    if enable_conditionals:
        raise NotImplementedError(
            "pipeline_def: enable_conditionals=True (Python if/else on DataNodes) is not "
            "supported by stoker yet; compute a mask with comparisons and arithmetic instead"
        )
    unknown = set(pipeline_kwargs) - PIPELINE_ARGS
    if unknown:
        raise ArgumentTypeError(f"pipeline_def: unknown pipeline argument(s) {sorted(unknown)}")

    def decorate(func: Callable) -> Callable[..., Pipeline]:
        params = inspect.signature(func).parameters

        @functools.wraps(func)
        def create(*args: Any, **kwargs: Any) -> Pipeline:
            ctor = dict(pipeline_kwargs)
            fn_kwargs = {}
            for key, value in kwargs.items():
                if key in PIPELINE_ARGS:
                    ctor[key] = value
                    if key in params:
                        fn_kwargs[key] = value
                else:
                    fn_kwargs[key] = value
            for key in PIPELINE_ARGS & set(params):
                if key not in fn_kwargs and key in ctor:
                    fn_kwargs[key] = ctor[key]
            pipe = Pipeline(**ctor)
            with pipe:
                outputs = func(*args, **fn_kwargs)
                if outputs is None:
                    raise GraphError(f"@pipeline_def function {func.__name__!r} returned None; "
                                     "it must return its output DataNode(s)")
                if not isinstance(outputs, tuple | list):
                    outputs = (outputs,)
                pipe.set_outputs(*outputs)
            return pipe

        create._is_pipeline_def = True  # type: ignore[attr-defined]
        return create

    return decorate(fn) if fn is not None else decorate
