"""The hidden operators of conditionals (``@pipeline_def(enable_conditionals=True)``).

``_conditional.split`` divides a batch by a per-sample condition into the samples where it
holds and those where it does not; ``_conditional.merge`` puts a variable's two halves
back in the batch's order; ``_conditional.not_`` and ``_conditional.validate_logical``
are ``not`` and the checks of ``and``/``or`` on DataNodes. The rewrite of the user's
function that calls them: stoker/pipeline/conditionals/; the scopes: graph/conditionals.py.
A condition must be one scalar per sample (any number type; nonzero is true), as DALI
2.4 requires; ``not``/``and``/``or`` take boolean scalars only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import GraphError, SampleError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema

_COND = [np.array(True), np.array(False), np.array(True)]
_DATA = [np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32), np.arange(5, dtype=np.int32)]


def _where(branching: Any, op: str = "") -> str:
    at = f"the `if` at {branching.where}" if branching is not None else "the `if`"
    return f"{at} ({op})" if op else at


def condition_mask(values: Any, branching: Any, op: str = "") -> np.ndarray:
    """One bool per sample of a condition's values; a non-scalar sample is refused."""
    if isinstance(values, np.ndarray) and values.ndim == 1:  # dense scalars: one pass
        return values.astype(bool)
    mask = np.empty(len(values), bool)
    for j, v in enumerate(values):
        v = np.asarray(v)
        if v.ndim != 0:
            raise SampleError(
                f"{_where(branching, op)}: its condition must be one scalar per sample (a 0-d "
                f"value such as `x[0] > 1`), but sample {j} has shape {v.shape}; reduce it "
                "first (compare one element, or fn.reductions)",
                op=op or "if", where=getattr(branching, "where", ""))
        mask[j] = bool(v)
    return mask


# Below this many bytes, a branch's samples of one shape and type are handed on as one
# array: the branch's operators then take their batch kernels (one call, not one per
# sample). Measured on 64 samples of 32x32x3 uint8 behind an if/else: 3.0 ms a batch as
# lists, ~1 ms stacked. Larger samples stay a list, not copied.
STACK_BYTES = 1 << 20


def _take(values: Any, mask: np.ndarray) -> Any:
    if isinstance(values, np.ndarray):
        return values[mask]
    part = [v for v, m in zip(values, mask, strict=True) if m]
    if part and sum(v.nbytes for v in part) <= STACK_BYTES:
        first = part[0]
        if all(v.shape == first.shape and v.dtype == first.dtype for v in part):
            return np.stack(part)
    return part


class SplitOp:
    """Runs on the whole batch: the samples where the condition holds, then the others."""

    vectorized = False

    def __init__(self, op: Any, pipeline: Any = None):
        self.branching = op.args.get("_branching")
        self.name = op.schema.fn_name

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        data, condition = ins
        mask = condition_mask(condition, self.branching, self.name)
        return _take(data, mask), _take(data, ~mask)


class MergeOp:
    """Runs on the whole batch: each sample from the branch its condition chose."""

    vectorized = False

    def __init__(self, op: Any, pipeline: Any = None):
        self.branching = op.args.get("_branching")
        self.variable = op.args.get("_variable") or "a variable"
        self.name = op.schema.fn_name

    def run_batch(self, ins: list, argv: dict, bctx: Any) -> tuple:
        true_part, false_part, condition = ins
        mask = condition_mask(condition, self.branching, self.name)
        if len(true_part) != int(mask.sum()) or len(false_part) != len(mask) - int(mask.sum()):
            raise SampleError(f"{_where(self.branching, self.name)}: {self.variable} has "
                              f"{len(true_part)} + {len(false_part)} samples from its branches "
                              f"for a batch of {len(mask)}", op=self.name)
        if len(true_part) and len(false_part):
            a, b = np.asarray(true_part[0]), np.asarray(false_part[0])
            if a.dtype != b.dtype or a.ndim != b.ndim:
                where = _where(self.branching, self.name)
                raise SampleError(
                    f"{where}: Divergent data found in different branches: {self.variable} is "
                    f"{a.dtype} ({a.ndim}-d) in the true branch and {b.dtype} ({b.ndim}-d) in "
                    "the false one; both branches must give the same type and number of "
                    "dimensions (their samples merge into one batch)",
                    op=self.name, where=getattr(self.branching, "where", ""))
        if isinstance(true_part, np.ndarray) and isinstance(false_part, np.ndarray) and \
                true_part.shape[1:] == false_part.shape[1:] and \
                true_part.dtype == false_part.dtype:
            out = np.empty((len(mask), *true_part.shape[1:]), true_part.dtype)
            out[mask], out[~mask] = true_part, false_part
            return (out,)
        parts = (iter(false_part), iter(true_part))
        return ([next(parts[int(m)]) for m in mask],)


def _merge_layout(in_layouts: list, args: dict) -> Any:
    a, b = in_layouts[0], in_layouts[1]
    if type(a) is str and type(b) is str and a and b and a != b:
        variable = args.get("_variable") or "a variable"
        raise GraphError(f"{_where(args.get('_branching'))}: {variable} has layout {a!r} in "
                         f"the true branch and {b!r} in the false one; both branches must "
                         "give the same layout")
    return a or b


def _check_logical(x: np.ndarray, args: dict) -> None:
    side = args.get("side") or "the"
    if x.ndim != 0 or x.dtype != np.bool_:
        what = f"a {x.ndim}-d value" if x.ndim else f"a value of type {x.dtype}"
        raise TypeError(f"`{args['expression']}` takes one boolean scalar per sample (as "
                        f"DALI requires; compare to get one, e.g. `x[0] > 1`), got {what} as "
                        f"{side} operand")


def _not_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    if ins[0].ndim != 0:  # any number type is fine for `not`, as in DALI
        raise TypeError(f"`not` takes one scalar per sample (compare to get one, e.g. "
                        f"`x[0] > 1`), got a {ins[0].ndim}-d value")
    return np.logical_not(ins[0])


def _validate_kernel(ins: list, args: dict, ctx: Any) -> np.ndarray:
    _check_logical(ins[0], args)
    return ins[0]


register(OpSchema(
    name="_conditional.split",
    doc="Splits a batch by a per-sample condition: (samples where true, samples where false).",
    inputs=(Input("input", "The data to split."), Input("predicate", "One scalar per sample.")),
    args=(Arg("_branching", "any", None, "The `if` it serves (graph/conditionals.py)."),),
    num_outputs=2, stage="batch", instance=SplitOp,
    layout=lambda ls, a: [ls[0], ls[0]],
    examples=(
        Example(inputs=(_DATA, _COND)),
        Example(inputs=(_DATA, [np.array([1, 0])] * 3), raises=SampleError,
                match="must be one scalar per sample"),
    ),
))

register(OpSchema(
    name="_conditional.merge",
    doc="Merges a variable's values from the two branches of an `if` in the batch's order.",
    inputs=(Input("true_input", "Samples of the true branch."),
            Input("false_input", "Samples of the false branch."),
            Input("predicate", "The condition, one scalar per sample of the whole batch.")),
    args=(Arg("_branching", "any", None, "The `if` it serves (graph/conditionals.py)."),
          Arg("_variable", "str", None, "The variable merged, for error messages.")),
    stage="batch", instance=MergeOp, layout=_merge_layout,
    examples=(
        Example(inputs=(_DATA, _DATA, [np.array(True)] * 3), raises=SampleError,
                match="samples from its branches"),
    ),
))

register(OpSchema(
    name="_conditional.not_",
    doc="`not` of a scalar per sample (nonzero is true).",
    inputs=(Input("input", "One scalar per sample."),),
    kernel=_not_kernel, dtype=lambda d, a: np.bool_,
    examples=(
        Example(inputs=(_COND,)),
        Example(inputs=([np.array(1, np.int32)] * 2,)),
        Example(inputs=([np.zeros(2, np.int32)] * 2,), raises=SampleError,
                match="got a 1-d value"),
    ),
))

register(OpSchema(
    name="_conditional.validate_logical",
    doc="Checks an operand of `and`/`or`: one boolean scalar per sample.",
    inputs=(Input("input", "An operand of `and` or `or`."),),
    args=(Arg("expression", "str", "and", "The expression checked.", choices=("and", "or")),
          Arg("side", "str", "left", "Which operand.", choices=("left", "right"))),
    kernel=_validate_kernel,
    examples=(
        Example(inputs=(_COND,)),
        Example(inputs=([np.zeros(2, bool)] * 2,), raises=SampleError,
                match="got a 1-d value as left operand"),
    ),
))
