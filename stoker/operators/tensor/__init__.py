"""Tensor operators: types and copies, shapes, joins, windows, arithmetic, indexing, statistics.

Operators: fn.cast, fn.cast_like, fn.copy, fn.shapes, fn.get_property, fn.constant,
fn.one_hot, fn.reshape, fn.reinterpret, fn.transpose, fn.expand_dims, fn.squeeze, fn.cat,
fn.stack, fn.pad, fn.slice, fn.normalize, fn.reductions.min, fn.reductions.max,
fn.reductions.sum, fn.reductions.mean, fn.reductions.mean_square, fn.reductions.rms,
fn.reductions.std_dev, fn.reductions.variance, fn.zeros, fn.ones, fn.full, fn.zeros_like,
fn.ones_like, fn.full_like, fn.batch_permutation, fn.permute_batch.

Hidden (DataNode methods make them): _arith (``a + b``, ``stoker.math``), _subscript
(``node[...]``), _to_device (``.gpu()``, ``.cpu()``); and the conditionals'
(``enable_conditionals=True``): _conditional.split, _conditional.merge, _conditional.not_,
_conditional.validate_logical.

Modules: ``tensor`` (types, copies, shapes, properties, constants, one-hot, device moves),
``shape`` (reshape, reinterpret, transpose, expand_dims, squeeze), ``join`` (cat, stack,
pad), ``slicing`` (slice), ``arithmetic``, ``subscript``, ``normalize`` (mean/stddev
normalization), ``conditional`` (the split and merge of ``if`` on DataNodes),
``reductions`` (fn.reductions.*), ``constructors`` (zeros, ones, full and their _like
forms), ``batch_order`` (batch_permutation, permute_batch). CPU kernels:
``stoker/kernels/cpu/tensor/``; GPU kernels: ``stoker/kernels/gpu/tensor/``; tests:
``tests/tensor/``.
"""
