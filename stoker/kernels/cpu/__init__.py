"""CPU kernels: numpy (and later numba/OpenCV) functions on plain arrays."""
