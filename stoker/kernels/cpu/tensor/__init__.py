"""CPU kernels of the tensor family (``stoker/operators/tensor/``): plain numpy.

``tensor`` (conversions, reshape, transpose, cat/stack, one-hot, indexing), ``window``
(pad and slice windows), ``arith`` (DALI's type promotion and element-wise arithmetic),
``stats`` (normalize's reductions and normalization).
"""
