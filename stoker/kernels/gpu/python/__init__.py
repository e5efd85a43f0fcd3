"""GPU kernels of the python family (``stoker/operators/python/``): none. A Python function
runs on the CPU (CuPy/torch.cuda functions on GPU data are not supported yet)."""
