"""GPU kernels of the video family (``stoker/operators/video/``): none yet."""
