"""Kernels: the work itself, per backend. A kernel knows nothing of graphs or threads."""
