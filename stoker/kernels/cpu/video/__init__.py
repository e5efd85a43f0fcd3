"""CPU video kernels: PyAV decoding of chosen frames."""
