"""GPU kernels of the tensor family (``stoker/operators/tensor/``), on torch tensors.

``tensor`` (cast, cast_like, transpose, pad), ``arith`` (arithmetic and stoker.math),
``normalize``.
"""
