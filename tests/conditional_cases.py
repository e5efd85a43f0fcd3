"""Conditional (``enable_conditionals=True``) cases, shared by the DALI recorder
(tests/data/record/conditionals.py) and the replay (tests/tensor/test_conditional_vs_dali.py).

Each case is a module-level function ``case(fn, types, x, r)`` called from the pipeline
function (so the library rewrites it too, as it rewrites helpers the pipeline calls):
``x`` is int32 ``[j]`` for sample j = 0..5 of a batch of 6, ``r`` a ragged float32
sample of shape (j + 1,) holding ``j``.
"""

from __future__ import annotations

import numpy as np

BATCH = 6


def source_x(info):
    return np.array([info.idx_in_batch], np.int32)


def source_r(info):
    return np.full((info.idx_in_batch + 1,), info.idx_in_batch, np.float32)


def double(a):
    return a * 2


def seven():
    return np.array([7], np.int32)


def if_else(fn, types, x, r):
    if x[0] > 2:
        y = x + 10
    else:
        y = x - 10
    return y


def elif_chain(fn, types, x, r):
    v = x[0]
    if v == 0:
        y = x * 0
    elif v == 1:
        y = x * 100
    elif v < 4:
        y = x * 1000
    else:
        y = x
    return y


def nested(fn, types, x, r):
    v = x[0]
    if v >= 2:
        if v >= 4:
            y = x + 1000
        else:
            y = x + 100
    else:
        if v == 0:
            y = x - 7
        else:
            y = x
    return y


def no_else(fn, types, x, r):
    y = x
    if x[0] % 2 == 1:
        y = x * 3
    return y


def two_variables(fn, types, x, r):
    if x[0] > 1:
        a = x + 1
        b = fn.cast(x, dtype=types.FLOAT) * 0.5
    else:
        a = x - 1
        b = fn.cast(x * 2, dtype=types.FLOAT)
    return a, b


def tuple_and_dict(fn, types, x, r):
    if x[0] < 3:
        pair = (x, x + 1)
        named = {"k": x * 5}
    else:
        pair = (x * 2, x)
        named = {"k": x - 5}
    return pair[0], pair[1], named["k"]


def logical_and(fn, types, x, r):
    v = x[0]
    if v >= 1 and v < 4:
        y = x + 1
    else:
        y = x - 1
    return y


def logical_or_not(fn, types, x, r):
    v = x[0]
    if v == 0 or not v < 4:
        y = x + 1
    else:
        y = x - 1
    return y


def logical_values(fn, types, x, r):
    c = x[0] > 2
    d = x[0] == 1
    return not c, c or d, c and d, not x[0]


def int_condition(fn, types, x, r):
    if x[0] % 3:
        y = x + 1
    else:
        y = x - 1
    return y


def all_false(fn, types, x, r):
    if x[0] > 50:
        y = x + 1
    else:
        y = x - 1
    return y


def all_true(fn, types, x, r):
    if x[0] >= 0:
        y = x + 1
    else:
        y = x - 1
    return y


def python_condition(fn, types, x, r):
    flag = True
    if flag:
        y = x + 1
    else:
        y = x - 1
    return y


def loop_of_ifs(fn, types, x, r):
    out = x
    for i in range(3):
        if x[0] > i:
            out = out + 1
    return out


def helper(x):
    if x[0] > 2:
        return x + 1
    return x - 1


def helper_with_returns(fn, types, x, r):
    return helper(x)


def ragged(fn, types, x, r):
    if x[0] % 2 == 0:
        y = r * 2
    else:
        y = fn.cat(r, r)
    return y


def constant_in_branch(fn, types, x, r):
    if x[0] > 3:
        y = fn.constant(idata=[7, 8], dtype=types.INT32)
    else:
        y = fn.constant(idata=[1, 2], dtype=types.INT32)
    return y


def python_function_in_branch(fn, types, x, r):
    if x[0] > 3:
        y = fn.python_function(x, function=double)
        z = fn.python_function(function=seven)
    else:
        y = x
        z = x
    return y, z


def condition_output(fn, types, x, r):
    c = x[0] > 1
    if c:
        y = x + 1
    else:
        y = x
    return c, y


# Errors.
def non_scalar_condition(fn, types, x, r):
    if x > 1:
        y = x + 1
    else:
        y = x - 1
    return y


def one_branch_only(fn, types, x, r):
    if x[0] > 1:
        y = x + 1
    return y  # noqa: F821


def divergent(fn, types, x, r):
    if x[0] > 1:
        y = (x, x)
    else:
        y = x
    return y


def and_with_int(fn, types, x, r):
    a = x[0] > 1
    return a and 5


def dtype_mismatch(fn, types, x, r):
    if x[0] > 1:
        y = x + 1
    else:
        y = fn.cast(x, dtype=types.FLOAT)
    return y


def ndim_mismatch(fn, types, x, r):
    if x[0] > 1:
        y = x + 1
    else:
        y = x[0]
    return y


def constant_other_branch(fn, types, x, r):
    if x[0] > 1:
        y = x + 1
    else:
        y = 5
    return y


def conditional_expression(fn, types, x, r):
    return x + 1 if x[0] > 1 else x - 1


def while_loop(fn, types, x, r):
    while x[0] > 1:
        x = x - 1
    return x


def chained_comparison(fn, types, x, r):
    if 1 < x[0] < 4:
        y = x + 1
    else:
        y = x - 1
    return y


CASES = {f.__name__: f for f in (
    if_else, elif_chain, nested, no_else, two_variables, tuple_and_dict, logical_and,
    logical_or_not, logical_values, int_condition, all_false, all_true, python_condition,
    loop_of_ifs, helper_with_returns, ragged, constant_in_branch, python_function_in_branch,
    condition_output, non_scalar_condition, one_branch_only, divergent, and_with_int,
    dtype_mismatch, ndim_mismatch, constant_other_branch, conditional_expression, while_loop,
    chained_comparison)}
