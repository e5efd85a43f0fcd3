"""What ``fn.external_source`` accepts: the rules its arguments are checked by at the call
(the kinds of source, ``cycle``, ``parallel``), its layout rule, and how the parameters of
a callback are counted (``positional_params``).
"""

from __future__ import annotations

import inspect
from typing import Any

from stoker.errors import ArgumentError, ArgumentTypeError
from stoker.graph.layouts import Pending

# cycle's values -> what the end of an iterable means.
CYCLE = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet", "raise": "raise"}


def positional_params(source: Any) -> int:
    """How many positional parameters a callback has. As in DALI, parameters with defaults
    count too, so ``lambda x=x: ...`` is called with an argument."""
    try:
        params = inspect.signature(source).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 1
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def check_args(args: dict) -> None:
    src, cycle = args.get("source"), args.get("cycle")
    if cycle is not None and not isinstance(cycle, bool) and cycle not in CYCLE:
        raise ArgumentError(f"fn.external_source: argument 'cycle' must be one of False, True, "
                            f"'no', 'quiet', 'raise', got {cycle!r}")
    if src is not None and not callable(src) and not hasattr(src, "__iter__"):
        raise ArgumentTypeError(f"fn.external_source: argument 'source' must be a callable, an "
                                f"iterable or a generator function, got {type(src).__name__}")
    if src is None and args.get("num_outputs") is not None:
        raise ArgumentError("fn.external_source: argument 'num_outputs' needs a 'source'; to "
                            "feed several inputs with feed_input, use one external_source "
                            "for each (as in DALI)")
    is_gen_fn = inspect.isgeneratorfunction(src)
    if cycle is not None and callable(src) and not is_gen_fn:
        raise ArgumentError("fn.external_source: argument 'cycle' applies only to an iterable or "
                            "a generator function source, not to a callable")
    if CYCLE.get(cycle) in ("quiet", "raise") and inspect.isgenerator(src):
        raise ArgumentTypeError("fn.external_source: a generator object cannot be cycled; pass "
                                "the generator function itself")
    if args.get("parallel"):
        if src is None or not (callable(src) or hasattr(src, "__iter__")):
            raise ArgumentError("fn.external_source: parallel=True needs a source")
        if callable(src) and not is_gen_fn and positional_params(src) != 1:
            raise ArgumentTypeError("fn.external_source: with parallel=True the callback must "
                                    "take exactly one argument (SampleInfo, or BatchInfo/int "
                                    "with batch=True)")
        if is_gen_fn and args.get("batch") is False:
            raise ArgumentTypeError("fn.external_source: with parallel=True a generator "
                                    "function needs batch=True")


def declared_layouts(in_layouts: list, args: dict) -> Any:
    layout = args.get("layout")
    n = args.get("num_outputs") or 1
    layouts = list(layout) if isinstance(layout, list | tuple) else [layout] * n
    # Without a declared layout, each batch's comes with the data (stoker/graph/layouts.py).
    return [layout or Pending("") for layout in layouts]
