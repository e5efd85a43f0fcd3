"""``@pipeline_def``: turns a graph-building function into a pipeline factory, and
``do_not_convert``, DALI's mark for functions that conditionals must leave alone.
With ``enable_conditionals=True`` (at the decorator or the call) the function traced is
its rewrite by stoker/pipeline/conditionals/, where ``if`` tests per-sample DataNodes.

The keyword arguments are split as DALI 2.4 splits them, at the call: one named like a
parameter of the function goes to the function only (also when a ``Pipeline`` argument
has the same name: the function's parameter "shadows" it, and the pipeline keeps the
decorator's value), the others go to the ``Pipeline`` constructor, over the decorator's.
What the function returns becomes the pipeline's outputs: a tuple is several outputs,
anything else (a DataNode, a number, a list of numbers) one.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from stoker.errors import ArgumentTypeError, GraphError
from stoker.pipeline.conditionals import NO_CONVERT, convert
from stoker.pipeline.pipeline import Pipeline

PIPELINE_ARGS = frozenset(
    name for name in inspect.signature(Pipeline.__init__).parameters if name != "self"
)
# DALI's call also drops these when the function does not take them.
_DROPPED_AT_CALL = ("debug", "enable_conditionals")


def pipeline_def(fn: Callable | None = None, *, enable_conditionals: bool = False,
                 **pipeline_kwargs: Any) -> Any:
    def decorate(func: Callable) -> Callable[..., Pipeline]:
        if getattr(func, _NO_CONVERT, False):
            raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")
        spec = inspect.getfullargspec(func)
        params = frozenset(spec.args) | frozenset(spec.kwonlyargs)
        converted: list[Callable] = []  # the rewritten function, made once when first needed

        def traced(conditionals: bool) -> Callable:
            if not conditionals:
                return func
            if not converted:
                converted.append(_converted(func))
            return converted[0]

        @functools.wraps(func)
        def create(*args: Any, **kwargs: Any) -> Pipeline:
            if spec.varkw is not None:
                raise TypeError(
                    f"pipeline_def: the graph-defining function {func.__name__!r} takes "
                    f"**{spec.varkw}: variadic keyword arguments (**kwargs) are not allowed "
                    "there; name each argument")
            ctor, fn_kwargs, conditionals = _split(func.__name__, params, pipeline_kwargs,
                                                   kwargs, enable_conditionals)
            pipe = Pipeline(**ctor)
            with pipe:
                outputs = traced(conditionals)(*args, **fn_kwargs)
                if outputs is None:
                    raise GraphError(f"@pipeline_def function {func.__name__!r} returned None; "
                                     "it must return its output DataNode(s)")
                pipe.set_outputs(*(outputs if isinstance(outputs, tuple) else (outputs,)))
            return pipe

        create._is_pipeline_def = True  # type: ignore[attr-defined]
        return create

    return decorate(fn) if fn is not None else decorate


def _split(name: str, params: frozenset, decorator_kwargs: dict, call_kwargs: dict,
           conditionals: bool) -> tuple[dict, dict, bool]:
    """(Pipeline constructor arguments, function keyword arguments, whether conditionals are
    on) of one call."""
    ctor = dict(decorator_kwargs)
    fn_kwargs = {}
    for key, value in call_kwargs.items():
        if key in params:
            fn_kwargs[key] = value
            if key in PIPELINE_ARGS:
                warnings.warn(f"pipeline_def: the argument {key!r} of {name!r} shadows a "
                              "Pipeline constructor argument of the same name; it goes to "
                              "the function only", stacklevel=3)
        elif key in _DROPPED_AT_CALL:
            if key == "enable_conditionals":
                conditionals = bool(value)
        else:
            ctor[key] = value
    if "max_batch_size" in ctor:  # stoker's: DALI's name for the batch size elsewhere
        size = ctor.pop("max_batch_size")
        if ctor.get("batch_size", size) != size:
            raise ArgumentTypeError(f"pipeline_def: batch_size={ctor['batch_size']!r} and "
                                    f"max_batch_size={size!r} disagree; give one of them")
        ctor["batch_size"] = size
    for key in ctor:
        if key not in PIPELINE_ARGS:
            close = difflib.get_close_matches(key, [*PIPELINE_ARGS, *params], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ArgumentTypeError(f"pipeline_def: {key!r} is neither a Pipeline argument "
                                    f"nor a parameter of {name!r}{hint}")
    return ctor, fn_kwargs, conditionals


def _converted(func: Callable) -> Callable:
    try:
        return convert(func)
    except (OSError, TypeError, ValueError, SyntaxError) as e:
        raise GraphError(f"pipeline_def: enable_conditionals=True rewrites the source of "
                         f"{func.__name__!r}, which cannot be read or parsed here ({e}); "
                         "define the pipeline function in a file") from e


_NO_CONVERT = NO_CONVERT


def do_not_convert(func: Callable | None = None) -> Any:
    """DALI's mark for a function that conditionals (``enable_conditionals=True``) must not
    rewrite (its ``if`` statements stay Python's); as in DALI, a pipeline definition cannot
    carry it (ValueError)."""
    if func is None:
        return do_not_convert
    if getattr(func, "_is_pipeline_def", False):
        raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")
    try:
        setattr(func, _NO_CONVERT, True)
    except (AttributeError, TypeError):
        pass  # a callable without attributes (a builtin) cannot be a pipeline definition
    return func
