"""GPU arithmetic expressions (``_arith`` nodes) on torch tensors.

The result type is the CPU's (``kernels/cpu/tensor/arith.py``: DALI's promotion table, typed
literals), and so are the integer rules: division and remainder truncate toward zero and
refuse a zero divisor, a negative integer exponent gives 0, bool +, -, * are or, xor, and.
torch implements no arithmetic on uint16/uint32: those compute in int64 and wrap back
(the same bits as the CPU's wrapping arithmetic); uint64 arithmetic is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from stoker.kernels.cpu.tensor import arith as A
from stoker.kernels.gpu import common as G

_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "fdiv": torch.true_divide,
           "min": torch.minimum, "max": torch.maximum, "atan2": torch.atan2,
           "bitand": torch.bitwise_and, "bitor": torch.bitwise_or,
           "bitxor": torch.bitwise_xor, "eq": torch.eq, "neq": torch.ne, "lt": torch.lt,
           "leq": torch.le, "gt": torch.gt, "geq": torch.ge}
_UNARY = {"sqrt": torch.sqrt, "exp": torch.exp, "log": torch.log, "log2": torch.log2,
          "log10": torch.log10, "floor": torch.floor, "ceil": torch.ceil, "sin": torch.sin,
          "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh, "asin": torch.asin,
          "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh,
          "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
          "abs": torch.abs, "fabs": torch.abs, "minus": torch.neg,
          "bitnot": torch.bitwise_not, "rsqrt": lambda x: 1.0 / torch.sqrt(x),
          "cbrt": lambda x: torch.sign(x) * x.abs().pow(1.0 / 3.0)}
_EMULATED = {np.dtype(np.uint16): 0xFFFF, np.dtype(np.uint32): 0xFFFFFFFF}


def _binary(op: str, a: torch.Tensor, b: torch.Tensor, work: np.dtype) -> torch.Tensor:
    integer = work.kind in "iu"
    if op == "div":
        if integer:
            A._check_divisor(b, "//")
            return torch.div(a, b, rounding_mode="trunc")
        return torch.true_divide(a, b)
    if op == "mod":
        if integer:
            A._check_divisor(b, "%")
        return torch.fmod(a, b)
    if op in ("pow", "fpow"):
        if op == "pow" and integer:
            neg = b < 0
            out = torch.pow(a, torch.where(neg, torch.zeros_like(b), b))
            return torch.where(neg, torch.zeros_like(out), out)
        return torch.pow(a, b)
    if work.kind == "b" and op in ("add", "sub", "mul"):
        return {"add": torch.logical_or, "sub": torch.logical_xor,
                "mul": torch.logical_and}[op](a, b)
    return _BINARY[op](a, b)


def compute(op: str, operands: list[Any], dts: list[np.dtype], sample_axis: bool,
            device: Any) -> torch.Tensor:
    """``arith.apply`` on tensors and typed scalars (``dts``: every operand's type)."""
    out_type = A.result_type(op, dts)
    work = A.work_type(op, dts, out_type)
    if work == np.uint64 or out_type == np.uint64:
        raise TypeError(f"arithmetic '{op}' on uint64 is not supported on the GPU")
    mask = _EMULATED.get(np.dtype(work))
    compute_t = torch.int64 if mask is not None else G.torch_dtype(work)
    tensors = []
    for x, t in zip(operands, dts, strict=True):
        if not isinstance(x, torch.Tensor):
            with np.errstate(over="ignore"):  # a float literal beyond float32 is inf
                x = torch.as_tensor(np.asarray(x, dtype=t)).to(device)
        tensors.append(x.to(compute_t))
    ndim = max(t.ndim for t in tensors)
    tensors = [A._align(t, ndim, sample_axis and t.ndim > 0) for t in tensors]
    if len(tensors) == 1:
        res = _UNARY[op](tensors[0])
    elif op == "clamp":
        res = torch.minimum(torch.maximum(tensors[0], tensors[1]), tensors[2])
    else:
        res = _binary(op, tensors[0], tensors[1], np.dtype(work))
    if mask is not None and op not in A.COMPARISON:
        res = res & mask  # wrap as the unsigned type would
    return res.to(G.torch_dtype(out_type))


def arith(ins: list, args: dict, ctx: Any) -> Any:
    op = args["op"]
    dense = all(G.is_dense(x) for x in ins)
    firsts = [x.dtype if G.is_dense(x) else x[0].dtype for x in ins]
    dts = A.with_scalar_types([G.numpy_dtype(d) for d in firsts], args["scalars"])

    def operands(tensors: list) -> list:
        out: list[Any] = list(tensors)
        for pos, value, _ in args["scalars"]:
            out.insert(pos, value)
        return out

    if dense:
        return compute(op, operands(list(ins)), dts, True, ctx.device)
    n = len(ins[0])
    results = [compute(op, operands([x[j] for x in ins]), dts, False, ctx.device)
               for j in range(n)]
    return G.as_batch(results)
