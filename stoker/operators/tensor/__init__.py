"""Tensor operators: types and copies, shapes, joins, windows, arithmetic, indexing, statistics.

Operators: fn.cast, fn.cast_like, fn.copy, fn.shapes, fn.get_property, fn.constant,
fn.one_hot, fn.reshape, fn.reinterpret, fn.transpose, fn.expand_dims, fn.squeeze, fn.cat,
fn.stack, fn.pad, fn.slice, fn.normalize, fn.reductions.sum, fn.reductions.mean,
fn.reductions.min, fn.reductions.max.

Hidden (DataNode methods make them): _arith (``a + b``, ``stoker.math``), _subscript
(``node[...]``), _to_device (``.gpu()``, ``.cpu()``); and the conditionals'
(``enable_conditionals=True``): _conditional.split, _conditional.merge, _conditional.not_,
_conditional.validate_logical.

Modules: ``tensor`` (types, copies, shapes, properties, constants, one-hot, device moves),
``shape`` (reshape, reinterpret, transpose, expand_dims, squeeze), ``join`` (cat, stack,
pad), ``slicing`` (slice), ``arithmetic``, ``subscript``, ``normalize`` (mean/stddev
normalization), ``conditional`` (the split and merge of ``if`` on DataNodes). CPU kernels:
``stoker/kernels/cpu/tensor/``; GPU kernels: ``stoker/kernels/gpu/tensor/``; tests:
``tests/tensor/``.
"""
