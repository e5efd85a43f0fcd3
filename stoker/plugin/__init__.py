"""Framework plugins: PyTorch iterators now; JAX and TensorFlow follow the same bookkeeping
(``stoker.plugin.base``). Each framework is imported only by its own module."""
