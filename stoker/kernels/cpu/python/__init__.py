"""CPU work of the python family (``stoker/operators/python/``): handing samples to a user's
Python function as NumPy arrays, torch tensors or DLPack capsules, and reading its results
back as NumPy arrays (``calls``)."""
