"""GPU kernels of the detection family (``stoker/operators/detection/``): none yet."""
